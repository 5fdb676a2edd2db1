"""Recall without paying for Chroma's metadata filter where it can be avoided.

A filtered query (`where`) costs about the same as scanning every row the filter admits: at 100k
lessons, 275 ms against 3 ms for the same query unfiltered (scripts/benchmark_recall.py). So a
recall first asks for the WIDEN x n nearest lessons of any provenance and keeps those the scope
admits (RecallScope.admits is the same rule as its filter). When n of them are admitted, they are
the n nearest admitted lessons, as the filtered query returns them (up to lessons tied at the
cutoff, and the index's approximation): every admitted lesson further out is further than all.
Only when fewer are admitted, and the store holds more
than were fetched, is the filtered query made.

    >>> hits = nearest_admitted(search, vector, scope, n=20)      # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from reflexion.core.records import Recalled, RecallScope

WIDEN = 4
Search = Callable[[Sequence[float], int, Any], list[Recalled]]  # vector, n, where -> nearest


def nearest_admitted(
    search: Search, vector: Sequence[float], scope: RecallScope, n: int, stored: int
) -> list[Recalled]:
    """The n lessons nearest to `vector` that `scope` admits, nearest first, from a store that
    holds `stored` lessons."""
    wide = search(vector, WIDEN * n, None)
    admitted = [h for h in wide if scope.admits(h.reflection)]
    if len(admitted) >= n or len(wide) >= stored:  # enough, or every lesson was looked at
        return admitted[:n]
    return search(vector, n, scope.where())
