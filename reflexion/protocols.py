"""The seams: Env, Memory, Embedder, Actor. Concrete classes need not inherit from these."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from reflexion.records import Attempt, Call, Recalled, RecallScope, Reflection, Score, Task, Turn


@runtime_checkable
class Env(Protocol):
    """A set of tasks with two signals. `score` is VISIBLE: it may reach feedback and reflections.
    `evaluate` is HELD-OUT: it decides the reported result and must never reach a prompt."""

    name: str

    def tasks(self) -> Sequence[Task]: ...

    def score(self, task: Task, candidate: str) -> Score: ...

    def evaluate(self, task: Task, candidate: str) -> Score: ...


class Embedder(Protocol):
    """Text to unit vectors; `name` and `dim` are stored with a memory, so stores never mix."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


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


class Actor(Protocol):
    """The roles of the loop. A chat-model actor turns each into one LLM call; the quadratic env
    has a scripted actor. Every method gets only visible information."""

    async def generate(self, task: Task, lessons: Sequence[Recalled], sample: int) -> Call: ...

    async def feedback(self, task: Task, history: Sequence[Turn]) -> Call: ...

    async def refine(self, task: Task, history: Sequence[Turn]) -> Call: ...

    async def correct(self, task: Task, history: Sequence[Turn]) -> Call: ...

    async def reflect(self, task: Task, attempt: Attempt) -> Call: ...
