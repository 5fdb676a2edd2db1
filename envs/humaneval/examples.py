"""The examples in a HumanEval-style docstring, as checks.

HumanEval writes its examples in many styles; each is read here:

    doctest: a `>>> f(x)` line (and `...` lines), then the output
    f(x) == y    f(x) ==> y    f(x) => y    f(x) ➞ y    f(x) -> y    f(x) = y
    f(x) should return y    f(x) returns y    f(x)   # returns y    f(x) # => y
    Input: a = 1, b = [2]  /  Output: y      (also `name : value` lines, or a bare value)
    For lst = [1, 2] the output should be y  (also "the result should be")

    >>> prompt = "def inc(x):\\n    '''Add one.\\n    >>> inc(1)\\n    2\\n    '''\\n"
    >>> [(c.source, c.expected) for c in parse_examples(prompt, "inc")]
    [('inc(1)', '2')]

Parsing is forgiving; `HumanEvalEnv` keeps only the examples the reference solution passes, so a
misread example (or a typo in the docstring) is dropped rather than shown as a failure.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import tokenize

from envs.sandbox.checks import Check

SEPARATOR = re.compile(
    r"\s*(?:==>|=>|==|➞|->|#\s*=>|#\s*returns?\b|should return\b|returns?\b|=)\s*"
)
BULLET = re.compile(r"^(?:[*\-•]\s*|for\s+|assert\s+)")
CALL_START = re.compile(r"[A-Za-z_]\w*\(")
FOR_LINE = re.compile(r"^for (.+?),?\s+the (?:output|result) should be (.+)$", re.IGNORECASE)
NAME_COLON = re.compile(r"^([A-Za-z_]\w*)\s*:\s*(?=\S)")


def parse_examples(prompt: str, entry_point: str) -> list[Check]:
    """Every example found in the docstring of `entry_point`, each a check with approx floats."""
    text = _function_text(prompt, entry_point)
    lines = text.splitlines()
    defined = _defined_names(prompt)
    found = [
        *_doctests(lines),
        *_call_lines(lines, entry_point, defined),
        *_input_output(lines, entry_point),
        *_for_lines(lines, entry_point),
    ]
    unique: dict[tuple[str, str | None, str], Check] = {}
    for check in found:
        unique.setdefault((check.source, check.expected, check.setup), check)
    return list(unique.values())


def _function_text(prompt: str, entry_point: str) -> str:
    """The prompt from `def entry_point(` on: earlier helpers carry no examples of it."""
    match = re.search(rf"^\s*def {re.escape(entry_point)}\s*\(", prompt, re.MULTILINE)
    return prompt[match.start() :] if match else prompt


def _defined_names(prompt: str) -> set[str]:
    names = set(dir(builtins))
    names.update(m.group(1) for m in re.finditer(r"^\s*def (\w+)", prompt, re.MULTILINE))
    return names


def _doctests(lines: list[str]) -> list[Check]:
    checks: list[Check] = []
    setup: list[str] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped.startswith(">>>"):
            i += 1
            continue
        source = [stripped[3:].strip()]
        i += 1
        while i < len(lines) and lines[i].strip().startswith("..."):
            source.append(lines[i].strip()[3:].lstrip(" "))
            i += 1
        want = []
        while i < len(lines) and _is_want(lines[i]):
            want.append(lines[i].strip())
            i += 1
        check = _doctest_check("\n".join(source), "\n".join(want), "\n".join(setup))
        if isinstance(check, Check):
            checks.append(check)
        elif check is not None:
            setup.append(check)  # a statement (`x = 3`): later examples may use it
    return checks


def _is_want(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith((">>>", '"""', "'''"))


