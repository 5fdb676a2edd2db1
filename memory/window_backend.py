"""The `window` memory backend: the last k lessons of a task, kept in the run folder's
`window.jsonl` (memory.window), curated through memory.window_curation.

    >>> WINDOW.files
    ('window.jsonl',)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from memory.backend import Access, Backend, StoreSettings
from memory.window import WINDOW_FILE, WindowMemory
from memory.window_curation import WindowCuration
from reflexion.core.curation import Curated


def _open(settings: StoreSettings) -> WindowMemory:
    return WindowMemory(settings.folder / WINDOW_FILE)


def _find(settings: StoreSettings) -> WindowMemory | None:
    path = settings.folder / WINDOW_FILE
    return WindowMemory(path) if path.exists() else None


@contextlib.contextmanager
def _curate(settings: StoreSettings, access: Access) -> Iterator[Curated | None]:
    path = settings.folder / WINDOW_FILE
    if not path.exists() and access != "create":
        yield None
        return
    with WindowCuration(WindowMemory(path)) as store:
        yield store


WINDOW = Backend(
    "window",
    "the last k reflections of the task, a plain list (the original Reflexion code's memory)",
    open=_open,
    find=_find,
    files=(WINDOW_FILE,),
    where=lambda settings: f"no {settings.folder / WINDOW_FILE}",
    curate=_curate,
)
