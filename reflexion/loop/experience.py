"""Experience for other tasks: lessons of a `kind` other than a task's own reflections
(exemplars, rules, the cheatsheet, distilled items), kept in the run's memory with provenance.

Two shapes:
- recalled by similarity, the k nearest of a kind from EVERY task (`exemplar`, `item`);
- a board shared by a strategy and seed, all of it in every prompt (`rule`, `cheatsheet`),
  changed by `BoardEdit`s. Each change is kept in the lesson's history (Revising) and in the
  trace, with the lesson as it was, so a resume can undo what an interrupted trial changed.

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
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from reflexion.core.protocols import Memory, Revising
from reflexion.core.records import (
    CHEATSHEET,
    REFLECTION,
    RULE,
    Attempt,
    BoardEdit,
    Message,
    Recalled,
    RecallScope,
    Reflection,
    Score,
    Task,
)
from reflexion.loop.provenance import provenance
from reflexion.loop.trial_settings import TrialSettings

BOARD_MAX = 50  # the most lessons a board may hold (rules beyond are not added)
MAX_RULES = 10  # rules on one board: ExpeL keeps a short list, and a prompt must stay small
NEW_RULE_VOTES = 2  # as ExpeL: a new rule survives one downvote
RULE_CHARS = 300  # a rule is one sentence or two; a longer "rule" is a malformed reply
Log = Callable[..., None]  # the trial's trace writer: (episode, kind, output=..., data=...)


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
    episode_now: int = 0  # the episode whose edits are being applied (for the trace)

    def scope(self, episode: int, kind: str) -> RecallScope:
        s = self.settings
        scope = s.scope if kind == REFLECTION else "global"  # experience is for other tasks
        if kind != REFLECTION and not s.stream:
            episode = 0  # subtle: in a parallel run no task is over, so none of this run's own
        who = (self.env, self.task.id, s.run_id, self.strategy, self.seed, episode)
        return RecallScope(*who, scope, stream=s.stream, kinds=(kind,))

    async def recall(self, episode: int, kind: str) -> list[Recalled]:
        if self.memory is None:
            return []
        scope, k, at = self.scope(episode, kind), self.settings.k, time.time()
        hits = await asyncio.to_thread(self.memory.recall, self.task.prompt, scope, k)
        self.recalled.setdefault(episode, []).extend(h.reflection.id for h in hits)
        data = {"hits": [provenance(h, self.task.id, self.settings.run_id) for h in hits], "at": at}
        data |= {"k": k, "scope": scope.scope, "stream": scope.stream, "env": self.env}
        data |= {"kind": kind}
        text = "\n".join(h.reflection.text for h in hits)
        query = (Message("human", self.task.prompt),)  # what the store was asked
        self.log(episode, "recall", prompt=query, output=text, data=data)
        return hits

    async def board(self, kind: str, episode: int) -> list[Reflection]:
        """The board as this episode may read it: this run's own lessons of `kind`, or where it
        has none yet, those of other runs (a shared or frozen store); most votes first."""
        if self.memory is None:
            return []
        scope = self.scope(episode, kind)
        hits = await asyncio.to_thread(self.memory.recall, "", scope, BOARD_MAX)
        lessons = [h.reflection for h in hits]
        own = [r for r in lessons if r.run_id == self.settings.run_id]
        board = sorted(own or lessons, key=lambda r: (-r.votes, r.created, r.id))
        if kind == CHEATSHEET:  # one sheet: this run's, or the newest inherited one
            board = sorted(own or lessons, key=lambda r: (-r.created, r.id))[:1]
        self.recalled.setdefault(episode, []).extend(r.id for r in board)
        # subtle: a board changes as the run goes on, so each lesson's text as shown is kept
        # (`memory audit` reruns the episode with it)
        run_id = self.settings.run_id
        shown = [provenance(Recalled(r), self.task.id, run_id) | {"text": r.text} for r in board]
        data = {"hits": shown, "kind": kind, "board": True, "env": self.env}
        self.log(episode, "recall", output="\n".join(r.text for r in board), data=data)
        return board

    async def keep(self, kind: str, text: str, attempt: Attempt) -> Reflection | None:
        if self.memory is None or not text.strip():
            return None
        # subtle: the text is in the id, since one reply may give two items (bank); the same
        # text again is the same lesson, and a re-run of the trial gives the same id
        rid = lesson_id(self._who(), attempt.episode, kind, text.strip())
        lesson = self._lesson(kind, text, attempt, rid)
        if self.settings.frozen:
            self.log(attempt.episode, "remember", output="", data={"frozen": True, "kind": kind})
            return None
        # the trace line first, as for a reflection: a resume drops what a cut-off trial kept
        data = {"id": lesson.id, "kind": kind}
        self.log(attempt.episode, "remember", output=lesson.text, data=data)
        await asyncio.to_thread(self.memory.add, [lesson])
        return lesson

    async def revise(self, kind: str, edits: Sequence[BoardEdit], episode: int) -> list[str]:
        """Apply `edits` to this trial's board of `kind`; a bad edit is skipped and said."""
        if self.memory is None:
            return []
        self.episode_now = episode
        if (
            self.settings.frozen
            or not self.settings.stream
            or not isinstance(self.memory, Revising)
        ):
            why = "the memory cannot revise"
            if not self.settings.stream:  # concurrent tasks would race on one board
                why = "a board changes only under --order stream"
            if self.settings.frozen:
                why = "frozen memory"
            notes = [f"skipped {e.op}: {why}" for e in edits]
        else:
            board = {r.id: r for r in await self.board(kind, episode)}
            notes = [await self._apply(kind, e, board, episode, n) for n, e in enumerate(edits)]
        self.log(episode, "revised", output="\n".join(notes), data={"kind": kind})
        return notes

    async def _apply(
        self, kind: str, edit: BoardEdit, board: dict[str, Reflection], episode: int, n: int
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
        if not text or (kind == RULE and len(text) > RULE_CHARS):
            return f"skipped {edit.op} {target.id}: empty or over {RULE_CHARS} characters"
        after = dataclasses.replace(target, text=text, votes=votes)
        if kind == RULE and votes <= 0:
            board.pop(target.id)  # a later line of the same reply cannot bring it back
            return await self._change(target, None, f"{edit.op} {target.id}: 0 votes, dropped")
        board[target.id] = after
        return await self._change(target, after, f"{edit.op} {target.id}: {votes} votes")

    async def _add(
        self, kind: str, text: str, board: dict[str, Reflection], episode: int, n: int
    ) -> str:
        text = text.strip()
        if not text or (kind == RULE and len(text) > RULE_CHARS):
            return f"skipped add: empty or over {RULE_CHARS} characters"
        mine = [r for r in board.values() if r.run_id == self.settings.run_id]
        if kind == RULE and len(mine) >= MAX_RULES:
            return f"skipped add: the board holds {MAX_RULES} rules"
        if any(r.text.casefold() == text.casefold() for r in board.values()):
            return "skipped add: the board holds this text already"
        attempt = Attempt(episode, "", Score(0.0, False))  # made by a reply, not an answer
        rid = lesson_id(self._who(), episode, kind, n)
        lesson = self._lesson(kind, text, attempt, rid)
        lesson = dataclasses.replace(lesson, votes=NEW_RULE_VOTES if kind == RULE else 0)
        board[rid] = lesson
        return await self._change(None, lesson, f"add {rid}")

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

    def _lesson(self, kind: str, text: str, attempt: Attempt, rid: str) -> Reflection:
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
            kind=kind,
        )


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
