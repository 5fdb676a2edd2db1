"""Experience for other tasks: lessons of a `kind` other than a task's own reflections
(exemplars, rules, the cheatsheet, distilled items), kept in the run's memory with provenance.

Two shapes:
- kept, and recalled by similarity (`exemplar`, `item`: `keep` here, recall in
  RecordedTrial.recall), the k nearest of a kind from EVERY task (a design's pick may narrow
  them: `bank` keeps the items of the one nearest task);
- a board shared by a strategy and seed, all of it in every prompt (`rule`, `cheatsheet`),
  changed by `BoardEdit`s under the board's rules, which its design's module sets
  (reflexion.strategies.learning.Board: how many, how long, the votes, one sheet). Each change
  is kept in the lesson's history (Revising) and in the trace, with the lesson as it was, so a
  resume can undo what an interrupted trial changed.

Under --order stream the tasks before this one are over, so their experience is visible; in a
parallel run only other runs' (a shared or frozen store) is. With --frozen-memory nothing is
stored or changed: recall only.

    >>> lesson_id("run/insights/0/q1", 2, "rule") == lesson_id("run/insights/0/q1", 2, "rule")
    True
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from reflexion.core.lesson_records import BoardEdit, Kind, Recalled, RecallScope, Reflection
from reflexion.core.protocols import Memory, Merging, Revising
from reflexion.core.records import Attempt, Score, Task
from reflexion.strategies import board_rules
from reflexion.strategies.learning import Board
from reflexion.trial.hygiene import placeholder, same_wording, vague
from reflexion.trial.provenance import left_by_rule, provenance
from reflexion.trial.settings import TrialSettings

BOARD_MAX = 50  # the most lessons of a board one recall reads
PEERS = 8  # the kept lessons a new one is compared with for a near-copy (keep's `distinct`)
Log = Callable[..., None]  # the trial's trace writer: (episode, kind, output=..., data=...)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors.

    >>> round(cosine([1.0, 0.0], [1.0, 1.0]), 4)
    0.7071
    """
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norms if norms else 0.0


def lesson_id(*parts: object) -> str:
    """A stable id: the same trial, episode and kind always give the same id (resume-safe)."""
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()[:16]


