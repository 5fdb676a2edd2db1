"""Fenced blocks in a model's reply: the one reading that the code envs' checks, Game of 24's
code rounds and `skills` share, so a program `skills` keeps is the program the check ran.

A fence is three backticks at the start of a line, an optional language label (anything after
it on that line is ignored), and the block up to the closing backticks, or to the end of the
reply when an answer was cut off at its token limit before it closed the block.

    >>> reply = "Try:\\n```Python\\nprint(1)\\n```\\nand\\n```\\nx = 2"
    >>> [(f.label, f.code) for f in fenced_blocks(reply)]
    [('python', 'print(1)\\n'), ('', 'x = 2')]
"""

from __future__ import annotations

import re
from typing import NamedTuple

# a fence opens at the start of a line (indented, as in a list, or not): three backticks in
# prose ("a ```python block") open nothing, though one in 427 replies of the kept traces read so
FENCE = re.compile(r"^[ \t]*```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL | re.M)
PYTHON = frozenset({"python", "py", "python3", "py3"})


class Fenced(NamedTuple):
    label: str  # the language label, lower-cased; "" when the fence names none
    code: str


def fenced_blocks(reply: str) -> list[Fenced]:
    """Every fenced block in `reply`, in order, with Windows line ends read as newlines."""
    text = reply.replace("\r\n", "\n")
    return [Fenced(m.group(1).lower(), m.group(2)) for m in FENCE.finditer(text)]
