"""The puzzle's own criterion, checked: an arithmetic expression that uses each of the four
numbers exactly once, with only + - * / and parentheses, and equals 24 in exact fractions.

    >>> check("(6 / (1 - 3/4))", (1, 3, 4, 6)).solved
    True
    >>> check("6 * 4 * 1 - 3", (1, 3, 4, 6)).feedback
    '`6 * 4 * 1 - 3` equals 21, not 24.'
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeGuard

TARGET = 24
MAX_CHARS = 200  # a longer "expression" is not an answer to this puzzle (and ast could choke)
OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


@dataclass(frozen=True)
class Verdict:
    """How far an expression got: 1.0 solved; 0.5 the puzzle's numbers, another value; 0.25 an
    arithmetic expression over other numbers; 0.0 no arithmetic expression."""

    value: float
    solved: bool
    feedback: str


class _NotArithmetic(ValueError):
    """The expression holds something besides numbers, + - * / and parentheses."""


def check(expression: str, numbers: tuple[int, ...]) -> Verdict:
    """The verdict on `expression` for the puzzle `numbers`, with feedback that says what is
    wrong: not an expression, other numbers than the puzzle's, division by zero, or the value."""
    shown = f"`{expression}`"
    try:
        tree = _parse(expression)
        used = _numbers(tree)
    except _NotArithmetic as exc:
        return Verdict(0.0, False, f"{shown} is not an arithmetic expression: {exc}.")
    wrong = Counter(used) != Counter(numbers)
    problems = [_numbers_problem(used, numbers)] if wrong else []
    try:
        value = _evaluate(tree)
    except ZeroDivisionError:
        problems.append(f"{shown} divides by zero.")
    else:
        if value != TARGET:
            problems.append(f"{shown} equals {_show(value)}, not {TARGET}.")
    if not problems:
        return Verdict(1.0, True, f"{shown} uses each number once and equals {TARGET}.")
    return Verdict(0.25 if wrong else 0.5, False, " ".join(problems))


def _parse(expression: str) -> ast.expr:
    if len(expression) > MAX_CHARS:
        msg = f"it is longer than {MAX_CHARS} characters"
        raise _NotArithmetic(msg)
    try:
        tree = ast.parse(expression.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        msg = "it does not parse"
        raise _NotArithmetic(msg) from None
    for node in ast.walk(tree):
        _allowed(node)
    return tree


def _allowed(node: ast.AST) -> None:
    if isinstance(node, ast.BinOp | ast.operator):
        if isinstance(node, ast.operator) and type(node) not in OPERATORS:
            msg = f"{_operator_name(node)} is not allowed, only + - * /"
            raise _NotArithmetic(msg)
        return
    if isinstance(node, ast.Constant) and _whole(node.value):
        return
    if isinstance(node, ast.Constant):
        msg = f"{node.value!r} is not a whole number"
    elif isinstance(node, ast.UnaryOp):
        msg = "a sign before a number or bracket (unary minus) is not allowed"
    elif isinstance(node, ast.Name | ast.Call | ast.Attribute):
        msg = "names and function calls are not allowed, only numbers, + - * / and parentheses"
    else:
        msg = "only numbers, + - * / and parentheses are allowed"
    raise _NotArithmetic(msg)


def _operator_name(node: ast.operator) -> str:
    names = {ast.Pow: "**", ast.FloorDiv: "//", ast.Mod: "%", ast.MatMult: "@"}
    return f"`{names.get(type(node), type(node).__name__)}`"


def _numbers(tree: ast.expr) -> list[int]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and _whole(n.value)]


def _whole(value: object) -> TypeGuard[int]:
    return type(value) is int  # not a bool, which is an int too


def _numbers_problem(used: list[int], numbers: tuple[int, ...]) -> str:
    listed = ", ".join(str(n) for n in sorted(used))
    puzzle = ", ".join(str(n) for n in sorted(numbers))
    return f"It uses {listed}, but the numbers are {puzzle}, each to be used exactly once."


def _evaluate(node: ast.expr) -> Fraction:
    if isinstance(node, ast.Constant) and _whole(node.value):
        return Fraction(node.value)
    assert isinstance(node, ast.BinOp)  # noqa: S101 - _parse admitted nothing else
    left, right = _evaluate(node.left), _evaluate(node.right)
    op = OPERATORS[type(node.op)]
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    return left / right


def _show(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value} (about {float(value):.4g})"
