"""A board's rules, applied: one pure function, `apply`, from the lessons an episode read, the
edits a reply asks for and the design's `Board` rules to the board after, the changes to write
and one note per edit. The trial writes and traces the changes (reflexion.trial.experience);
the curator tools (reflexion.curate.curator) call the same function on boards of their own.

A board is shared by a strategy and seed, all of it in every prompt (`rule`, `cheatsheet`; a
skill's votes too). Each change is kept in the lesson's history (Revising) and in the trace,
with the lesson as it was, so a resume can undo what an interrupted trial changed
(`undo_interrupted`).

    >>> author = Author("run", "insights", "quad", Task("q1", "Solve it."), 0, 1, clock=lambda: 0.0)
    >>> add = BoardEdit(EditOp.ADD, None, "Check it.")
    >>> after, changes, notes = apply("rule", [], [add], Board(), author)
    >>> [r.text for r in after], notes == [f"add {after[0].id}"], changes[0].before is None
    (['Check it.'], True, True)
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from reflexion.core.lesson_records import Board, BoardEdit, EditOp, Recalled, Reflection
from reflexion.core.protocols import Memory
from reflexion.core.records import Attempt, Score, Task
from reflexion.trial.hygiene import placeholder, same_wording, vague

# how similar a text is to each of some texts (e.g. by an embedding model), in their order
Similar = Callable[[str, Sequence[str]], Sequence[float]]
Embed = Callable[[list[str]], Sequence[Sequence[float]]]

# what an edit adds to its lesson's votes
VOTES = {EditOp.EDIT: 1, EditOp.UPVOTE: 1, EditOp.DOWNVOTE: -1}


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors.

    >>> round(cosine([1.0, 0.0], [1.0, 1.0]), 4)
    0.7071
    """
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norms if norms else 0.0


def by_embedding(embed: Embed) -> Similar:
    """Similarity by the cosine of embeddings, the text and the others embedded in one call.

    >>> similar = by_embedding(lambda texts: [[1.0, float("c" in t)] for t in texts])
    >>> [round(s, 4) for s in similar("a", ["ab", "c"])]
    [1.0, 0.7071]
    """

    def similar(text: str, texts: Sequence[str]) -> list[float]:
        new, *kept = embed([text, *texts])
        return [cosine(new, v) for v in kept]

    return similar


def lesson_id(*parts: object) -> str:
    """A stable id: the same trial, episode and kind always give the same id (resume-safe).

    >>> lesson_id("run/insights/0/q1", 2, "rule") == lesson_id("run/insights/0/q1", 2, "rule")
    True
    """
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Author:
    """Who writes a board's new lessons: the trial (run, strategy, env, task and seed) at
    `episode`; `clock` dates each lesson it makes."""

    run_id: str
    strategy: str
    env: str
    task: Task
    seed: int
    episode: int
    clock: Callable[[], float] = field(default=time.time, compare=False)

    @property
    def who(self) -> str:
        # the seed too: each seed has its own board, and must not overwrite another's lessons
        return "/".join(map(str, (self.run_id, self.strategy, self.env, self.task.id, self.seed)))

    def lesson(self, kind: str, text: str, rid: str, attempt: Attempt | None = None) -> Reflection:
        """A new lesson of `kind` with id `rid`, made from `attempt` (None: by a reply, at this
        episode), with its provenance and its vagueness flag."""
        attempt = attempt or Attempt(self.episode, "", Score(0.0, False))
        return Reflection(
            id=rid,
            text=text.strip(),
            run_id=self.run_id,
            strategy=self.strategy,
            env=self.env,
            task_id=self.task.id,
            seed=self.seed,
            episode=attempt.episode,
            score=attempt.score.value,
            created=self.clock(),
            kind=str(kind),  # the plain string, as stores hold it
            flag=vague(text, self.task.prompt, attempt.score.feedback),
        )


@dataclass(frozen=True)
class Change:
    """One change to write: `before` None is an added lesson, `after` None a retired one."""

    before: Reflection | None
    after: Reflection | None
    note: str


def in_order(lessons: Sequence[Reflection], rules: Board, run_id: str) -> list[Reflection]:
    """The board as an episode reads it: this run's own lessons, or where it has none yet,
    those of other runs; most votes first (one sheet: this run's, or the newest inherited)."""
    own = [r for r in lessons if r.run_id == run_id]
    if rules.one:
        return sorted(own or lessons, key=lambda r: (-r.created, r.id))[:1]
    return sorted(own or lessons, key=lambda r: (-r.votes, r.created, r.id))


