"""Metadata a writer gives a lesson (`ReflexionMemory.remember(..., metadata=...)`: user, agent,
session, any key=value), checked before it is stored; filters name these keys or a lesson's own
provenance fields."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Scalar

# A lesson's own fields that a filter names as they are (metadata keys may not take these names)
PROVENANCE = ("id", "text", "run_id", "strategy", "env", "task_id", "seed", "episode", "kind")


def lesson_metadata(given: Mapping[str, Any] | None) -> dict[str, Scalar]:
    """Metadata for a lesson, checked: keys are words (letters, digits, `_`, `.`, `-`) other
    than the provenance fields a filter names as they are (PROVENANCE), values are strings,
    numbers or booleans. A UsageError says what is wrong.

    >>> lesson_metadata({"user": "alice", "turn": 3})
    {'user': 'alice', 'turn': 3}
    >>> lesson_metadata({"env": "prod"})
    Traceback (most recent call last):
    ...
    reflexion.core.errors.UsageError: metadata key 'env' is a lesson's own field: name it otherwise
    """
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        msg = f"metadata is a dict of key=value, got {type(given).__name__}"
        raise UsageError(msg)
    for key, value in given.items():
        if not isinstance(key, str) or not re.fullmatch(r"\w[\w.-]*", key):
            msg = f"metadata key {key!r}: expected a word (letters, digits, '_', '.', '-')"
            raise UsageError(msg)
        if key in PROVENANCE:
            msg = f"metadata key {key!r} is a lesson's own field: name it otherwise"
            raise UsageError(msg)
        if not isinstance(value, str | int | float | bool):
            msg = f"metadata {key}={value!r:.40}: a value is a string, a number or a boolean"
            raise UsageError(msg)
    return dict(given)
