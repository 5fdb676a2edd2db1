"""Errors that mean bad input, not a bug: the CLI prints them as one line and exits 2."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ReflexionError(Exception):
    """Base for every error a user can fix (bad arguments, a missing or foreign store, ...)."""


class UsageError(ReflexionError):
    """A bad argument or input file."""


class StoreError(ReflexionError):
    """A memory store that is missing, corrupt, or made with another embedding model."""


def did_you_mean(given: str, known: Iterable[str]) -> str:
    """` (did you mean NAME?)` for the known name most like a mistyped one, else nothing.

    >>> did_you_mean("humanevl", ["humaneval", "quadratic"]), did_you_mean("zzz", ["sql"])
    (' (did you mean humaneval?)', '')
    """
    near = difflib.get_close_matches(given, list(known), n=1)
    return f" (did you mean {near[0]}?)" if near else ""
