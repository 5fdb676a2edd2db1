"""How the vector memory ranks the lessons a scope admits: similarity to the query, plus a bonus
for the asking task's own lessons, plus a bonus for recent ones.

    score = similarity + task * [same task] + recency * r

where r is 1 for the newest of the candidates and falls evenly to 0 for the oldest. Similarity
alone let other tasks' lessons crowd out a task's own in global scope, and missed the newest
lesson even in task scope (the quadratic drill; see docs/results.md). Candidates are the `pool` most
similar lessons the scope admits (at least k); the best k by score are returned, best first.

    >>> from reflexion.core.lesson_records import Recalled, Reflection
    >>> def lesson(i, task, created, sim):
    ...     r = Reflection(f"r{i}", "x", "run", "reflexion", "e", task, 0, 1, 0.0, created)
    ...     return Recalled(r, sim)
    >>> hits = [lesson(1, "other", 1.0, 0.9), lesson(2, "mine", 2.0, 0.8)]
    >>> [h.reflection.id for h in Ranking().rank(hits, "mine", k=1)]
    ['r2']
    >>> [h.reflection.id for h in Ranking(task=0.0, recency=0.0).rank(hits, "mine", k=1)]
    ['r1']
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from reflexion.core.lesson_records import Recalled


@dataclass(frozen=True)
class Ranking:
    task: float = 0.25  # added to a lesson of the asking task
    recency: float = 0.2  # times r: 1 for the newest candidate, 0 for the oldest
    pool: int = 20  # candidates taken by similarity before ranking (at least k)

    def candidates(self, k: int) -> int:
        return max(k, self.pool)

    def rank(self, hits: Sequence[Recalled], task_id: str, k: int) -> list[Recalled]:
        """The best k of `hits` by score, each carrying its score; ties go to the lower id."""
        newest = sorted(hits, key=lambda h: (h.reflection.created, h.reflection.id), reverse=True)
        span = max(len(newest) - 1, 1)
        recency = {h.reflection.id: 1.0 - i / span for i, h in enumerate(newest)}

        def score(h: Recalled) -> float:
            same = h.reflection.task_id == task_id
            return (
                (h.similarity or 0.0) + self.task * same + self.recency * recency[h.reflection.id]
            )

        ranked = sorted(hits, key=lambda h: (-score(h), h.reflection.id))[:k]
        return [dataclasses.replace(h, score=round(score(h), 6)) for h in ranked]


def parse_ranking(text: str) -> Ranking:
    """ "task=0.25,recency=0.2" (either may be left out) -> Ranking; "similarity" -> both 0.

    >>> parse_ranking("task=0.5")
    Ranking(task=0.5, recency=0.2, pool=20)
    """
    if text.strip() == "similarity":
        return Ranking(task=0.0, recency=0.0)
    weights: dict[str, float] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        name, _, value = item.partition("=")
        if name.strip() not in ("task", "recency"):
            msg = f"expected task=W and recency=W, or similarity; got {item!r}"
            raise ValueError(msg)
        try:
            weights[name.strip()] = float(value)
        except ValueError:
            msg = f"expected a number in {item!r}"
            raise ValueError(msg) from None
        if not math.isfinite(weights[name.strip()]):
            msg = f"expected a finite number in {item!r}"
            raise ValueError(msg)
    default = Ranking()
    return Ranking(weights.get("task", default.task), weights.get("recency", default.recency))
