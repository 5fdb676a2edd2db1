"""The seams: Env, Memory, Embedder, Actor, and the Trial a strategy drives. Concrete classes need
not inherit from these; `isinstance` works on the runtime-checkable ones.

Optional hooks are Protocols too, so the runner asks `isinstance(env, ScriptedEnv)` instead of
looking for an attribute by name:

    >>> class Drill:
    ...     name = "drill"
    ...     def tasks(self): return []
    ...     def score(self, task, candidate): ...
    ...     def evaluate(self, task, candidate): ...
    ...     def actor(self, seed): ...
    >>> drill = Drill()
    >>> isinstance(drill, Env), isinstance(drill, ScriptedEnv), isinstance(drill, SandboxedEnv)
    (True, True, False)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from reflexion.core.lesson_records import (
    Board,
    BoardEdit,
    Curation,
    Kind,
    Recalled,
    RecallScope,
    Reflection,
)
from reflexion.core.records import Attempt, Call, Observation, Score, Task, Turn


@runtime_checkable
class Env(Protocol):
    """A set of tasks with two signals. `score` is VISIBLE: it may reach feedback and reflections.
    `evaluate` is HELD-OUT: it decides the reported result and must never reach a prompt."""

    name: str

    def tasks(self) -> Sequence[Task]: ...

    def score(self, task: Task, candidate: str) -> Score: ...

    def evaluate(self, task: Task, candidate: str) -> Score: ...


@runtime_checkable
class Actor(Protocol):
    """The roles of the loop. A chat-model actor turns each into one LLM call; the quadratic env
    has a scripted actor. Every method gets only visible information."""

    async def generate(self, task: Task, lessons: Sequence[Recalled], sample: int) -> Call: ...

    # sample n > 0: decode at --temperature with a seed of its own (`self-refine-sampled`)
    async def feedback(self, task: Task, history: Sequence[Turn], sample: int = 0) -> Call: ...

    async def refine(self, task: Task, history: Sequence[Turn], sample: int = 0) -> Call: ...

    async def correct(self, task: Task, history: Sequence[Turn]) -> Call: ...

    async def reflect(self, task: Task, attempt: Attempt) -> Call: ...


@runtime_checkable
class ScriptedEnv(Env, Protocol):
    """An env that brings its own actor (the quadratic drill): it runs without a model."""

    def actor(self, seed: int) -> Actor: ...


@runtime_checkable
class SandboxedEnv(Env, Protocol):
    """An env that runs generated code; `sandbox()` says what holds it on this machine (recorded
    in the run's config.json)."""

    def sandbox(self) -> dict[str, object]: ...


class Game(Protocol):
    """One play of an interactive task, from its start."""

    def reset(self) -> Observation: ...

    def step(self, action: str) -> Observation: ...

    def close(self) -> None: ...


@runtime_checkable
class InteractiveEnv(Env, Protocol):
    """An env whose episode is a multi-step rollout: the actor acts, the env answers, until the
    game ends or `max_steps` actions were taken. The candidate is the trajectory (a transcript
    whose `> ` lines are the actions), so `score` and `evaluate` replay it in a fresh game.
    One-shot envs need none of this."""

    max_steps: int

    def play(self, task: Task) -> Game: ...


@runtime_checkable
class CodeRunningEnv(Env, Protocol):
    """An env whose answers may be worked out by a program, as Dynamic Cheatsheet runs every
    arm: the program a reply holds runs in the sandbox, what it printed is shown to the model,
    and the model answers again (`--code-rounds`). `run_program` says, in words for the model,
    what the reply's program printed or how it failed; None when the reply holds no program (or
    the env's protocol takes none), which ends the rounds. `programs` says whether it takes
    programs as configured (game24's expression-only protocol does not)."""

    programs: bool

    def run_program(self, task: Task, reply: str) -> str | None: ...


@runtime_checkable
class AnsweringEnv(Env, Protocol):
    """An env that can say which part of a reply its check reads (the SQL env: the query in the
    last ```sql block). A worked example keeps that part alone, as StreamBench's shots keep the
    parsed query: reasoning written before the answer would take the room other shots need."""

    def answer(self, task: Task, reply: str) -> str: ...


@runtime_checkable
class SelfTestingEnv(Env, Protocol):
    """An env of code tasks that can check a candidate against unit tests the model wrote
    (`--signal self-tests` or `both`). `test_subject` is what the test writer sees: the task's
    visible prompt only (None: this task has no code to test)."""

    def test_subject(self, task: Task) -> str | None: ...

    def score_with_tests(
        self, task: Task, candidate: str, tests: Sequence[str], visible: bool
    ) -> Score:
        """VISIBLE: `candidate` against `tests` (asserts), plus the env's own visible tests when
        `visible`."""
        ...


@runtime_checkable
class SelfTestWriter(Protocol):
    """An actor that can write unit tests for a task from its prompt (a chat-model actor)."""

    async def write_tests(self, task: Task, subject: str, count: int) -> Call: ...


class Embedder(Protocol):
    """Text to unit vectors; `name` and `dim` are stored with a memory, so stores never mix."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@runtime_checkable
class Memory(Protocol):
    """An episodic store of reflections. `add` is idempotent by reflection id."""

    def add(self, reflections: Sequence[Reflection]) -> None: ...

    def recall(self, text: str, scope: RecallScope, k: int) -> list[Recalled]:
        """Up to k reflections that `scope` admits, most relevant first."""
        ...

    def search(self, text: str, k: int) -> list[Recalled]:
        """Up to k reflections of any provenance, most similar first (for inspection)."""
        ...

    def get(self, reflection_id: str) -> Reflection | None: ...

    def reflections(self) -> list[Reflection]:
        """Every stored reflection, oldest first."""
        ...

    def delete(self, ids: Sequence[str]) -> int:
        """Remove these reflections; returns how many existed."""
        ...


@runtime_checkable
class Crediting(Protocol):
    """A memory that keeps credit per lesson: each recall, and whether the attempt made with it
    scored higher ("helped"), lower ("hurt") or the same ("same") as the trial's attempt before
    (None: there was none). `episode` names the recalling episode: one counted before (a trial
    cut off and run again on resume) is not counted twice."""

    def credit(
        self, ids: Sequence[str], outcome: str | None, episode: str | None = None
    ) -> None: ...


@runtime_checkable
class Merging(Protocol):
    """A memory that merges near-duplicate lessons (--dedup): `nearest` is the most similar
    lesson a scope admits, and `merge` adds a new lesson's provenance to an existing one
    instead of storing it again."""

    def nearest(self, text: str, scope: RecallScope) -> Recalled | None: ...

    def merge(self, into: str, reflection: Reflection) -> None: ...


@runtime_checkable
class Revising(Protocol):
    """A memory whose lessons a run may change in place (a shared rule list, a cheatsheet), each
    change kept in the lesson's history (`reflexion memory history`)."""

    def revise(self, reflection: Reflection, why: str) -> None:
        """Store `reflection` in place of the lesson with its id (or add it), keeping what it
        replaces in that lesson's history."""
        ...

    def retire(self, reflection_id: str, why: str) -> None:
        """Remove a lesson, keeping it in its history."""
        ...


@runtime_checkable
class Distilling(Protocol):
    """An actor that can turn a task's attempts into experience for other tasks (a chat-model
    actor): one call, in the words of the design whose lessons are of `kind` (rule edits, a
    rewritten cheatsheet, distilled items). `board` is the current rules or sheet. `curation`:
    json (the reply is a JSON object, held to the design's schema where the model allows) or
    text (free-text lines). `memory_chars`: the most memory text one of its prompts shows, in
    characters (--memory-tokens), so that a board is not written past what a prompt shows."""

    curation: Curation
    memory_chars: int

    async def distill(
        self, task: Task, kind: Kind, attempts: Sequence[Attempt], board: Sequence[Reflection]
    ) -> Call: ...


@runtime_checkable
class Proposing(Protocol):
    """An actor that can ask for an answer that revises itself in place before its final form
    (PASR's `<refine>` format, prompted; a chat-model actor)."""

    async def propose(self, task: Task, sample: int) -> Call: ...


@runtime_checkable
class Closable(Protocol):
    """A memory (or anything else) holding a file or a connection until `close()`."""

    def close(self) -> None: ...


@runtime_checkable
class Prefilling(Protocol):
    """A chat model that continues a last assistant message instead of starting a new one
    (llama.cpp's server does). An answer known to begin with some text (a task's
    `spec["answer_prefix"]`: the function's signature and docstring) is then processed with the
    prompt, in one batch, instead of being decoded token by token; the reply holds all of it."""

    prefills_answers: bool


@runtime_checkable
class JsonSchemaModel(Protocol):
    """A chat model whose runtime holds a reply to a JSON schema passed as `json_schema=` (the
    local model: llama.cpp turns it into a grammar). Other models get the schema in words only."""

    takes_json_schema: bool


@runtime_checkable
class Preloadable(Protocol):
    """A model that can load its weights before the first call (the local GGUF model), so a bad
    file is one clear error and the load time is not charged to the first trial."""

    def load(self) -> None: ...


class Trial(Protocol):
    """What a strategy may do with one task x seed: call an actor role, score the candidate,
    recall and remember lessons. The runner's trial records every step in the trace.

        >>> async def single(trial: Trial) -> None:
        ...     call = await trial.ask(trial.actor.generate(trial.task, (), sample=0), episode=1)
        ...     await trial.attempt(call, episode=1)
    """

    task: Task
    actor: Actor

    @property
    def budget(self) -> int:
        """The most candidates this trial may produce."""
        ...

    @property
    def feedback(self) -> str:
        """What the model is shown of a check: "actionable" (the env's feedback, and
        Self-Refine's written feedback), "generic" (a fixed "there may be an error" line) or
        "none" (the score)."""
        ...

    @property
    def solved(self) -> bool:
        """Solved by the VISIBLE signal: the only one a strategy may act on."""
        ...

    @property
    def boards_change(self) -> bool:
        """Whether `revise` can change a board here: under --order stream (concurrent tasks
        would race on one board), with a memory that revises and is not frozen."""
        ...

    @property
    def stores(self) -> bool:
        """Whether `keep` can store here: a memory that is not frozen."""
        ...

    def answer_of(self, candidate: str) -> str:
        """The part of a reply the env's check reads (see AnsweringEnv); else the reply."""
        ...

    async def ask(self, call: Awaitable[Call], episode: int) -> Call: ...

    async def attempt(self, call: Call, episode: int) -> Attempt: ...

    async def verify(self, candidate: str, episode: int) -> Score:
        """The VISIBLE check of a text that is not an attempt (a program about to be kept as a
        skill): traced as a `verify` step; no held-out check, no credit, no candidate kept."""
        ...

    async def recall(
        self,
        episode: int,
        kind: Kind = Kind.REFLECTION,
        k: int | None = None,
        pick: Callable[[list[Recalled]], list[Recalled]] | None = None,
    ) -> list[Recalled]:
        """The k (default --k) lessons of `kind` for this episode: a reflection by the run's
        --scope; any other kind from every task (it is experience for other tasks). `pick`
        narrows the k found before they are shown, traced and credited."""
        ...

    async def remember(self, call: Call, attempt: Attempt) -> Reflection | None: ...

    def note(self, episode: int, kind: str, output: str, data: dict[str, Any]) -> None:
        """A trace step that is not a model call (e.g. a reply line that did not parse)."""
        ...

    async def note_draft(self, draft: str, refines: int, episode: int) -> None:
        """Check an answer's first draft (visible and held-out) for the report only: the trace
        records both verdicts, the strategy gets nothing back (`proactive`)."""
        ...

    async def keep(
        self,
        kind: Kind,
        text: str,
        attempt: Attempt,
        key: str = "",
        distinct: float | None = None,
        rules: Board | None = None,
    ) -> Reflection | None:
        """Store one lesson of `kind` made from `attempt` (an exemplar, an item), with its
        provenance, found later by `key` (its task's question) where given, else by its text;
        None when nothing was stored (no memory, frozen, empty text, or, with `distinct`, a kept
        lesson found by the same key whose text is at least that similar). `rules`: its
        design's board rules (a new lesson's votes), None: `Board()`."""
        ...

    async def board(self, kind: Kind, episode: int, rules: Board | None = None) -> list[Reflection]:
        """The shared board of `kind` (rules, the cheatsheet) as this trial may read it, the most
        voted first (one sheet, where its design's `rules` say the board is one text)."""
        ...

    async def revise(
        self,
        kind: Kind,
        edits: Sequence[BoardEdit],
        episode: int,
        among: Sequence[Reflection] | None = None,
        rules: Board | None = None,
    ) -> list[str]:
        """Apply edits to the board of `kind` (or to the lessons `among`, those an episode was
        shown) under its design's `rules` (None: `Board()`, no limits), each kept in the
        lesson's history; returns what was done or skipped, one line each (also in the trace)."""
        ...
