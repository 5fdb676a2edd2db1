"""Experience for other tasks, as a trial reads and writes it: lessons of a `kind` other than a
task's own reflections (exemplars, rules, the cheatsheet, distilled items, skills), kept in the
run's memory with provenance. Each function takes the trial (its memory, settings, scope and
trace) and the rules its design passes; the board's logic is reflexion.trial.board's `apply`,
and what is here only reads, writes and traces.

Two shapes:
- kept, and recalled by similarity (`exemplar`, `item`: `keep` here, recall in
  RecordedTrial.recall), the k nearest of a kind from EVERY task (a design's pick may narrow
  them: `bank` keeps the items of the one nearest task);
- a board shared by a strategy and seed, all of it in every prompt (`rule`, `cheatsheet`),
  changed by `BoardEdit`s under the board's rules (`revise`).

Under --order stream the tasks before this one are over, so their experience is visible; in a
parallel run only other runs' (a shared or frozen store) is. With --frozen-memory nothing is
stored or changed: recall only.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import Any, Protocol

from reflexion.core.lesson_records import (
    Board,
    BoardEdit,
    Kind,
    Order,
    Recalled,
    RecallScope,
    Reflection,
)
from reflexion.core.protocols import Env, Memory, Merging, Revising
from reflexion.core.records import Attempt, Task
from reflexion.trial import gate
from reflexion.trial.board import (
    Author,
    Change,
    Similar,
    apply,
    by_embedding,
    in_order,
    lesson_id,
    near_copy,
)
from reflexion.trial.gate import Replay
from reflexion.trial.hygiene import placeholder
from reflexion.trial.provenance import left_by_rule, provenance
from reflexion.trial.settings import TrialSettings

BOARD_MAX = 50  # the most lessons of a board one recall reads
PEERS = 8  # the kept lessons a new one is compared with for a near-copy (keep's `distinct`)


class Counted(Protocol):
    @property
    def recalled(self) -> dict[int, list[str]]:
        """Episode -> the ids of the lessons it was shown (for their credit)."""
        ...


class TrialState(Protocol):
    """What these functions use of a trial (reflexion.trial.recorded.RecordedTrial)."""

    @property
    def memory(self) -> Memory | None: ...
    @property
    def settings(self) -> TrialSettings: ...
    @property
    def strategy(self) -> str: ...
    @property
    def env(self) -> Env: ...
    @property
    def task(self) -> Task: ...
    @property
    def seed(self) -> int: ...
    @property
    def counters(self) -> Counted: ...
    @property
    def replay(self) -> Replay | None: ...

    def scope(self, episode: int, kind: Kind = Kind.REFLECTION) -> RecallScope: ...

    def note(self, episode: int, kind: str, output: str, data: dict[str, Any]) -> None: ...


def author(trial: TrialState, episode: int) -> Author:
    """The trial as the writer of new lessons at `episode`."""
    who = (trial.settings.run_id, trial.strategy, trial.env.name, trial.task, trial.seed)
    return Author(*who, episode)


def similarity(memory: Memory | None) -> Similar | None:
    """Similarity by the memory's embedding model; None for a store without one."""
    embedder = getattr(memory, "embedder", None)
    return by_embedding(embedder.embed) if embedder is not None else None


async def board(trial: TrialState, kind: Kind, episode: int, rules: Board) -> list[Reflection]:
    """The board as this episode may read it (see board.in_order), traced as a recall."""
    if trial.memory is None:
        return []
    scope = trial.scope(episode, kind)
    hits = await asyncio.to_thread(trial.memory.recall, "", scope, BOARD_MAX)
    rule = await asyncio.to_thread(left_by_rule, trial.memory, "", scope, BOARD_MAX)
    run_id = trial.settings.run_id
    lessons = [h.reflection for h in hits]
    if any(r.run_id == run_id for r in lessons):
        rule = []  # this run's own board hides every other run's anyway
    shown = in_order(lessons, rules, run_id)
    trial.counters.recalled.setdefault(episode, []).extend(r.id for r in shown)
    # subtle: a board changes as the run goes on, so each lesson's text as shown is kept
    # (`memory audit` reruns the episode with it)
    hits_shown = [provenance(Recalled(r), trial.task.id, run_id) | {"text": r.text} for r in shown]
    data = {"hits": hits_shown, "kind": kind, "board": True, "env": trial.env.name}
    data |= {"leave_task_out": scope.leave_task_out}
    data |= {"same_task_left_out": rule} if rule else {}
    trial.note(episode, "recall", "\n".join(r.text for r in shown), data)
    return shown


