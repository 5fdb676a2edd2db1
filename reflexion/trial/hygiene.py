"""Cheap checks of a lesson before it is stored, of every kind (a reflection, an exemplar, a
rule, the cheatsheet, an item, a skill). Does it say anything specific? A lesson that names
nothing from the task or from what the check found ("I will be more careful next time") is
stored with a flag saying why, so it can be found and forgotten. Is it a lesson at all? A reply
that copies the prompt's blanks back (`<a few words>`, or `*` for every field) is refused. No
model is called.

    >>> vague("Be more careful.", "Write f(x) returning x squared.", "f(2) returned 2, not 4")
    'too short to be specific (3 words)'
    >>> vague("I should have squared x: f(2) must return 4, not 2.",
    ...       "Write f(x) returning x squared.", "f(2) returned 2, not 4")
    ''
    >>> placeholder("<a few words>. When: <when it applies>. Do: <what to do>.")
    "echoes the prompt's placeholder '<a few words>'"
    >>> placeholder("*. When: *. Do: *.")
    "echoes the prompt's placeholders: a part with no word ('*.')"
    >>> placeholder("Signs. When: subtracting. Do: check the order.")
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
# A prompt's blank: three words or more, in lower case, between angle brackets ("<a few words>",
# "<what to do, in one or two sentences>"); `<n>` or `vector<int>` are not blanks.
BLANK = re.compile(r"<[a-z]+(?:,? [a-z]+){2,}>")
PARTS = re.compile(r"\b(?:title|when|do)\s*:", re.IGNORECASE)  # an item's fields


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


def placeholder(text: str) -> str:
    """Why `text` is a prompt's blanks copied back rather than a lesson ("" when it is not): it
    holds a blank (see BLANK), or one of its parts (an item's title, when and do) holds no word
    or number at all (see the module's examples)."""
    found = BLANK.search(text)
    if found:
        return f"echoes the prompt's placeholder {found[0]!r}"
    for part in (p.strip() for p in PARTS.split(text)):
        if part and not re.search(r"[^\W_]", part):  # no letter or digit: `*`, `...`
            return f"echoes the prompt's placeholders: a part with no word ({part!r})"
    return ""


def same_wording(a: str, b: str) -> bool:
    """Whether two lessons say the same words, case, spacing and a final stop aside. Not left
    to the embedding model: all-MiniLM-L6-v2 scores a rule and itself with a final period 0.84,
    under the near-copy bound, and on the SQL stream the list kept both.

    >>> same_wording("Use an INNER JOIN.", "use an  inner join"), same_wording("a b", "a c")
    (True, False)
    """
    return _plain(a) == _plain(b)


def _plain(text: str) -> str:
    return " ".join(text.split()).rstrip(".;:!").rstrip().casefold()