def _doctest_check(source: str, want: str, setup: str) -> Check | str | None:
    """A check for an expression; the source itself for a statement; None if unparseable."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return None
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        return source
    expr = body[0].value
    if want:
        return Check(source, source, want, setup, approx=True)
    # No output shown: `f(x) == y` written as a doctest, or a call that returns None.
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], ast.Eq):
        left, right = ast.unparse(expr.left), ast.unparse(expr.comparators[0])
        return Check(source, left, right, setup, approx=True)
    return Check(source, source, "None", setup, approx=True)


def _call_lines(lines: list[str], entry_point: str, defined: set[str]) -> list[Check]:
    checks = []
    for i, line in enumerate(lines):
        text = BULLET.sub("", line.strip())
        start = CALL_START.match(text)
        if start is None or line.strip().startswith(">>>"):
            continue
        name = start.group()[:-1]
        if name != entry_point and name in defined:
            continue  # a builtin or a helper, not a misnamed call of the function
        # a call may span lines (a nested list written over several)
        joined = "\n".join([text, *(x.strip() for x in lines[i + 1 : i + 8])])
        end = _closing_paren(joined, len(name))
        if end is None:
            continue
        call = entry_point + joined[len(name) : end + 1]
        rest = joined[end + 1 :].split("\n", 1)[0]
        separator = SEPARATOR.match(rest)
        expected = _leading_expression(rest[separator.end() :]) if separator else None
        if expected is not None and _is_expression(call):
            label = " ".join(call.split())
            checks.append(Check(label, call, _fix_booleans(expected), approx=True))
    return checks


def _input_output(lines: list[str], entry_point: str) -> list[Check]:
    checks = []
    for i, line in enumerate(lines):
        if not line.strip().startswith("Input:"):
            continue
        given = [line.strip()[len("Input:") :]]
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(("Output:", "Input:")):
            given.append(lines[j])
            j += 1
        if j == len(lines) or not lines[j].strip().startswith("Output:"):
            continue
        args = _arguments([x.strip() for x in given if x.strip()])
        expected = _leading_expression(lines[j].strip()[len("Output:") :])
        if args is not None and expected is not None:
            call = f"{entry_point}({', '.join(args)})"
            checks.append(Check(call, call, expected, approx=True))
    return checks


def _for_lines(lines: list[str], entry_point: str) -> list[Check]:
    checks = []
    for line in lines:
        match = FOR_LINE.match(line.strip())
        if match is None:
            continue
        parts = match.group(1).split(", ")
        # "For N = 1000, the sum of digits will be 1 the output should be ...": drop the prose
        args = next(
            (a for n in range(len(parts), 0, -1) if (a := _arguments(parts[:n])) is not None),
            None,
        )
        expected = _leading_expression(match.group(2))
        if args is not None and expected is not None:
            call = f"{entry_point}({', '.join(args)})"
            checks.append(Check(call, call, expected, approx=True))
    return checks


def _arguments(parts: list[str]) -> list[str] | None:
    """Positional argument sources from `a = 1, b = [2]`, `name : value` lines or a bare value.

    Names are dropped: docstrings do not always use the parameter names (`bucket_capacity`).
    """
    text = ", ".join(NAME_COLON.sub(r"\1 = ", part) for part in parts)
    try:
        call = ast.parse(f"f({text})", mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or not (call.args or call.keywords):
        return None
    values = [*call.args, *(k.value for k in call.keywords)]
    if any(k.arg is None for k in call.keywords):
        return None
    return [ast.unparse(v) for v in values]


def _closing_paren(text: str, start: int) -> int | None:
    """Index of the parenthesis closing the one at `start`, skipping strings and brackets."""
    depth, quote, i = 0, "", start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i if ch == ")" else None
        i += 1
    return None


def _leading_expression(text: str) -> str | None:
    """The longest start of `text` that is a Python expression: `19 - 5 - 6 = 8` -> `19 - 5 - 6`,
    `'No' (the name should ...)` -> `'No'`, `True.` -> `True`."""
    text = text.strip()
    ends: list[int] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] == 1 and token.type not in (tokenize.COMMENT, tokenize.NEWLINE):
                ends.append(token.end[1])
    except (tokenize.TokenError, SyntaxError):
        pass  # keep the tokens read so far
    for end in sorted(set(ends), reverse=True):
        chunk = text[:end].strip()
        # subtle: `1 + n / 2,` parses as a tuple, which prose never means
        if chunk and not chunk.endswith(",") and _is_expression(chunk):
            return chunk
    return None


def _is_expression(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except (SyntaxError, ValueError):
        return False
    return True


def _fix_booleans(expected: str) -> str:
    """`=> true` in prose means True."""
    return {"true": "True", "false": "False"}.get(expected, expected)
