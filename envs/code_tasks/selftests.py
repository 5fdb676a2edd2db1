"""Unit tests a model wrote for a task from its prompt alone (Reflexion's signal for code): the
assert statements in its answer that parse and call the function, each kept as its own test.
Whatever is dropped comes back with the reason, for the trace.

    >>> found = parse_self_tests("```python\\nassert add(1, 2) == 3\\nassert add(1,\\n```", "add")
    >>> found.tests, found.dropped
    (['assert add(1, 2) == 3'], ['does not parse: assert add(1,'])
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from reflexion.core.fences import fenced_blocks

MAX_TEST_CHARS = 1_000  # one assert; a longer one is more likely a program than a test


@dataclass
class SelfTests:
    tests: list[str] = field(default_factory=list)  # assert statements, in the answer's order
    dropped: list[str] = field(default_factory=list)  # "why: text" for each one left out


def parse_self_tests(answer: str, entry_point: str, limit: int = 5) -> SelfTests:
    """Up to `limit` distinct asserts that call `entry_point`, from the answer's fenced code
    (or the whole answer, when it has no fence)."""
    found = SelfTests()
    try:
        statements = _statements(_code(answer), found)
    except (RecursionError, MemoryError):
        found.dropped.append("the answer is too deeply nested to parse")
        return found
    for statement in statements:
        why = _unusable(statement, entry_point)
        if why:
            found.dropped.append(f"{why}: {_short(statement)}")
        elif statement in found.tests:
            found.dropped.append(f"a repeat: {_short(statement)}")
        elif len(found.tests) >= limit:
            found.dropped.append(f"over the limit of {limit}: {_short(statement)}")
        else:
            found.tests.append(statement)
    return found


def _code(answer: str) -> str:
    blocks = [block.code for block in fenced_blocks(answer)]  # CRLF read as newlines
    return "\n".join(blocks) if blocks else answer


def _statements(code: str, found: SelfTests) -> list[str]:
    """The code's top-level asserts; when it does not parse as a whole, each line that starts an
    assert is tried on its own, and the ones that still do not parse are dropped."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):  # ValueError: a null byte
        out = []
        for line in code.splitlines():
            if re.match(r"\s*assert\b", line):
                try:
                    ast.parse(line.strip())
                except (SyntaxError, ValueError):
                    found.dropped.append(f"does not parse: {_short(line.strip())}")
                    continue
                out.append(line.strip())
        return out
    return [
        ast.get_source_segment(code, node) or ast.unparse(node)
        for node in tree.body
        if isinstance(node, ast.Assert)
    ]


def _unusable(statement: str, entry_point: str) -> str:
    """Why an assert cannot serve as a test of `entry_point` ("" when it can)."""
    if len(statement) > MAX_TEST_CHARS:
        return f"longer than {MAX_TEST_CHARS} characters"
    node = ast.parse(statement).body[0]
    calls = [
        n
        for n in ast.walk(node)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == entry_point
    ]
    return "" if calls else f"does not call {entry_point}"


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
