"""Frozen records shared by the loop, the envs and the memory stores.

Every record serializes itself to a JSON-ready dict and back:

    >>> s = Score(value=-0.5, solved=False, feedback="off by 0.5")
    >>> Score.from_dict(s.to_dict()) == s
    True
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Self

JSON = dict[str, Any]


class Record:
    """Mixin: `to_dict` / `from_dict` for frozen dataclasses, recursing into nested records."""

    def to_dict(self) -> JSON:
        return dataclasses.asdict(self)  # type: ignore[call-overload, no-any-return]

    @classmethod
    def from_dict(cls, data: JSON) -> Self:
        hints = _hints(cls)  # type: ignore[arg-type]  # a class is hashable
        kwargs = {}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            if f.name in data:
                kwargs[f.name] = _revive(hints[f.name], data[f.name])
        return cls(**kwargs)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """A record class's field types, resolved once (resolving them per record was most of the
    time it took to read a long trace)."""
    return typing.get_type_hints(cls)


def _revive(hint: Any, value: Any) -> Any:
    """Turn JSON back into the annotated type: nested records and tuples of them."""
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        return _revive(inner[0], value) if len(inner) == 1 else value
    if isinstance(hint, type) and issubclass(hint, Record):
        return hint.from_dict(value)
    if origin is tuple:
        args = typing.get_args(hint)
        item = args[0] if len(args) == 2 and args[1] is Ellipsis else Any
        return tuple(_revive(item, v) for v in value)
    return value


@dataclass(frozen=True)
class Task(Record):
    """One problem. `prompt` and `spec` are visible to the model; held-out data stays in the Env.

    `question` is the part of the prompt that differs from task to task, where tasks share a
    long context (every question over one database shows the same schema). Memory is found by
    it and a worked example shows it, not the shared context: an embedder reads only the
    first 256 word pieces, and a shot that repeats the schema leaves no room for its answer.

        >>> Task("t1", "Schema... Question: How many?", question="How many?").lookup
        'How many?'
        >>> Task("t2", "Add 2 and 3.").lookup
        'Add 2 and 3.'
    """

    id: str
    prompt: str
    spec: dict[str, Any] = field(default_factory=dict)
    question: str = ""  # empty: the whole prompt is the question

    @property
    def lookup(self) -> str:
        """What memory is found by, and what a stored example shows of the task."""
        return self.question or self.prompt


@dataclass(frozen=True)
class Score(Record):
    """A signal about one candidate: a number, whether it counts as solved, and a text."""

    value: float
    solved: bool
    feedback: str = ""


@dataclass(frozen=True)
class Observation(Record):
    """What an interactive env shows after a reset or an action: the text, the actions it admits
    now (empty: any text), the score so far, and whether the game is over and won."""

    text: str
    actions: tuple[str, ...] = ()
    score: float = 0.0
    done: bool = False
    won: bool = False


@dataclass(frozen=True)
class Message(Record):
    role: str  # "system" | "human" | "ai"
    content: str


@dataclass(frozen=True)
class Call(Record):
    """One call of an actor role (an LLM call, or a step of a scripted actor)."""

    role: str
    prompt: tuple[Message, ...]
    output: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    error: str | None = None
    llm: bool = True  # False for scripted actors (quadratic): not counted as LLM calls
    cached_tokens: int = 0  # prompt tokens the runtime served from its KV cache
    reused: bool = False  # answered from the run's cache of identical greedy calls
    # what the call would have taken alone (a reused answer: the time of the call that made
    # it); None: its latency_s. A trial's wall time charges this, as its tokens are charged
    alone_s: float | None = None
    retries: int = 0  # tries after the first (transient failures: timeouts, 429, 5xx)
    memory_tokens: int = 0  # memory text in the prompt, in tokens (actor.memory_text)
    sample: int = 0  # a candidate's sample number: 0 greedy, n > 0 at --temperature, seeded by n
    shortened: int = 0  # a game play's prompts refused as over the context, asked again shorter
    code_rounds: int = 0  # answers asked again after the reply's program ran (--code-rounds)
    left_out: tuple[str, ...] = ()  # recalled lessons --memory-tokens kept out of the prompt

    @property
    def alone(self) -> float:
        """The seconds this call is charged: what it would have taken alone."""
        return self.latency_s if self.alone_s is None else self.alone_s


def alone_total(calls: Sequence[Call]) -> float | None:
    """`alone_s` of one call made of `calls` (a rollout, a code round): None when none was
    reused, so the sum of their latencies stands.

    >>> alone_total([Call("act", (), "", latency_s=2.0), Call("act", (), "", alone_s=3.0)])
    5.0
    """
    if all(c.alone_s is None for c in calls):
        return None
    return sum(c.alone for c in calls)


@dataclass(frozen=True)
class Attempt(Record):
    """A candidate and its VISIBLE score. The held-out result is never stored here, so nothing
    that hands attempts to the actor can leak it. `prompt` is what asked for the candidate (a
    reflection continues that conversation, so the model's prefix cache holds most of it)."""

    episode: int
    candidate: str
    score: Score
    prompt: tuple[Message, ...] = ()


@dataclass(frozen=True)
class Turn(Record):
    """One step of an inline history: an attempt and the feedback written on it (if any)."""

    attempt: Attempt
    feedback: str | None = None


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
    flag: str = ""  # why it looks vague (memory.hygiene); empty: it names something specific
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


@dataclass(frozen=True)
class BoardEdit(Record):
    """One change to a shared board, as a model's reply asks for it: `add` a lesson, `edit` one
    (new text, one more vote), `upvote` or `downvote` one (a lesson at 0 votes drops out), or
    `replace` the text of the board's only lesson (the cheatsheet). `target` is the lesson's id
    (None for `add`).

    >>> BoardEdit("add", None, "Check the sign.").op
    'add'
    """

    op: str
    target: str | None = None
    text: str = ""


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
        if r.kind not in self.kinds:
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


@dataclass(frozen=True)
class Step(Record):
    """One line of trace.jsonl: a recall, generate, score, evaluate, feedback, refine or reflect."""

    id: str
    run_id: str
    strategy: str
    task_id: str
    seed: int
    episode: int
    kind: str
    prompt: tuple[Message, ...] = ()
    output: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    data: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class Point(Record):
    """The state after one attempt: the best-so-far and the cumulative cost."""

    episode: int
    score: float  # visible score of this attempt
    best_score: float  # best visible score so far (never decreases)
    best_passed: bool  # held-out verdict on the best-so-far candidate
    passed: bool  # held-out verdict on this attempt
    tokens: int  # cumulative tokens so far
    calls: int  # cumulative LLM calls so far
    solved: bool | None = None  # visible verdict on this attempt (None: a record from before)
    signal: str = ""  # what gave the visible score: visible, self-tests, both, or the fallback
    # tokens when this attempt was made (`tokens` of the last point also counts later calls)
    attempt_tokens: int | None = None


@dataclass(frozen=True)
class TaskResult(Record):
    """One line of results.jsonl: one task x strategy x seed."""

    run_id: str
    env: str
    task_id: str
    strategy: str
    seed: int
    best_candidate: str
    best_score: float
    best_episode: int
    final_passed: bool  # held-out verdict on the candidate the strategy returns (its best)
    any_passed: bool  # held-out pass by any attempt (optimistic, as in Self-Refine's GSM8K)
    attempts: int
    llm_calls: int
    input_tokens: int
    output_tokens: int
    wall_s: float  # what the trial would take alone: a reused answer at its own call's time
    reused_calls: int = 0  # LLM calls answered from the run's greedy-call cache (still counted)
    curve: tuple[Point, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.strategy, self.task_id, self.seed)