async def keep(
    trial: TrialState,
    kind: Kind,
    text: str,
    attempt: Attempt,
    key: str,
    distinct: float | None,
    rules: Board,
) -> Reflection | None:
    """Store one lesson of `kind` made from `attempt` (see Trial.keep)."""
    if trial.memory is None or not text.strip() or refused(trial, kind, text, attempt.episode):
        return None
    writer = author(trial, attempt.episode)
    # subtle: the text is in the id, since one reply may give two items (bank); the same
    # text again is the same lesson, and a re-run of the trial gives the same id
    rid = lesson_id(writer.who, attempt.episode, kind, text.strip())
    lesson = writer.lesson(kind, text, rid, attempt)
    lesson = dataclasses.replace(lesson, votes=rules.new_votes, key=key.strip())
    if trial.settings.frozen_memory:
        trial.note(attempt.episode, "remember", "", {"frozen": True, "kind": kind})
        return None
    copy = await _copy_of(trial, lesson, distinct) if distinct is not None else None
    if copy is not None:  # nothing changes in the memory, so a resume decides the same
        data = {"kind": kind, "duplicate_of": copy.reflection.id, "similarity": copy.similarity}
        trial.note(attempt.episode, "remember", "", data)
        return None
    return await store(trial, lesson, None, {"id": lesson.id, "kind": kind})


def refused(trial: TrialState, kind: Kind, text: str, episode: int) -> bool:
    """Whether `text` is the prompt's blanks copied back (`hygiene.placeholder`), not a
    lesson: then it is not stored, and the trace's `unparsed` step says why."""
    why = placeholder(text)
    if why:
        trial.note(episode, "unparsed", text.strip(), {"kind": kind, "refused": why})
    return bool(why)


async def _copy_of(trial: TrialState, lesson: Reflection, distinct: float) -> Recalled | None:
    """A kept lesson of the same kind and the same key (a bank item: the same question),
    whose TEXT is at least `distinct` similar to `lesson`'s by the memory's embedding model;
    None without an embedding store. Only the same key: a recall that shows one task's
    items would never show a note that was skipped as a copy of another task's."""
    assert trial.memory is not None
    similar = similarity(trial.memory)
    if similar is None:
        return None
    scope = trial.scope(lesson.episode + 1, Kind(lesson.kind))
    query = lesson.key or lesson.text
    hits = await asyncio.to_thread(trial.memory.recall, query, scope, PEERS)
    same = [h.reflection for h in hits if h.reflection.key == lesson.key]
    return await asyncio.to_thread(near_copy, lesson.text, same, distinct, similar)


async def store(
    trial: TrialState, lesson: Reflection, twin: Recalled | None, data: dict[str, Any]
) -> Reflection:
    """Add `lesson` to the memory, or merge it into `twin`, a kept near-copy (its provenance
    joins that lesson's); a reflection and a design's lesson alike. The trace line comes
    first: if we die between the two, the resumed run sees the id in the set-aside trace and
    deletes it, where the other order could leave a stray lesson."""
    memory = trial.memory
    assert memory is not None
    if not lesson.status and (replay := gated(trial, lesson)) is not None:  # not judged yet
        verdict = await gate.judge(trial, replay, lesson.episode, [lesson])  # type: ignore[arg-type]
        (lesson,) = gate.judged([lesson], verdict, replay.k)
        data |= {"status": lesson.status}
        twin = None if lesson.rejected else twin  # a rejected lesson is kept apart
    if twin is not None and isinstance(memory, Merging):
        data |= {"merged_into": twin.reflection.id, "similarity": twin.similarity}
    trial.note(lesson.episode, "remember", lesson.text, data)
    if twin is not None and isinstance(memory, Merging):
        await asyncio.to_thread(memory.merge, twin.reflection.id, lesson)
        return twin.reflection
    await asyncio.to_thread(memory.add, [lesson])
    return lesson


