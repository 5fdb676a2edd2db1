"""A kept run folder's memory: the `reflexion memory export` of its store (memory.jsonl.gz, or
memory.jsonl), which a published folder keeps instead of the store's database files. It is read
as it is (list, show, search, export, the web page); a change is refused with the way back,
`reflexion memory import`, which brings the export into a store that can be changed.

    >>> store = kept_export(Path("docs/results/2026-11-28-sql-three-bank"))  # doctest: +SKIP
    >>> len(store.lessons())                                               # doctest: +SKIP
    287
"""

from __future__ import annotations

from pathlib import Path

from memory.backend import ReadOnly
from reflexion.core.jsonl import read_numbered
from reflexion.core.lesson_records import Recalled, RecallScope, Reflection
from reflexion.curate.lessons import reflection_from

KEPT_MEMORY = ("memory.jsonl.gz", "memory.jsonl")  # in the run folder, first found is read


class KeptExport(ReadOnly):
    """The lessons of an export, oldest first, with no index of their own (`search` gives them
    with no similarity, so `memory search` embeds them with the run's embedding model, as it
    does a window's)."""

    kind = "export"

    def __init__(self, path: Path, reflections: list[Reflection]) -> None:
        self.path = path
        self._items = {r.id: r for r in reflections}  # the last line for an id wins, as import
        self.location = str(path)
        self.label = f"{path} (the run's memory as exported: read only)"

    def reflections(self) -> list[Reflection]:
        return sorted(self._items.values(), key=lambda r: (r.created, r.id))

    def get(self, reflection_id: str) -> Reflection | None:
        return self._items.get(reflection_id)

    def search(self, text: str, k: int) -> list[Recalled]:
        return [Recalled(r) for r in self.reflections()[:k]]

    def recall(self, text: str, scope: RecallScope, k: int) -> list[Recalled]:
        return self.search(text, k)

    def close(self) -> None:
        """Nothing is held open: the export was read whole."""


def kept_file(folder: Path) -> Path | None:
    """The export a kept run folder holds in place of its store, if any."""
    found = [folder / name for name in KEPT_MEMORY if (folder / name).is_file()]
    return found[0] if found else None


def kept_export(folder: Path) -> KeptExport | None:
    """The kept export of the run folder, read and checked line by line (a damaged line is a
    one-line UsageError); None when the folder holds none."""
    path = kept_file(folder)
    if path is None:
        return None
    rows = [reflection_from(raw, f"{path}:{n}") for n, raw in read_numbered(path)]
    return KeptExport(path, rows)


def refused(folder: Path) -> str:
    """Why the kept export of `folder` cannot be changed, and how to change a copy of it."""
    path = kept_file(folder)
    return (
        f"{folder} keeps its memory as an export ({path}), read only: "
        f"`reflexion memory import STORE {path}` brings it into a store that can be changed"
    )
