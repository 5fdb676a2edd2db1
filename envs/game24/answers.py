"""Where the expression is in a reply: the last `Answer:` line, else the last line that looks
like an expression; or, when the model wrote Python, the code to run for it.

    >>> text_answer("Let me think.\\n6 / (1 - 3/4) = 24\\nAnswer: 6 / (1 - 3/4)")
    '6 / (1 - 3/4)'
    >>> text_answer("I tried 4 * 6 * (3 - 1) / 2 and more.\\n(4 + 4) * 3 = 24")
    '(4 + 4) * 3'
"""

from __future__ import annotations

import re

from reflexion.core.fences import FENCE, PYTHON, fenced_blocks

ANSWER = re.compile(r"^[\s*#>_-]*(?:final\s+)?answer\s*[*_]*\s*:\s*(.*)$", re.IGNORECASE)
EXPRESSION = re.compile(r"^[\d\s+\-*/().]*\d[\d\s+\-*/().]*$")
OPERATOR = re.compile(r"\d\s*\)*\s*[+\-*/]")
# notation a model may write for the same operators; rewriting it changes no expression
SYMBOLS = str.maketrans({"×": "*", "·": "*", "÷": "/", "−": "-", "–": "-", "\u2009": " "})
LATEX = (("\\times", "*"), ("\\cdot", "*"), ("\\div", "/"), ("\\left", ""), ("\\right", ""))
WRAPPERS = re.compile(r"\\boxed\{(.*)\}|\\\(|\\\)|\\\[|\\\]|[`$]")
BOLD = re.compile(r"^\*\*|\*\*$")  # markdown bold around an answer; `**` inside is Python's power


def python_code(reply: str) -> str | None:
    """The reply's ```python blocks as one program (run in order, as notebook cells), or None.

    >>> python_code("Here:\\n```python\\nx = 4\\n```\\nthen\\n```python\\nprint(x)\\n```")
    'x = 4\\n\\nprint(x)\\n'
    """
    blocks = [block.code for block in fenced_blocks(reply) if block.label in PYTHON]
    return "\n".join(blocks) if blocks else None


def text_answer(reply: str) -> str | None:
    """The expression a reply gives: the last `Answer:` line's (or the line after an empty
    one), else the last line that looks like an arithmetic expression; None when neither."""
    lines = [line.strip() for line in FENCE.sub(_unless_python, reply).splitlines()]
    lines = [line for line in lines if line]
    for i in range(len(lines) - 1, -1, -1):
        found = ANSWER.match(lines[i])
        if found:
            given = found.group(1) or (lines[i + 1] if i + 1 < len(lines) else "")
            return clean(given)
    return last_expression(lines)


def _unless_python(fence: re.Match[str]) -> str:
    """A fenced block's text, kept as text unless the block is Python (code is run, not read)."""
    return "" if fence.group(1).lower() in PYTHON else fence.group(2)


def last_expression(lines: list[str]) -> str | None:
    """The last of `lines` that is an arithmetic expression once cleaned (printed output, say).

    >>> last_expression(["Solution found:", "(6 / (1 - 3 / 4))", "done"])
    '(6 / (1 - 3 / 4))'
    """
    for line in reversed(lines):
        expression = clean(line.split(":")[-1])
        if EXPRESSION.match(expression) and OPERATOR.search(expression):
            return expression
    return None


def clean(text: str) -> str:
    """The expression in an answer as written: markup and a trailing `= 24` taken off.

    >>> clean("**$(8 \\\\div (3 - 8 \\\\div 3)) = 24$**")
    '(8 / (3 - 8 / 3))'
    """
    text = text.translate(SYMBOLS)
    for latex, plain in LATEX:
        text = text.replace(latex, f" {plain} " if plain else "")
    text = BOLD.sub("", text.strip()).strip()
    text = WRAPPERS.sub(lambda m: m.group(1) or "", text).strip().rstrip(".")
    text = BOLD.sub("", text).strip()
    if text.startswith("<") and text.endswith(">"):  # the prompt's `<expression>`, copied
        text = text[1:-1]
    if "=" in text:  # "expr = 24": the expression is what comes before the first sign
        text = text.split("=")[0]
    return re.sub(r"\s+", " ", text).strip()
