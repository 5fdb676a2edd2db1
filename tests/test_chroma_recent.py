"""A store on a Chroma server gives a process its own recent writes back, where the server's
answers leave them out for a moment (memory.chroma.recent; scripts/chroma_visibility.py
reproduces the server's lag with a real `chroma run`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import chromadb

from memory import HashEmbedder
from memory.chroma.rows import Rows
from reflexion.core.lesson_records import Reflection

EMBED = HashEmbedder(64)


class Lagging:
    """A real Chroma collection whose count and query do not see the rows named in `hidden`:
    what a `chroma run` server answered for a moment after another process's write."""

    def __init__(self, collection: Any) -> None:
        self.inner, self.hidden = collection, set[str]()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def count(self) -> int:
        return int(self.inner.count()) - len(self.hidden)

    def query(self, **kwargs: Any) -> Any:
        kwargs["n_results"] = self.inner.count()
        res = self.inner.query(**kwargs)
        keep = [i for i, rid in enumerate(res["ids"][0]) if rid not in self.hidden]
        return {
            key: [[column[0][i] for i in keep]] if isinstance(column, list) else column
            for key, column in res.items()
        }


def rows_of(tmp_path: Path, server: bool) -> tuple[Rows, Lagging]:
    client = chromadb.PersistentClient(path=str(tmp_path / "store"))
    lagging = Lagging(client.get_or_create_collection("lessons", embedding_function=None))
    rows = Rows(
        lagging,
        client,
        location="test",
        errors=(chromadb.errors.ChromaError,),
        embed=EMBED.embed,
        describe=lambda: "test",
        folder=None if server else tmp_path / "store",  # no folder: a server's rows
    )
    return rows, lagging


def lesson(rid: str, text: str) -> Reflection:
    return Reflection(rid, text, "run", "reflexion", "jsonl:x", "t1", 0, 1, 0.0, 1.0)


def test_a_server_store_finds_its_own_write_that_the_server_left_out(tmp_path: Path) -> None:
    rows, lagging = rows_of(tmp_path, server=True)
    rows.add([lesson("other", "a lesson from another process"), lesson("mine", "return the list")])
    lagging.hidden.add("mine")
    found = rows.search(EMBED.embed(["return the list"])[0], 3, None)
    assert [h.reflection.id for h in found] == ["mine", "other"]  # nearest first
    assert found[0].reflection == lesson("mine", "return the list")
    assert found[0].similarity is not None and abs(found[0].similarity - 1.0) < 1e-6
    rows.delete(["mine"])  # a row this process deleted is not given back
    assert [h.reflection.id for h in rows.search(EMBED.embed(["x"])[0], 3, None)] == ["other"]


def test_a_folder_store_answers_as_its_collection_does(tmp_path: Path) -> None:
    rows, lagging = rows_of(tmp_path, server=False)  # an embedded store does not lag
    rows.add([lesson("mine", "return the list")])
    lagging.hidden.add("mine")
    assert rows.search(EMBED.embed(["return the list"])[0], 3, None) == []
