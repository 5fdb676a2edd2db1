"""`--memory-mode copy`: a run starts from a copy of a store (`--memory DIR` or `--chroma-url`)
in its own folder, so the lessons it learns never change the store it started from (the
transfer experiment needs the learned memory to stay as it was).

    >>> settings = StoreSettings(Path("runs/b"), memory="runs/a/memory")  # doctest: +SKIP
    >>> open_copy(settings).location                             # doctest: +SKIP
    'runs/b/memory'
"""

from __future__ import annotations

import dataclasses

from memory.backend import Access, StoreSettings, close_all
from memory.registry import get_backend, open_store
from reflexion.core.errors import UsageError
from reflexion.core.protocols import Memory


def open_copy(settings: StoreSettings) -> Memory:
    """The run's own store (in the run folder), holding every reflection of the source store
    it does not hold yet: a resumed run copies only what an interrupted copy missed."""
    if not settings.memory and not settings.chroma_url:
        msg = "--memory-mode copy needs a store to copy: --memory DIR or --chroma-url URL"
        raise UsageError(msg)
    source = open_store(settings, Access.READ)
    if source is None:
        backend = get_backend(settings.backend)
        where = backend.where(settings) if backend.where else settings.memory
        msg = f"--memory-mode copy: nothing to copy ({where})"
        raise UsageError(msg)
    try:
        lessons = source.reflections()
        if not lessons:
            place = settings.memory or settings.chroma_url
            msg = f"--memory-mode copy: nothing to copy (no reflections in the store at {place})"
            raise UsageError(msg)
        own = open_store(dataclasses.replace(settings, memory=None, chroma_url=None), Access.RUN)
        try:
            held = {r.id for r in own.reflections()}
            own.add([r for r in lessons if r.id not in held])
        except BaseException:
            close_all([own])
            raise
    finally:
        close_all([source])
    return own
