"""Checks from a task's test code, and the prompt's own code the tests rely on.

>>> [c.source for c in assert_checks(["x = 2\\nassert f(x) == 4"])]
['f(x)']
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from envs.sandbox.checks import Check


def assert_checks(tests: Sequence[str]) -> list[Check]:
    """Checks from test code: each `assert A == B` compares A with B (so feedback can say what A
    was); the statements before an assert, earlier asserts' expressions included, are its setup.

        >>> [c.source for c in assert_checks(["x = 2\\nassert f(x) == 4"])]
        ['f(x)']
    """
    checks: list[Check] = []
    for test in tests:
        body = ast.parse(test).body
        if not any(isinstance(node, ast.Assert) for node in body):
            checks.append(Check(test.strip(), test))  # statements only: pass if nothing raises
            continue
        setup: list[str] = []
        for node in body:
            segment = ast.get_source_segment(test, node) or ast.unparse(node)
            if isinstance(node, ast.Assert):
                checks.append(_assert_check(node, segment, test, "\n".join(setup)))
                # later asserts see its side effects (a call that mutates), not its verdict
                segment = ast.get_source_segment(test, node.test) or ast.unparse(node.test)
            setup.append(segment)
    return checks


def task_helpers(prompt: str, entry_point: str) -> str:
    """The prompt's own code the tests may rely on: its imports and its finished functions
    besides the one asked for (HumanEval/32 gives `poly` and asks for `find_zero`; its tests
    call `poly`). Passed to `run_checks` as `helpers`, so the candidate cannot redefine them,
    nor put an object of its own in place of a module the tests use. Classes stay the code's
    (tests build its objects), and so do stubs the code is meant to fill in. Empty when the
    prompt is not Python.

        >>> task_helpers("import math\\ndef f(x):\\n    return x\\ndef g(x):\\n    ...", "g")
        'import math\\ndef f(x):\\n    return x'
    """
    try:
        body = ast.parse(prompt).body
    except SyntaxError:
        return ""
    kept = [
        node
        for node in body
        if isinstance(node, ast.Import | ast.ImportFrom)
        or (isinstance(node, ast.FunctionDef) and node.name != entry_point and not _stub(node))
    ]
    return "\n".join(ast.get_source_segment(prompt, node) or ast.unparse(node) for node in kept)


def _stub(function: ast.FunctionDef) -> bool:
    """A body of only a docstring, `pass` or `...`: for the code to write."""
    return all(
        isinstance(node, ast.Pass)
        or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        for node in function.body
    )


def _assert_check(node: ast.Assert, segment: str, test: str, setup: str) -> Check:
    test_expr = node.test
    is_equality = (
        isinstance(test_expr, ast.Compare)
        and len(test_expr.ops) == 1
        and isinstance(test_expr.ops[0], ast.Eq)
    )
    if is_equality and isinstance(test_expr, ast.Compare):
        left = ast.get_source_segment(test, test_expr.left) or ast.unparse(test_expr.left)
        right = ast.get_source_segment(test, test_expr.comparators[0])
        return Check(segment, left, right or ast.unparse(test_expr.comparators[0]), setup)
    return Check(segment, segment, None, setup)
