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
