"""A process's own recent writes to a Chroma server, given back to its own reads.

A `chroma run` server (chromadb 1.5.9) can leave a row out of a query's answer though it
acknowledged the write: with three processes making a new collection and writing to it at once,
a raw query right after a write missed the row 8 times in 360, even with
`n_results` equal to the count (scripts/chroma_visibility.py). The row was found again 3 s
later. Whether the server read a stale state or its approximate index missed a row of a tiny
collection is not known. In a Ray run such a miss makes a trial recall no lesson at episode 2
though it stored one at episode 1. So a store on a server remembers what this process wrote in
the last `HOLD_S` seconds, and an unfiltered search adds any of those rows it was not given.
A row deleted by another process in that time can still come back from this process's search.

    >>> recent = Recent()
    >>> from reflexion.core.lesson_records import Reflection
    >>> r = Reflection("r1", "check the sign", "run", "reflexion", "quad", "t1", 0, 1, 0.0, 0.0)
    >>> recent.put([r], [[1.0, 0.0]])
    >>> [(h.reflection.id, h.similarity) for h in recent.merged([], [1.0, 0.0], k=3)]
    [('r1', 1.0)]
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from reflexion.core.lesson_records import Recalled, Reflection

HOLD_S = 30.0  # the server was seen to give a row back within 3 s


class Recent:
    """The rows this process wrote lately, with their vectors, by id (thread-safe)."""

    def __init__(self, hold_s: float = HOLD_S) -> None:
        self._rows: dict[str, tuple[float, Reflection, Sequence[float]]] = {}
        self._hold_s, self._lock = hold_s, threading.Lock()

    def put(self, reflections: Sequence[Reflection], vectors: Sequence[Sequence[float]]) -> None:
        now = time.monotonic()
        with self._lock:
            for r, v in zip(reflections, vectors, strict=True):
                self._rows[r.id] = (now, r, [float(x) for x in v])

    def drop(self, ids: Sequence[str]) -> None:
        with self._lock:
            for i in ids:
                self._rows.pop(i, None)

    def merged(self, found: list[Recalled], vector: Sequence[float], k: int) -> list[Recalled]:
        """`found` (nearest first) with this process's recent rows it lacks, the k nearest."""
        with self._lock:
            since = time.monotonic() - self._hold_s
            self._rows = {i: row for i, row in self._rows.items() if row[0] >= since}
            seen = {h.reflection.id for h in found}
            missing = [(r, v) for _, r, v in self._rows.values() if r.id not in seen]
        if not missing:
            return found
        added = [Recalled(r, _cosine(vector, v)) for r, v in missing]
        return sorted(found + added, key=lambda h: -(h.similarity or 0.0))[:k]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """1 - the cosine distance, as the server gives it: in float32, sent as its shortest text
    (so a row given back here has the similarity the server would give it, to float32's last
    digit or so)."""
    import numpy as np  # not at import: `reflexion --help` loads no numpy

    x, y = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    norm = np.linalg.norm(x) * np.linalg.norm(y)
    if not norm:
        return 0.0
    distance = np.float32(1.0) - np.dot(x / np.linalg.norm(x), y / np.linalg.norm(y))
    return 1.0 - float(str(np.float32(distance)))
