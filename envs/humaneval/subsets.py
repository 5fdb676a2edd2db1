"""Named HumanEval subsets. Each is chosen by a rule that reads only what a strategy itself sees
(the visible docstring examples), never the held-out tests, and says how it was made, so that
`--env humaneval:NAME` is a fixed, documented list of problems.

    >>> SUBSETS["first-miss"].ids[:3]
    (10, 26, 32)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Subset:
    ids: tuple[int, ...]  # HumanEval/<id>, in file order
    how: str  # how the list was chosen, and from which run


def _ids(text: str) -> tuple[int, ...]:
    """HumanEval/<id> numbers, written as text so a list reads as the table it is."""
    return tuple(int(n) for n in text.split())


FIRST_MISS = _ids("""
    10 26 32 33 67 69 74 75 90 91 93 101 102 103 113 117 118 119 120 121 126
    127 128 129 130 132 135 137 139 142 144 145 148 156 163
""")
FIRST_MISS_20 = _ids("10 26 33 69 75 90 93 102 113 117 119 121 127 128 130 135 139 142 145 156")
HOW = (
    "the problems whose first answer from the default model (qwen2.5-coder-1.5b, greedy, "
    "answers prefilled) failed one of its own docstring examples, in the `single` run of "
    "scripts/benchmark_humaneval.py on all 164 problems (2026-11-23), found by "
    "scripts/choose_subset.py; no held-out verdict was read"
)
SUBSETS: dict[str, Subset] = {
    "first-miss": Subset(FIRST_MISS, HOW),
    "first-miss-20": Subset(FIRST_MISS_20, HOW + "; 20 of the 35, evenly spaced (--count 20)"),
}
