"""Find the Python solution in a model's answer, whatever shape the answer has.

Handled: fenced blocks (the last one that defines the function wins), bare code, code with prose
around it, a function body without its signature (the prompt is put in front of it), and an
answer that repeats the prompt. Top-level demo code (asserts, prints, input loops) is dropped,
and the result carries the imports and helpers the prompt defines, so it runs on its own.

    >>> prompt = "import math\\n\\ndef area(r):\\n    '''Area of a circle.'''\\n"
    >>> answer = "Here:\\n```python\\ndef area(r):\\n    return math.pi * r * r\\n```"
    >>> print(extract_code(answer, "area", prompt))
    import math
    <BLANKLINE>
    def area(r):
        return math.pi * r * r
    <BLANKLINE>
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator

from reflexion.core.fences import PYTHON, fenced_blocks

PYTHON_LABELS = {"", *PYTHON}  # an answer in a bare fence is scored as Python
CODE_START = re.compile(r"^(?:def |async def |class |import |from \S+ import |@)")


class CodeExtractionError(ValueError):
    """The answer holds no usable code; the message says why, for the attempt's feedback."""


def extract_code(text: str, entry_point: str, prompt: str) -> str:
    """The complete program in `text` that defines `entry_point`, with the prompt's imports and
    helpers added where it lacks them. Raises CodeExtractionError when there is none."""
    text = text.replace("\r\n", "\n")
    if not text.strip():
        msg = "the answer is empty"
        raise CodeExtractionError(msg)
    syntax_errors: list[str] = []
    parsed = False
    pieces = list(_pieces(text))
    bodies = [_with_signature(p, prompt) for p in pieces if _looks_like_a_body(p)]
    for code in [*pieces, *bodies]:
        tree = _parse(code, syntax_errors)
        parsed = parsed or tree is not None
        if tree is not None and entry_point in _top_level_names(tree):
            code = _without_demo_code(code, tree)
            return _add_context(code, ast.parse(code), prompt, entry_point)
    if not parsed:
        first = syntax_errors[0] if syntax_errors else "nothing to parse"
        msg = f"no Python code in the answer parses ({first})"
    else:
        msg = f"the code in the answer does not define `{entry_point}`"
    raise CodeExtractionError(msg)


def _pieces(text: str) -> Iterator[str]:
    """Candidate programs, most likely first: fenced blocks from the last one, the whole text,
    then the text from its first code-looking line, cut at the end until it parses."""
    blocks = [block.code for block in fenced_blocks(text) if block.label in PYTHON_LABELS]
    yield from reversed(blocks)
    if blocks:
        return
    yield text
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if CODE_START.match(line)), None)
    if start is None:
        return
    for end in range(len(lines), start, -1):
        piece = "\n".join(lines[start:end])
        if _parse(piece, []) is not None:
            yield piece + "\n"
            return


def _looks_like_a_body(piece: str) -> bool:
    """Indented code, or code that returns at top level: a function body, not a usage example."""
    first = next((line for line in piece.split("\n") if line.strip()), "")
    if first[:1].isspace():
        return True
    try:
        tree = ast.parse(textwrap.dedent(piece))
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.Return) for node in tree.body)


def _with_signature(piece: str, prompt: str) -> str:
    """The prompt (signature and docstring) followed by `piece` as the function's body."""
    body = textwrap.indent(textwrap.dedent(piece).strip("\n"), "    ")
    return prompt.rstrip("\n") + "\n" + body + "\n"


def _parse(code: str, errors: list[str]) -> ast.Module | None:
    try:
        return ast.parse(code)
    except SyntaxError as exc:
        errors.append(f"line {exc.lineno}: {exc.msg}")
    except ValueError as exc:  # null bytes
        errors.append(str(exc))
    return None


def _without_demo_code(code: str, tree: ast.Module) -> str:
    """Drop top-level asserts, and statements and loops that print or read input: run at load,
    a model's own wrong assert or an `input()` would fail a correct function. Definitions,
    imports, assignments and set-up calls (`sys.setrecursionlimit(...)`) stay."""
    demo = [node for node in tree.body if _is_demo(node)]
    if not demo:
        return code
    kept = {
        line
        for node in tree.body
        if node not in demo
        for line in range(node.lineno - 1, node.end_lineno or node.lineno)
    }
    dropped: set[int] = set()
    for node in demo:
        span = set(range(node.lineno - 1, node.end_lineno or node.lineno))
        if not span & kept:  # `f(); x = 1` on one line: leave it alone
            dropped |= span
    return "\n".join(line for i, line in enumerate(code.split("\n")) if i not in dropped)


def _is_demo(node: ast.stmt) -> bool:
    if isinstance(node, ast.Assert):
        return True
    if not isinstance(node, ast.Expr | ast.For | ast.AsyncFor | ast.While):
        return False
    for inner in ast.walk(node):
        if isinstance(inner, ast.Assert):
            return True
        called = inner.func if isinstance(inner, ast.Call) else None
        if isinstance(called, ast.Name) and called.id in ("print", "input"):
            return True
    return False


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update(_bound_by_import(node))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _bound_by_import(node: ast.Import | ast.ImportFrom) -> set[str]:
    return {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}


def _add_context(code: str, tree: ast.Module, prompt: str, entry_point: str) -> str:
    """Put the prompt's imports and helpers the code lacks in front of it (after any
    `from __future__` import, which must stay first)."""
    have = _top_level_names(tree)
    missing = [segment for names, segment in _prompt_context(prompt, entry_point) if names - have]
    if not missing:
        return code
    future = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    split = max((n.end_lineno or 0) for n in future) if future else 0
    lines = code.split("\n")
    head = "\n".join(lines[:split]) + "\n" if split else ""
    return head + "\n".join(missing) + "\n\n" + "\n".join(lines[split:])


def _prompt_context(prompt: str, entry_point: str) -> list[tuple[set[str], str]]:
    """The prompt's top-level imports and helper functions, each with the names it binds. A
    HumanEval prompt ends in the open docstring of the function to write, so it gets a body."""
    for source in (prompt, prompt.rstrip() + "\n    pass\n"):
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        context = []
        for node in tree.body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = _bound_by_import(node)
            elif isinstance(node, ast.FunctionDef) and node.name != entry_point:
                names = {node.name}
            else:
                continue
            context.append((names, ast.get_source_segment(source, node) or ast.unparse(node)))
        return context
    return []
