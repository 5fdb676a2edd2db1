"""What a caller of ReflexionMemory names, checked: a task, how many lessons, how similar.

>>> as_task("t1").id, check_threshold(0.3)
('t1', 0.3)
"""

from __future__ import annotations

from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Recalled
from reflexion.core.records import Task


def as_task(task: Task | str) -> Task:
    """A Task, or a string that is both its id and its text (what recall searches by).

    >>> as_task("Plan a trip to Oslo.")
    Task(id='Plan a trip to Oslo.', prompt='Plan a trip to Oslo.', spec={}, question='')
    """
    if isinstance(task, Task):
        return task
    if not isinstance(task, str) or not task.strip():
        msg = f"a task is a reflexion Task or a non-empty string, got {task!r}"
        raise UsageError(msg)
    return Task(task, task)


def check_query(query: object) -> None:
    """A UsageError unless `query` is a text to search for."""
    if not isinstance(query, str) or not query.strip():
        msg = "a search needs some text to search for"
        raise UsageError(msg)


def check_k(k: object) -> None:
    """A UsageError unless `k`, the number of lessons asked for, is at least 1."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        msg = f"k is the number of lessons to return, at least 1; got {k!r}"
        raise UsageError(msg)


def check_threshold(threshold: object) -> float | None:
    """The least similarity a hit must have (None: any), checked to be in [-1, 1].

    >>> check_threshold(0.5), check_threshold(None)
    (0.5, None)
    """
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        msg = f"threshold is a similarity in [-1, 1]; got {threshold!r}"
        raise UsageError(msg)
    if not -1.0 <= threshold <= 1.0:
        msg = f"threshold is a similarity in [-1, 1]; got {threshold!r}"
        raise UsageError(msg)
    return float(threshold)


def above(hits: list[Recalled], threshold: float | None) -> list[Recalled]:
    """The hits at least `threshold` similar (all: None), in their order.

    >>> from reflexion.core.lesson_records import Reflection
    >>> r = Reflection("r", "t", "run", "s", "e", "t1", 0, 1, 0.0, 0.0)
    >>> [h.similarity for h in above([Recalled(r, 0.8), Recalled(r, 0.2)], 0.5)]
    [0.8]
    """
    if threshold is None:
        return hits
    return [h for h in hits if h.similarity is not None and h.similarity >= threshold]
