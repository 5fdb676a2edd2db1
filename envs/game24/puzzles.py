"""The puzzles of the Game of 24: every multiset of four numbers from 1 to 13 that can make 24,
with how many ways it can, found by brute force in exact fractions.

A *way* is one written expression: an order of the four numbers (equal numbers are not told
apart, so 3, 3, 8, 8 has 6 orders, not 24), one of the 4^3 choices of operators and one of the
5 bracketings, whose value is exactly 24. `a * b` and `b * a` are two ways, as are
`(a + b) + c` and `a + (b + c)`: the count is of expressions, not of ideas, and it is large
when many expressions work, which is what makes a puzzle easy to hit.

    >>> ways((1, 3, 4, 6)), ways((3, 3, 8, 8))
    (1, 1)
    >>> len(solvable())
    1362
    >>> difficulty((1, 1, 4, 6)), difficulty((1, 3, 4, 6))
    ('easy', 'hard')
"""

from __future__ import annotations

import functools
import itertools
import random
from fractions import Fraction

NUMBERS = range(1, 14)  # the cards of one suit: ace to king
TARGET = Fraction(24)
Key = tuple[int, int]  # a fraction as (numerator, denominator): it hashes fast


def ways(numbers: tuple[int, ...]) -> int:
    """How many expressions over `numbers` (each once, any order) equal 24.

    >>> ways((1, 1, 1, 1))
    0
    """
    return sum(_ways_in_order(order) for order in set(itertools.permutations(numbers)))


@functools.cache
def counts() -> dict[tuple[int, ...], int]:
    """Every multiset of four numbers from 1 to 13 (sorted), with its count of ways."""
    return {ms: ways(ms) for ms in itertools.combinations_with_replacement(NUMBERS, 4)}


@functools.cache
def solvable() -> tuple[tuple[int, ...], ...]:
    """The multisets with at least one way, sorted."""
    return tuple(ms for ms, n in counts().items() if n)


@functools.cache
def cuts() -> tuple[int, int]:
    """The counts that split the solvable puzzles into terciles: below the first is hard, from
    the second on is easy. Puzzles with equal counts share a bucket, so thirds are not exact."""
    ordered = sorted(counts()[ms] for ms in solvable())
    return ordered[len(ordered) // 3], ordered[2 * len(ordered) // 3]


def difficulty(numbers: tuple[int, ...]) -> str:
    """easy, medium or hard: the tercile of the puzzle's count of ways (fewer ways is harder)."""
    n, (low, high) = counts()[tuple(sorted(numbers))], cuts()
    return "hard" if n < low else "easy" if n >= high else "medium"


def draw(count: int, seed: int) -> list[tuple[int, ...]]:
    """`count` distinct solvable puzzles, the same ones for the same seed on every machine.

    >>> draw(2, seed=1) == draw(2, seed=1) != draw(2, seed=2)
    True
    """
    return random.Random(seed).sample(solvable(), count)


def _ways_in_order(order: tuple[int, ...]) -> int:
    """Ways with the numbers in this order: over every split into a left and a right part, the
    pairs (left value, right value) that one operator turns into 24. The right value each
    operator needs is looked up instead of tried, which makes the full table take a second."""
    total = 0
    for i in range(1, len(order)):
        right = _values(order[i:])
        for left, n in _values(order[:i]).items():
            total += n * sum(right.get(need, 0) for need in _needs(left))
    return total


@functools.cache
def _values(order: tuple[int, ...]) -> dict[Key, int]:
    """Every value the numbers make in this order, with how many expressions make it."""
    if len(order) == 1:
        return {(order[0], 1): 1}
    out: dict[Key, int] = {}
    for i in range(1, len(order)):
        right = [(Fraction(*b), m) for b, m in _values(order[i:]).items()]
        for a_key, n in _values(order[:i]).items():
            a = Fraction(*a_key)
            for b, m in right:
                for value in (a + b, a - b, a * b, a / b if b else None):
                    if value is not None:
                        key = (value.numerator, value.denominator)
                        out[key] = out.get(key, 0) + n * m
    return out


@functools.cache
def _needs(left: Key) -> tuple[Key, ...]:
    """The right values that make 24 with `left` by +, -, * and / (none by * or / from 0)."""
    a = Fraction(*left)
    found = [TARGET - a, a - TARGET] + ([TARGET / a, a / TARGET] if a else [])
    return tuple((f.numerator, f.denominator) for f in found)
