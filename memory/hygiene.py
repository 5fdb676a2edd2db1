"""A cheap check of a reflection before it is stored: does it say anything specific? A lesson
that names nothing from the task or from what the check found ("I will be more careful next
time") is stored with a flag saying why, so it can be found and forgotten. No model is called.

    >>> vague("Be more careful.", "Write f(x) returning x squared.", "f(2) returned 2, not 4")
    'too short to be specific (3 words)'
    >>> vague("I should have squared x: f(2) must return 4, not 2.",
    ...       "Write f(x) returning x squared.", "f(2) returned 2, not 4")
    ''
"""

from __future__ import annotations

import re

MIN_WORDS = 6
WORD = re.compile(r"[a-z_][a-z0-9_]{3,}|\d+")
_COMMON = """
about after again answer attempt before better careful check code could correct every
failed first from have into make more must next need should task than that their them then
there these this time were what when will with would your
"""
COMMON = frozenset(_COMMON.split())  # words every lesson may use


def vague(text: str, task: str, feedback: str) -> str:
    """Why `text` looks like an empty lesson ("" when it names something specific): too short,
    or sharing no word (of four letters or more, or number) with the task or its feedback."""
    words = text.split()
    if len(words) < MIN_WORDS:
        return f"too short to be specific ({len(words)} words)"
    own = set(WORD.findall(text.lower())) - COMMON
    context = set(WORD.findall(f"{task}\n{feedback}".lower())) - COMMON
    if not own & context:
        return "names nothing from the task or from what the check found"
    return ""