def apply(
    kind: str,
    lessons: Sequence[Reflection],
    edits: Sequence[BoardEdit],
    rules: Board,
    author: Author,
    similar: Similar | None = None,
) -> tuple[list[Reflection], list[Change], list[str]]:
    """Apply `edits`, in order, to the board `lessons` of `kind` under `rules`: the board after,
    the changes to write, and one note per edit (what was done, or why it was skipped). New
    lessons are the `author`'s; `similar` finds near-copies (None: by their words alone)."""
    board = _Applying(kind, rules, author, similar, {r.id: r for r in lessons})
    notes = [board.edit(e, n) for n, e in enumerate(edits)]
    return list(board.lessons.values()), board.changes, notes


def near_copy(
    text: str, lessons: Sequence[Reflection], distinct: float | None, similar: Similar | None
) -> Recalled | None:
    """The lesson most similar to `text`, if at least `distinct` similar; None without a
    similarity, with no bound, or with no lessons."""
    if similar is None or distinct is None or not lessons:
        return None
    scores = similar(text, [r.text for r in lessons])
    near = [Recalled(r, s) for r, s in zip(lessons, scores, strict=True)]
    best = max(near, key=lambda r: r.similarity or 0.0)
    return best if (best.similarity or 0.0) >= distinct else None


@dataclass
class _Applying:
    """One `apply` call's board as its edits change it (a later edit sees what earlier ones
    did), and the changes made so far."""

    kind: str
    rules: Board
    author: Author
    similar: Similar | None
    lessons: dict[str, Reflection]
    changes: list[Change] = field(default_factory=list)

    def edit(self, edit: BoardEdit, n: int, why: str = "") -> str:
        target = self.lessons.get(edit.target or "")
        if edit.op == EditOp.REPLACE:
            target = next(iter(self.lessons.values()), None)
        # a rewrite of another run's sheet (a shared store) starts this run's own from it
        mine = target is not None and target.run_id == self.author.run_id
        if edit.op == EditOp.ADD or (edit.op == EditOp.REPLACE and not mine):
            return self.add(edit.text, n)
        if target is None:
            return f"skipped {edit.op}: no lesson {edit.target!r} on the board"
        if target.run_id != self.author.run_id:
            return f"skipped {edit.op}: {target.id} belongs to another run"
        votes = target.votes + VOTES.get(edit.op, 0)
        text = edit.text.strip() if edit.op in (EditOp.EDIT, EditOp.REPLACE) else target.text
        if unfit := _unfit(text, self.rules):
            return f"skipped {edit.op} {target.id}: {unfit}"
        if edit.op == EditOp.EDIT and (twin := self.restates(text, target)):
            # as ExpeL: an edit that restates another rule agrees with that rule, and the list
            # keeps both rules as they were (no second copy)
            agree = BoardEdit(EditOp.UPVOTE, twin.reflection.id, "")
            why = f" (restated by an edit of {target.id}, {twin.similarity or 0:.2f})"
            return self.edit(agree, n, why)
        after = dataclasses.replace(target, text=text, votes=votes)
        if text != target.text:  # new words: checked again, against the task it was edited on
            flag = vague(text, self.author.task.prompt, "")
            after = dataclasses.replace(after.edited(self.author.task.id), flag=flag)
        if self.rules.drops_at_zero and votes <= 0:
            self.lessons.pop(target.id)  # a later line of the same reply cannot bring it back
            return self.change(target, None, f"{edit.op} {target.id}: 0 votes, dropped")
        self.lessons[target.id] = after
        return self.change(target, after, f"{edit.op} {target.id}: {votes} votes{why}")

    def add(self, text: str, n: int) -> str:
        text, most = text.strip(), self.rules.most
        if unfit := _unfit(text, self.rules):
            return f"skipped add: {unfit}"
        mine = [r for r in self.lessons.values() if r.run_id == self.author.run_id]
        if most is not None and len(mine) >= most:
            return f"skipped add: the board holds {most} {self.kind}s"
        if _same_text(text, self.lessons.values()):
            return "skipped add: the board holds this text already"
        held = list(self.lessons.values())
        if twin := near_copy(text, held, self.rules.distinct, self.similar):
            return f"skipped add: a near-copy of {twin.reflection.id} ({twin.similarity:.2f})"
        rid = lesson_id(self.author.who, self.author.episode, self.kind, n)
        lesson = self.author.lesson(self.kind, text, rid)
        lesson = dataclasses.replace(lesson, votes=self.rules.new_votes)
        self.lessons[rid] = lesson
        return self.change(None, lesson, f"add {rid}")

    def restates(self, text: str, target: Reflection) -> Recalled | None:
        """Another lesson on the board that `text`, an edit of `target`, copies or nearly copies
        (None: none, or the board's rules ask for no such check)."""
        if (distinct := self.rules.distinct) is None:
            return None
        others = [r for r in self.lessons.values() if r.id != target.id]
        if same := _same_text(text, others):
            return Recalled(same, 1.0)
        return near_copy(text, others, distinct, self.similar)

    def change(self, before: Reflection | None, after: Reflection | None, note: str) -> str:
        self.changes.append(Change(before, after, note))
        return note


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