@dataclass
class Experience:
    """One trial's access to the run's memory for experience kinds (see the module)."""

    memory: Memory | None
    settings: TrialSettings
    strategy: str
    env: str
    task: Task
    seed: int
    log: Log
    recalled: dict[int, list[str]]  # episode -> lesson ids shown (for their credit)
    scope: Callable[[int, Kind], RecallScope]  # what an episode may see (RecordedTrial.scope)
    episode_now: int = 0  # the episode whose edits are being applied (for the trace)

    async def board(self, kind: Kind, episode: int) -> list[Reflection]:
        """The board as this episode may read it: this run's own lessons of `kind`, or where it
        has none yet, those of other runs (a shared or frozen store); most votes first."""
        if self.memory is None:
            return []
        scope = self.scope(episode, kind)
        hits = await asyncio.to_thread(self.memory.recall, "", scope, BOARD_MAX)
        rule = await asyncio.to_thread(left_by_rule, self.memory, "", scope, BOARD_MAX)
        lessons = [h.reflection for h in hits]
        own = [r for r in lessons if r.run_id == self.settings.run_id]
        rule = [] if own else rule  # this run's own board hides every other run's anyway
        board = sorted(own or lessons, key=lambda r: (-r.votes, r.created, r.id))
        if rules(kind).one:  # one sheet: this run's, or the newest inherited one
            board = sorted(own or lessons, key=lambda r: (-r.created, r.id))[:1]
        self.recalled.setdefault(episode, []).extend(r.id for r in board)
        # subtle: a board changes as the run goes on, so each lesson's text as shown is kept
        # (`memory audit` reruns the episode with it)
        run_id = self.settings.run_id
        shown = [provenance(Recalled(r), self.task.id, run_id) | {"text": r.text} for r in board]
        data = {"hits": shown, "kind": kind, "board": True, "env": self.env}
        data |= {"leave_task_out": scope.leave_task_out}
        data |= {"same_task_left_out": rule} if rule else {}
        self.log(episode, "recall", output="\n".join(r.text for r in board), data=data)
        return board

    async def keep(
        self, kind: Kind, text: str, attempt: Attempt, key: str = "", distinct: float | None = None
    ) -> Reflection | None:
        if self.memory is None or not text.strip() or self.refused(kind, text, attempt.episode):
            return None
        # subtle: the text is in the id, since one reply may give two items (bank); the same
        # text again is the same lesson, and a re-run of the trial gives the same id
        rid = lesson_id(self._who(), attempt.episode, kind, text.strip())
        lesson = self._lesson(kind, text, attempt, rid)
        lesson = dataclasses.replace(lesson, votes=rules(kind).new_votes, key=key.strip())
        if self.settings.frozen_memory:
            self.log(attempt.episode, "remember", output="", data={"frozen": True, "kind": kind})
            return None
        copy = await self._copy_of(lesson, distinct) if distinct is not None else None
        if copy is not None:  # nothing changes in the memory, so a resume decides the same
            data = {"kind": kind, "duplicate_of": copy.reflection.id, "similarity": copy.similarity}
            self.log(attempt.episode, "remember", output="", data=data)
            return None
        return await self.store(lesson, None, {"id": lesson.id, "kind": kind})

    def refused(self, kind: Kind, text: str, episode: int) -> bool:
        """Whether `text` is the prompt's blanks copied back (memory.hygiene.placeholder), not a
        lesson: then it is not stored, and the trace's `unparsed` step says why."""
        why = placeholder(text)
        if why:
            self.log(episode, "unparsed", output=text.strip(), data={"kind": kind, "refused": why})
        return bool(why)

    async def _copy_of(self, lesson: Reflection, distinct: float) -> Recalled | None:
        """A kept lesson of the same kind and the same key (a bank item: the same question),
        whose TEXT is at least `distinct` similar to `lesson`'s by the memory's embedding model;
        None without an embedding store. Only the same key: a recall that shows one task's
        items would never show a note that was skipped as a copy of another task's."""
        assert self.memory is not None
        embedder = getattr(self.memory, "embedder", None)
        if embedder is None:
            return None
        scope = self.scope(lesson.episode + 1, Kind(lesson.kind))
        query = lesson.key or lesson.text
        hits = await asyncio.to_thread(self.memory.recall, query, scope, PEERS)
        same = [h.reflection for h in hits if h.reflection.key == lesson.key]
        return await self._near_copy(lesson.text, same, distinct)

    async def store(
        self, lesson: Reflection, twin: Recalled | None, data: dict[str, Any]
    ) -> Reflection:
        """Add `lesson` to the memory, or merge it into `twin`, a kept near-copy (its provenance
        joins that lesson's); a reflection and a design's lesson alike. The trace line comes
        first: if we die between the two, the resumed run sees the id in the set-aside trace and
        deletes it, where the other order could leave a stray lesson."""
        assert self.memory is not None
        if twin is not None and isinstance(self.memory, Merging):
            data |= {"merged_into": twin.reflection.id, "similarity": twin.similarity}
        self.log(lesson.episode, "remember", output=lesson.text, data=data)
        if twin is not None and isinstance(self.memory, Merging):
            await asyncio.to_thread(self.memory.merge, twin.reflection.id, lesson)
            return twin.reflection
        await asyncio.to_thread(self.memory.add, [lesson])
        return lesson

    @property
    def boards_change(self) -> bool:
        """Whether `revise` can change a board (see Trial.boards_change)."""
        s = self.settings
        return s.order == "stream" and not s.frozen_memory and isinstance(self.memory, Revising)

    async def revise(
        self,
        kind: Kind,
        edits: Sequence[BoardEdit],
        episode: int,
        among: Sequence[Reflection] | None = None,
    ) -> list[str]:
        """Apply `edits` to this trial's board of `kind` (or to the lessons `among`, the ones an
        episode was shown, when given); a bad edit is skipped and said."""
        if self.memory is None:
            return []
        self.episode_now = episode
        if not self.boards_change:
            why = "the memory cannot revise"
            if self.settings.order != "stream":  # concurrent tasks would race on one board
                why = "a board changes only under --order stream"
            if self.settings.frozen_memory:
                why = "frozen memory"
            notes = [f"skipped {e.op}: {why}" for e in edits]
        else:
            lessons = among if among is not None else await self.board(kind, episode)
            board = {r.id: r for r in lessons}
            notes = [await self._apply(kind, e, board, episode, n) for n, e in enumerate(edits)]
        self.log(episode, "revised", output="\n".join(notes), data={"kind": kind})
        return notes

    async def _apply(
        self,
        kind: Kind,
        edit: BoardEdit,
        board: dict[str, Reflection],
        episode: int,
        n: int,
        why: str = "",
    ) -> str:
        target = board.get(edit.target or "")
        if edit.op == "replace":
            target = next(iter(board.values()), None)
        # a rewrite of another run's sheet (a shared store) starts this run's own from it
        mine = target is not None and target.run_id == self.settings.run_id
        if edit.op == "add" or (edit.op == "replace" and not mine):
            return await self._add(kind, edit.text, board, episode, n)
        if target is None:
            return f"skipped {edit.op}: no lesson {edit.target!r} on the board"
        if target.run_id != self.settings.run_id:
            return f"skipped {edit.op}: {target.id} belongs to another run"
        votes = target.votes + {"edit": 1, "upvote": 1, "downvote": -1}.get(edit.op, 0)
        text = edit.text.strip() if edit.op in ("edit", "replace") else target.text
        if unfit := _unfit(text, rules(kind)):
            return f"skipped {edit.op} {target.id}: {unfit}"
        if edit.op == "edit" and (twin := await self._restates(text, target, board, kind)):
            # as ExpeL: an edit that restates another rule agrees with that rule, and the list
            # keeps both rules as they were (no second copy)
            agree = BoardEdit("upvote", twin.reflection.id, "")
            why = f" (restated by an edit of {target.id}, {twin.similarity or 0:.2f})"
            return await self._apply(kind, agree, board, episode, n, why)
        after = dataclasses.replace(target, text=text, votes=votes)
        if text != target.text:  # new words: checked again, against the task it was edited on
            flag = vague(text, self.task.prompt, "")
            after = dataclasses.replace(after.edited(self.task.id), flag=flag)
        if rules(kind).drops_at_zero and votes <= 0:
            board.pop(target.id)  # a later line of the same reply cannot bring it back
            return await self._change(target, None, f"{edit.op} {target.id}: 0 votes, dropped")
        board[target.id] = after
        return await self._change(target, after, f"{edit.op} {target.id}: {votes} votes{why}")

    async def _add(
        self, kind: Kind, text: str, board: dict[str, Reflection], episode: int, n: int
    ) -> str:
        text, most = text.strip(), rules(kind).most
        if unfit := _unfit(text, rules(kind)):
            return f"skipped add: {unfit}"
        mine = [r for r in board.values() if r.run_id == self.settings.run_id]
        if most is not None and len(mine) >= most:
            return f"skipped add: the board holds {most} {kind}s"
        if _same_text(text, board.values()):
            return "skipped add: the board holds this text already"
        if twin := await self._near_copy(text, list(board.values()), rules(kind).distinct):
            return f"skipped add: a near-copy of {twin.reflection.id} ({twin.similarity:.2f})"
        attempt = Attempt(episode, "", Score(0.0, False))  # made by a reply, not an answer
        rid = lesson_id(self._who(), episode, kind, n)
        lesson = self._lesson(kind, text, attempt, rid)
        lesson = dataclasses.replace(lesson, votes=rules(kind).new_votes)
        board[rid] = lesson
        return await self._change(None, lesson, f"add {rid}")

    async def _restates(
        self, text: str, target: Reflection, board: dict[str, Reflection], kind: Kind
    ) -> Recalled | None:
        """Another lesson on the board that `text`, an edit of `target`, copies or nearly copies
        (None: none, or the board's rules ask for no such check)."""
        if (distinct := rules(kind).distinct) is None:
            return None
        others = [r for r in board.values() if r.id != target.id]
        if same := _same_text(text, others):
            return Recalled(same, 1.0)
        return await self._near_copy(text, others, distinct)

    async def _near_copy(
        self, text: str, lessons: list[Reflection], distinct: float | None
    ) -> Recalled | None:
        """The lesson on the board most similar to `text`, if at least `distinct` similar by
        the memory's embedding model; None without one, or with no bound."""
        embedder = getattr(self.memory, "embedder", None)
        if embedder is None or distinct is None or not lessons:
            return None
        new, *kept = await asyncio.to_thread(embedder.embed, [text, *(r.text for r in lessons)])
        near = [Recalled(r, cosine(new, v)) for r, v in zip(lessons, kept, strict=True)]
        best = max(near, key=lambda r: r.similarity or 0.0)
        return best if (best.similarity or 0.0) >= distinct else None

    async def _change(self, before: Reflection | None, after: Reflection | None, note: str) -> str:
        """One change, traced with the lesson as it was (so a resume can undo it), then made."""
        assert isinstance(self.memory, Revising)
        lesson = after or before
        assert lesson is not None
        data: dict[str, Any] = {"id": lesson.id, "before": before.to_dict() if before else None}
        self.log(self.episode_now, "revise", output=note, data=data)
        if after is None:
            await asyncio.to_thread(self.memory.retire, lesson.id, note)
        else:
            await asyncio.to_thread(self.memory.revise, after, note)
        return note

    def _who(self) -> str:
        # the seed too: each seed has its own board, and must not overwrite another's lessons
        who = (self.settings.run_id, self.strategy, self.env, self.task.id, self.seed)
        return "/".join(map(str, who))

    def _lesson(self, kind: Kind, text: str, attempt: Attempt, rid: str) -> Reflection:
        s = self.settings
        return Reflection(
            id=rid,
            text=text.strip(),
            run_id=s.run_id,
            strategy=self.strategy,
            env=self.env,
            task_id=self.task.id,
            seed=self.seed,
            episode=attempt.episode,
            score=attempt.score.value,
            created=time.time(),
            kind=str(kind),  # the plain string, as stores hold it
            flag=vague(text, self.task.prompt, attempt.score.feedback),
        )


def rules(kind: Kind) -> Board:
    """The rules of the board of `kind`, as its design's module sets them (none: no limits)."""
    return board_rules(kind) or Board()


def _same_text(text: str, lessons: Iterable[Reflection]) -> Reflection | None:
    """The lesson whose text is `text` in the same words (None: none)."""
    return next((r for r in lessons if same_wording(r.text, text)), None)


def _unfit(text: str, rules: Board) -> str:
    """Why `text` cannot be a lesson on a board with `rules` ("": it can)."""
    if text and not (rules.chars and len(text) > rules.chars):
        return placeholder(text)
    return f"empty or over {rules.chars} characters" if rules.chars else "empty"


def undo_interrupted(steps: Sequence[dict[str, Any]], memory: Memory) -> None:
    """Undo the board changes of trials that were cut off (their `revise` steps, newest first),
    so their re-run counts each vote once: an added lesson goes, a changed one is put back."""
    for step in reversed(steps):
        if step["kind"] != "revise":
            continue
        before = step["data"].get("before")
        if before is None:
            memory.delete([step["data"]["id"]])
        else:
            memory.add([Reflection.from_dict(before)])
