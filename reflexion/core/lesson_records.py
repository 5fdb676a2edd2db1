"""The lessons a memory holds and the rule of what a recall may see: a lesson's `Kind`, the
`Reflection` record with its provenance, a board's `BoardEdit` (its `EditOp`) and its `Board`
rules, how a curator writes them (`Curation`), a `Recalled` hit and the `RecallScope` of an
asking episode, in a run of tasks in parallel or in a stream (`Order`).

    >>> scope = RecallScope("quad", "t1", "run-b", "reflexion", 0, 1, leave_task_out=True)
    >>> scope.admits(Reflection("r1", "x", "run-a", "reflexion", "quad", "t1", 0, 1, 0.0, 0.0))
    False
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from reflexion.core.records import JSON, Record


class Kind(StrEnum):
    """What a lesson is. A `reflection` is one task's own failure note (Reflexion); the others
    are experience meant for OTHER tasks, each the lesson of one design, whose module says all it
    means (reflexion.strategies): a solved task's prompt and solution (`exemplar`), a rule of a
    shared list with votes (`rule`, ExpeL), the one curated text (`cheatsheet`, Dynamic
    Cheatsheet), a distilled item from a success or a failure (`item`, ReasoningBank), a program
    that solved a task, kept verbatim (`skill`). Listed in the order their blocks take in a prompt.

    A StrEnum, so stored lessons and the trace hold the same plain strings:

    >>> Kind("rule") is Kind.RULE, Kind.RULE == "rule", f"{Kind.RULE}", Kind.RULE.own
    (True, True, 'rule', False)
    """

    REFLECTION = "reflection"
    EXEMPLAR = "exemplar"
    RULE = "rule"
    CHEATSHEET = "cheatsheet"
    ITEM = "item"
    SKILL = "skill"

    @property
    def own(self) -> bool:
        """A task's own note, recalled by the run's --scope; every other kind is experience
        for other tasks, recalled from every task."""
        return self is Kind.REFLECTION


# The kinds as plain strings, for what stores and options hold
KINDS = tuple(k.value for k in Kind)
REFLECTION = Kind.REFLECTION.value


def is_own(kind: str) -> bool:
    """Whether a stored lesson's `kind` (a plain string) is a task's own reflection.

    >>> is_own("reflection"), is_own("rule"), is_own("a kind of another package")
    (True, False, False)
    """
    return kind == Kind.REFLECTION


@dataclass(frozen=True)
class Reflection(Record):
    """A lesson (a verbal reflection, or another `kind` of experience) plus where it came from."""

    id: str
    text: str
    run_id: str
    strategy: str
    env: str
    task_id: str
    seed: int
    episode: int
    score: float  # visible score of the attempt this reflection is about
    created: float  # unix time
    flag: str = ""  # why it looks vague (trial.hygiene); empty: it names something specific
    kind: str = Kind.REFLECTION.value  # a Kind's value (a store may hold one this version lacks)
    votes: int = 0  # a rule's votes (ExpeL): it drops out at 0; other kinds keep 0
    # what the lesson is found by: its task's question for an exemplar, an item or a skill (as
    # StreamBench and ReasoningBank key memory by the question); empty: its own text
    key: str = ""
    # the other tasks whose episodes rewrote its text (a board's edits): they wrote it too
    edited_on: tuple[str, ...] = ()
    # what the writer said about it (ReflexionMemory.remember's metadata: user, agent, session,
    # any key=value), filtered on by search, get_all and recall; not part of its hash
    metadata: dict[str, Scalar] = field(default_factory=dict, hash=False)
    # the gate's verdict (--gate, reflexion.trial.gate): "" (not gated), ADMITTED or REJECTED;
    # a rejected lesson stays in the store, recalled by no scope, with the replays' `evidence`
    status: str = ""
    evidence: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def rejected(self) -> bool:
        return self.status == REJECTED

    def exported(self) -> dict[str, Any]:
        """The lesson as `memory export` writes it: every field, less the gate's two when it was
        not gated (so an export of an ungated store reads as it did before the gate)."""
        data = self.to_dict()
        if not self.status:
            del data["status"], data["evidence"]
        return data

    def verdict(self) -> str:
        """The gate's verdict on this lesson, in words ("" when it was not gated).

        >>> e = {"replayed": ["q1", "q2"], "won": 0, "lost": 1, "tied": 1}
        >>> Reflection("r", "x", "run", "s", "e", "t", 0, 1, 0.0, 0.0, status="rejected",
        ...            evidence=e).verdict()
        'rejected by the gate: 0 won, 1 lost, 1 tied over 2 replayed tasks'
        """
        if not self.status:
            return ""
        e, n = self.evidence, len(self.evidence.get("replayed", ()))
        counts = f"{e.get('won', 0)} won, {e.get('lost', 0)} lost, {e.get('tied', 0)} tied"
        return f"{self.status} by the gate: {counts} over {n} replayed task{'s' * (n != 1)}"

    def written_on(self, task_id: str) -> bool:
        """Whether `task_id`'s episodes wrote this lesson or rewrote its text.

        >>> r = Reflection("r1", "x", "run", "insights", "e", "t1", 0, 1, 0.0, 0.0)
        >>> r.written_on("t1"), r.written_on("t2"), r.edited("t2").written_on("t2")
        (True, False, True)
        """
        return task_id == self.task_id or task_id in self.edited_on

    def edited(self, task_id: str) -> Reflection:
        """This lesson, noted as rewritten by an episode of `task_id`."""
        if self.written_on(task_id):
            return self
        return dataclasses.replace(self, edited_on=(*self.edited_on, task_id))


Scalar = str | int | float | bool  # a metadata value, as a Chroma row holds one
ADMITTED, REJECTED = "admitted", "rejected"  # a gated lesson's status (Reflection.status)


class EditOp(StrEnum):
    """What a `BoardEdit` does. A StrEnum, so the trace and the notes hold the plain strings:

    >>> EditOp("upvote") is EditOp.UPVOTE, f"skipped {EditOp.UPVOTE}"
    (True, 'skipped upvote')
    """

    ADD = "add"
    EDIT = "edit"
    UPVOTE = "upvote"
    DOWNVOTE = "downvote"
    REPLACE = "replace"


class Order(StrEnum):
    """How a run schedules its tasks (`--order`): all at once (`parallel`), or one at a time in
    the env's order (`stream`), so a task recalls the lessons of the tasks before it (see
    RecallScope). A StrEnum, so config.json holds the plain string.

    >>> Order("stream") is Order.STREAM, f"--order {Order.STREAM}"
    (True, '--order stream')
    """

    PARALLEL = "parallel"
    STREAM = "stream"


class GateRule(StrEnum):
    """When the gate (`--gate K`, reflexion.trial.gate) admits a lesson, from its paired replays
    (`--gate-rule`): `helps`, it won more replays than it lost; `no-worse`, it was replayed and
    lost no more than it won, so a lesson whose replays all tie is admitted, and one that no
    earlier task's recall shows is not (nothing was tried). A StrEnum: config.json holds the
    plain string.

    >>> GateRule.HELPS.admits(won=0, lost=0, tied=2), GateRule.NO_WORSE.admits(0, 0, tied=2)
    (False, True)
    >>> GateRule.NO_WORSE.admits(0, 0, tied=0), GateRule.NO_WORSE.admits(1, 2, 0)
    (False, False)
    """

    HELPS = "helps"
    NO_WORSE = "no-worse"

    def admits(self, won: int, lost: int, tied: int) -> bool:
        if self is GateRule.HELPS:
            return won > lost
        return won >= lost and won + lost + tied > 0

    @property
    def said(self) -> str:
        """The rule as a gated lesson's evidence records it.

        >>> GateRule.NO_WORSE.said
        'won >= lost, over 1 replay or more'
        """
        return "won > lost" if self is GateRule.HELPS else "won >= lost, over 1 replay or more"


class Curation(StrEnum):
    """How a curator writes memory for other tasks (`--curation`): `json`, bounded operations in
    a JSON object held to the design's schema, or `text`, free-text lines. A StrEnum, so
    config.json holds the plain string.

    >>> Curation("text") is Curation.TEXT, Curation.JSON == "json"
    (True, True)
    """

    JSON = "json"
    TEXT = "text"


@dataclass(frozen=True)
class BoardEdit(Record):
    """One change to a shared board, as a model's reply asks for it: `add` a lesson, `edit` one
    (new text, one more vote), `upvote` or `downvote` one (a lesson at 0 votes drops out), or
    `replace` the text of the board's only lesson (the cheatsheet). `target` is the lesson's id
    (None for `add`).

    >>> BoardEdit(EditOp.ADD, None, "Check the sign.").op
    <EditOp.ADD: 'add'>
    """

    op: EditOp
    target: str | None = None
    text: str = ""


@dataclass(frozen=True)
class Board:
    """The rules of a board: lessons shared by a strategy and seed, all in every prompt, changed
    by the edits a reply asks for (most votes first, unless `one`). Each design sets its own
    and passes them to the trial; `Board()` sets no limits.

    >>> Board(most=10).most, Board().drops_at_zero
    (10, False)
    """

    most: int | None = None  # this run's lessons on one board; an add beyond is skipped
    chars: int | None = None  # the longest lesson; a longer one is a malformed reply
    new_votes: int = 0  # a new lesson's votes
    drops_at_zero: bool = False  # a lesson voted down to 0 drops out
    one: bool = False  # the board is one text: this run's, or the newest inherited one
    # an add this similar to a lesson on the board is skipped; an edit this similar to another
    # lesson is an upvote of that lesson (as ExpeL turns such an EDIT into an AGREE)
    distinct: float | None = None


@dataclass(frozen=True)
class Recalled(Record):
    """A reflection returned by a memory, with its similarity to the query (None: no ranking)
    and the score that ranked it (None: by similarity alone, or no ranking)."""

    reflection: Reflection
    similarity: float | None = None
    score: float | None = None


@dataclass(frozen=True)
class RecallScope(Record):
    """Who is asking: decides which stored reflections an episode may see.

    A reflection is visible when it is from the same env, from the same task (scope "task") or any
    task (scope "global"), and either from another run (a shared store carries lessons over), or
    from this run's same strategy and seed at an earlier episode. The last rule keeps seeds
    independent, stops a resumed episode from reading its own interrupted future, and (scope
    "global") keeps a trial from reading what a faster concurrent trial wrote at a later episode.
    In an ordered stream (`stream`), the tasks before this one are over, so their lessons (same
    strategy and seed) are visible at every episode.

    A lesson the gate rejected (reflexion.trial.gate) is visible to no scope.

    `leave_task_out` (a run's default): another run's lesson is not visible to the task it was
    written or rewritten on, so a rerun of the same tasks on the same store does not read its
    own answers from before (a warm start turns it off).
    """

    env: str
    task_id: str
    run_id: str
    strategy: str
    seed: int
    episode: int
    scope: str = "task"  # "task" | "global"
    stream: bool = False  # --order stream: this run's earlier tasks are over, all of them
    kinds: tuple[str, ...] = (Kind.REFLECTION.value,)  # the kinds of lesson asked for
    leave_task_out: bool = False  # another run's lessons of this task are not visible

    def admits(self, r: Reflection) -> bool:
        if r.kind not in self.kinds or r.rejected:
            return False
        if r.env != self.env or (self.scope == "task" and r.task_id != self.task_id):
            return False
        if r.run_id != self.run_id:
            return not self.left_out(r)
        same_pair = r.strategy == self.strategy and r.seed == self.seed
        earlier_task = self.stream and r.task_id != self.task_id
        return same_pair and (r.episode < self.episode or earlier_task)

    def left_out(self, r: Reflection) -> bool:
        """Whether the leave-one-task-out rule keeps `r` out: another run's lesson, written or
        rewritten on this task."""
        return self.leave_task_out and r.run_id != self.run_id and r.written_on(self.task_id)

    def widened(self) -> RecallScope:
        """This scope with the leave-one-task-out rule off: what a warm start would see."""
        return dataclasses.replace(self, leave_task_out=False)

    def where(self) -> JSON:
        """The rule of `admits` as a Chroma metadata filter, as far as metadata can say it: a
        lesson rewritten on this task by another run passes it (`admits` keeps it out)."""
        pair: list[JSON] = [{"strategy": self.strategy}, {"seed": self.seed}]
        own: list[JSON] = [{"$and": [*pair, {"episode": {"$lt": self.episode}}]}]
        if self.stream:
            own.append({"$and": [*pair, {"task_id": {"$ne": self.task_id}}]})
        clauses: list[JSON] = [{"env": self.env}, self._kind_clause()]
        clauses.append({"status": {"$ne": REJECTED}})  # a row without a status passes it
        if self.scope == "task":
            clauses.append({"task_id": self.task_id})
        other: JSON = {"run_id": {"$ne": self.run_id}}
        if self.leave_task_out:
            other = {"$and": [other, {"task_id": {"$ne": self.task_id}}]}
        clauses.append({"$or": [other, *own]})
        return {"$and": clauses}

    def _kind_clause(self) -> JSON:
        # subtle: a reflection's row carries no `kind` (stores from before kinds have none), and
        # Chroma's $nin admits a row without the key: asking for reflections (with or without
        # other kinds) is asking for "none of the kinds not asked for".
        if Kind.REFLECTION in self.kinds:
            return {"kind": {"$nin": [k for k in Kind if k not in self.kinds] or ["-"]}}
        return {"kind": {"$in": list(self.kinds)}}
