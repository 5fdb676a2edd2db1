"""Named HumanEval subsets. Each is chosen by a rule that reads only what a strategy itself sees
(the visible docstring examples), never the held-out tests, and says how it was made, so that
`--env humaneval:NAME` is a fixed, documented list of problems.

    >>> SUBSETS["first-miss"].ids[:2]                   # doctest: +SKIP
    (10, 32)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Subset:
    ids: tuple[int, ...]  # HumanEval/<id>, in file order
    how: str  # how the list was chosen, and from which run


SUBSETS: dict[str, Subset] = {}