def gated(trial: TrialState, lesson: Reflection) -> Replay | None:
    """The trial's gate, if `lesson` passes through it: a lesson of a kind the design shows, and
    a reflection only in global scope (in task scope it is for the task's own next attempt)."""
    own = lesson.kind == Kind.REFLECTION
    replay = trial.replay
    if replay is None or (own and trial.settings.scope != "global"):
        return None
    return replay if lesson.kind in replay.kinds else None


def boards_change(trial: TrialState) -> bool:
    """Whether `revise` can change a board (see Trial.boards_change)."""
    s = trial.settings
    return s.order == Order.STREAM and not s.frozen_memory and isinstance(trial.memory, Revising)


async def revise(
    trial: TrialState,
    kind: Kind,
    edits: Sequence[BoardEdit],
    episode: int,
    among: Sequence[Reflection] | None,
    rules: Board,
) -> list[str]:
    """Apply `edits` to this trial's board of `kind` under `rules` (or to the lessons `among`,
    the ones an episode was shown, when given), writing and tracing each change; a bad edit is
    skipped and said."""
    if trial.memory is None:
        return []
    if not boards_change(trial):
        why = "the memory cannot revise"
        if trial.settings.order != Order.STREAM:  # concurrent tasks would race on one board
            why = "a board changes only under --order stream"
        if trial.settings.frozen_memory:
            why = "frozen memory"
        notes = [f"skipped {e.op}: {why}" for e in edits]
    else:
        lessons = among if among is not None else await board(trial, kind, episode, rules)
        how = (kind, lessons, edits, rules, author(trial, episode), similarity(trial.memory))
        _, changes, notes = await asyncio.to_thread(apply, *how)
        if changes and trial.replay is not None:
            changes, said = await _gated_changes(trial, trial.replay, episode, changes)
            notes.append(said)
        for change in changes:
            await _write(trial, episode, change)
    trial.note(episode, "revised", "\n".join(notes), {"kind": kind})
    return notes


async def _write(trial: TrialState, episode: int, change: Change) -> None:
    """One change, traced with the lesson as it was (so a resume can undo it), then made."""
    memory = trial.memory
    assert isinstance(memory, Revising)
    lesson = change.after or change.before
    assert lesson is not None
    before = change.before.to_dict() if change.before else None
    trial.note(episode, "revise", change.note, {"id": lesson.id, "before": before})
    if change.after is None:
        await asyncio.to_thread(memory.retire, lesson.id, change.note)
    else:
        await asyncio.to_thread(memory.revise, change.after, change.note)


async def _gated_changes(
    trial: TrialState, replay: Replay, episode: int, changes: Sequence[Change]
) -> tuple[list[Change], str]:
    """A reply's changes to a board, judged together by the gate (the edits of one reply build
    on each other): all made, or none, each new text then kept marked rejected."""
    added = [c.after for c in changes if c.after is not None]
    replaced = [c.before.id for c in changes if c.before is not None]
    verdict = await gate.judge(trial, replay, episode, added, replaced)  # type: ignore[arg-type]
    if verdict.admitted:
        made = [
            Change(
                c.before, gate.judged([c.after], verdict, replay.k)[0] if c.after else None, c.note
            )
            for c in changes
        ]
        return made, verdict.said()
    for c in changes:
        if c.after is not None and (c.before is None or c.after.text != c.before.text):
            (kept,) = gate.judged([c.after], verdict, replay.k)
            kept = dataclasses.replace(kept, id=lesson_id(c.after.id, episode, kept.status))
            await store(
                trial, kept, None, {"id": kept.id, "kind": kept.kind, "status": kept.status}
            )
    return [], verdict.said()
