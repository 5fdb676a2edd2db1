"""A Chroma store as a person curates it (reflexion.core.curation.Curated): it offers every verb,
each change kept in the store's change log (memory.chroma.changes).

    >>> with ChromaCuration(ChromaMemory.open("runs/x/memory")) as store:   # doctest: +SKIP
    ...     store.forget(["3f9a0c1d2e4b5a69"], why="misleading")
    1
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from memory.chroma import changes
from memory.chroma.credit import add_audit, credits
from memory.chroma.merging import merged_from
from memory.chroma.store import ChromaMemory
from memory.ranking import Ranking
from reflexion.core.curation import EVERY, VERBS, Change, Chosen, Credit
from reflexion.core.records import Recalled, RecallScope, Reflection


class ChromaCuration:
    """Every verb of the contract, on one ChromaMemory (closed with it)."""

    kind = "chroma"
    can = VERBS

    def __init__(self, memory: ChromaMemory, ranking: Ranking | None = None) -> None:
        self.memory = memory
        self.ranking = ranking or memory.ranking  # the run's --rank, for `memory why`
        self.location = memory.location
        about = memory.info()
        model = f"embedding model {about['embedding_model']}, dim {about['embedding_dim']}"
        self.label = f"{memory.location} ({model})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.memory.close()

    def lessons(self, chosen: Chosen = EVERY) -> list[Reflection]:
        return [r for r in self.memory.reflections() if chosen.admits(r)]

    def get(self, reflection_id: str) -> Reflection | None:
        return self.memory.get(reflection_id)

    def search(self, text: str, k: int) -> list[Recalled]:
        return self.memory.search(text, k)

    def ranked(self, text: str, scope: RecallScope, at: float) -> list[Recalled]:
        """By the run's ranking, over every lesson (as a recall ranks its candidates)."""
        every = self.memory.search(text, k=max(len(self.memory.reflections()), 1))
        admitted = [h for h in every if h.reflection.created <= at and scope.admits(h.reflection)]
        return self.ranking.rank(admitted, scope.task_id, len(admitted))

    def forget(self, ids: Sequence[str], why: str) -> int:
        return changes.forget(self.memory, ids, why)

    def edit(self, reflection_id: str, text: str, why: str) -> Reflection:
        return changes.edit(self.memory, reflection_id, text, why)

    def revert(self, reflection_id: str, why: str) -> Reflection | None:
        return changes.revert(self.memory, reflection_id, why)

    def bring_in(self, reflections: Sequence[Reflection], why: str) -> int:
        return changes.bring_in(self.memory, reflections, why)

    def history(self, reflection_id: str) -> list[Change]:
        with self.memory.changelog() as log:
            return log.of(reflection_id)

    def credits(self) -> dict[str, Credit]:
        return credits(self.memory)

    def count_audit(self, reflection_id: str, outcome: str, episode: str) -> bool:
        return add_audit(self.memory, reflection_id, outcome, episode)

    def merged_from(self, reflection_id: str) -> list[dict[str, Any]]:
        return merged_from(self.memory, reflection_id)
