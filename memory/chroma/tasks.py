"""The task cache: task-scope recall without Chroma's metadata filter. A task's lessons, with
their vectors, kept in this process once a recall has asked for them, and ranked with numpy.

A filtered Chroma query costs about a scan of the rows the filter admits, and a recall in task
scope on a store of many tasks needs one: 164 ms at 100k lessons (scripts/benchmark_recall.py).
Here a task's first recall reads its lessons once (a filtered `get`, which skips the vector
index), and every later one looks at those few vectors only, as Chroma's cosine space does
(1 - the dot product of unit vectors, in float32), nearest first, ties to the lower id.

Only a process that alone writes a store may keep a cache of it: an embedded folder under its
StoreLock. Every write of that process (memory.chroma.rows.Rows.add_embedded and delete,
whichever ChromaMemory object on the folder makes it) updates the cache under the cache's lock,
so a recall sees what was written before it. The cache is shared by the process's writers of
one collection (memory.chroma.connect.CacheHold) and dropped with the last of them, when the
folder's lock is let go.

    >>> from reflexion.core.lesson_records import RecallScope
    >>> cache = TaskCache()
    >>> r = Reflection("r1", "check the sign", "run", "reflexion", "quad", "t1", 0, 2, -1.5, 1e9)
    >>> cache.fill("t1", [r], [[1.0, 0.0]])
    >>> scope = RecallScope("quad", "t1", "another-run", "reflexion", 0, 1)
    >>> [(h.reflection.id, h.similarity) for h in cache.nearest("t1", [0.0, 2.0], scope, 20)]
    [('r1', 0.0)]
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from reflexion.core.lesson_records import Recalled, RecallScope, Reflection

if TYPE_CHECKING:  # numpy loads at the first recall, not with `--help` (tests/test_layout.py)
    import numpy as np

Lessons = dict[str, tuple[Reflection, "np.ndarray"]]  # id -> (reflection, unit vector)


class TaskCache:
    """The lessons of the tasks recalled so far, by task id. `lock` is held around a write to
    the store and its `put`/`drop` here, and around a task's `fill`, so that neither misses the
    other."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._tasks: dict[str, Lessons] = {}

    def clear(self) -> None:
        """Forget every task (a write failed part way: what it left is unknown)."""
        self._tasks.clear()

    def has(self, task_id: str) -> bool:
        return task_id in self._tasks

    def fill(self, task_id: str, reflections: Sequence[Reflection], vectors: Any) -> None:
        """Every stored lesson of `task_id`, read from the store."""
        self._tasks[task_id] = {
            r.id: (r, _unit(v)) for r, v in zip(reflections, vectors, strict=True)
        }

    def put(self, reflections: Sequence[Reflection], vectors: Sequence[Any]) -> None:
        """Lessons just written (an upsert): in their task if it is cached, out of any other."""
        self.drop([r.id for r in reflections])
        for r, v in zip(reflections, vectors, strict=True):
            if r.task_id in self._tasks:
                self._tasks[r.task_id][r.id] = (r, _unit(v))

    def drop(self, ids: Sequence[str]) -> None:
        """Lessons just deleted (or about to be replaced)."""
        for lessons in self._tasks.values():
            for rid in ids:
                lessons.pop(rid, None)

    def nearest(
        self, task_id: str, vector: Sequence[float], scope: RecallScope, n: int
    ) -> list[Recalled]:
        """The n lessons of a filled task nearest to `vector` that `scope` admits, nearest first,
        with Chroma's similarity."""
        admitted = [(r, v) for r, v in self._tasks[task_id].values() if scope.admits(r)]
        if not admitted or n <= 0:
            return []
        # As Chroma's cosine space: a distance of 1 - dot in float32, the similarity 1 - that.
        import numpy as np

        distance = np.float32(1.0) - np.stack([v for _, v in admitted]) @ _unit(vector)
        order = sorted(range(len(admitted)), key=lambda i: (distance[i], admitted[i][0].id))
        return [Recalled(admitted[i][0], 1.0 - float(distance[i])) for i in order[:n]]


def _unit(vector: Any) -> np.ndarray:
    import numpy as np

    v = np.asarray(vector, dtype=np.float32)
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else v  # subtle: a zero vector stays zero, as in Chroma's index
