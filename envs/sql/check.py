"""Does a query's result match the gold result? Rows compare as a multiset (as a list only when
the question asks for an order); column names do not count; numbers match within float
rounding, and 3 equals 3.0. The verdict's words show the shapes, never the gold rows.

    >>> gold = Result(("n", "s"), ((1, "a"), (2.5, "b")))
    >>> verdict(Result(("x", "y"), ((2.5000000001, "b"), (1.0, "a"))), gold, ordered=False)
    (True, 'the result matches')
    >>> verdict(Result(("x", "y"), ((1, "a"),)), gold, ordered=False)
    (False, 'your query returned 1 row x 2 columns; expected 2 rows x 2 columns')
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from envs.sql.run import MAX_ROWS, Cell, Result

REL, ABS = 1e-6, 1e-9
MATCHES = "the result matches"


def verdict(got: Result, gold: Result, ordered: bool) -> tuple[bool, str]:
    """Whether `got` answers as `gold` does, and why not in words that show no gold value."""
    if got.problem:
        return False, got.problem
    expected = shape(gold)
    if got.truncated:
        return False, f"your query returned more than {MAX_ROWS:,} rows; expected {expected}"
    if shape(got) != expected:
        return False, f"your query returned {shape(got)}; expected {expected}"
    if ordered and same_rows(got.rows, gold.rows):
        return True, MATCHES
    if not same_rows(_sorted(got.rows), _sorted(gold.rows)):
        return False, f"your query returned {expected}, as expected, but the values differ"
    if ordered:
        return False, "the rows are right but not in the order asked"
    return True, MATCHES


def shape(result: Result) -> str:
    """'5 rows x 2 columns'."""
    rows, columns = len(result.rows), len(result.columns)
    return f"{rows} row{'s' * (rows != 1)} x {columns} column{'s' * (columns != 1)}"


def same_rows(a: Sequence[Sequence[Cell]], b: Sequence[Sequence[Cell]]) -> bool:
    """Row by row, cell by cell, with `same_cell`."""
    return len(a) == len(b) and all(
        len(x) == len(y) and all(map(same_cell, x, y)) for x, y in zip(a, b, strict=True)
    )


def same_cell(a: Cell, b: Cell) -> bool:
    """Equal, with numbers equal within float rounding (an int and a float may be equal)."""
    if _number(a) and _number(b):
        return math.isclose(float(a), float(b), rel_tol=REL, abs_tol=ABS)  # type: ignore[arg-type]
    return type(a) is type(b) and a == b


def _number(value: Cell) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _sorted(rows: Sequence[Sequence[Cell]]) -> list[Sequence[Cell]]:
    # subtle: numbers sort by a rounded value, so that two that match within REL sit in the
    # same place in both lists; then `same_rows` compares them with the tolerance.
    return sorted(rows, key=lambda row: tuple(_key(cell) for cell in row))


def _key(cell: Cell) -> tuple[int, float, str]:
    if cell is None:
        return (0, 0.0, "")
    if _number(cell):
        return (1, float(f"{float(cell):.5g}"), "")
    return (2, 0.0, str(cell))
