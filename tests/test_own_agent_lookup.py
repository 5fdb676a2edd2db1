"""ReflexionMemory as a mem0 or LangMem user reaches for it: a free-text `search` with metadata
filters and a similarity threshold, `get_all` and `get`, and `update`, `delete`, `history` and
`revert` that share the store and the change history `reflexion memory` keeps. Real Chroma
stores on disk, with the hash embedder; the real sentence-transformers embedder in the slow
tests (an unrelated query gets nothing above a threshold; a second open is fast)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.documents import Document

from reflexion import ReflexionMemory, ReflexionRetriever, UsageError
from reflexion.cli import main

HASH = "hash-64"
DISCOUNT = "Apply the 10% loyalty discount before tax on the customer's invoice."
REFUND = "Refunds over 100 euros need a manager's approval first."
WEATHER = "Check the Oslo forecast before saying whether to pack an umbrella."


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    got = capsys.readouterr()
    return code, got.out, got.err


def three_users(path: Path, embedder: str = HASH) -> dict[str, str]:
    """A discount lesson of alice's, a refund lesson of bob's and a weather one of alice's, each
    on a task of its own, in session s1 (the weather one in s2). Text -> id."""
    with ReflexionMemory(path, embedder=embedder) as memory:
        made = [
            memory.remember("invoice-7", DISCOUNT, metadata={"user": "alice", "session": "s1"}),
            memory.remember("refund-3", REFUND, metadata={"user": "bob", "session": "s1"}),
            memory.remember("oslo-trip", WEATHER, metadata={"user": "alice", "session": "s2"}),
        ]
    return {r.text: r.id for r in made}


def texts(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.reflection.text for h in hits]


def test_search_takes_a_free_text_and_finds_any_tasks_lessons(tmp_path: Path) -> None:
    three_users(tmp_path / "agent")
    with ReflexionMemory(tmp_path / "agent", embedder=HASH) as memory:
        query = "the discount on the customer's invoice"
        assert memory.recall(query) == []  # a string names a task by its id: no such task
        hits = memory.search(query, k=2)
        assert texts(hits)[0] == DISCOUNT and len(hits) == 2
        assert hits[0].similarity is not None and hits[0].similarity > hits[1].similarity


def test_metadata_given_at_remember_is_kept_and_filtered_on(tmp_path: Path) -> None:
    ids = three_users(tmp_path / "agent")
    with ReflexionMemory(tmp_path / "agent", embedder=HASH) as memory:  # a later session
        assert memory.get(ids[DISCOUNT]).metadata == {"user": "alice", "session": "s1"}
        query = "Refunds over 100 euros need approval"  # nearest is bob's lesson
        assert texts(memory.search(query, k=1, filters={"user": "alice"}))[0] != REFUND
        assert texts(memory.search(query, k=5, filters={"user": "bob"})) == [REFUND]
        both = {"user": "alice", "session": "s2"}
        assert [r.text for r in memory.get_all(filters=both)] == [WEATHER]
        assert [r.text for r in memory.get_all(filters={"session": {"$in": ["s1"]}})] == [
            DISCOUNT,
            REFUND,
        ]
        assert len(memory.get_all()) == 3
        assert memory.get_all(filters={"task_id": "refund-3"})[0].text == REFUND
        # recall (credited, as in a loop) takes the same filters
        recalled = memory.recall("invoice-7", k=3, scope="global", filters={"user": "bob"})
        assert texts(recalled) == [REFUND]


def test_a_filter_narrows_the_store_before_the_k_nearest_are_taken(tmp_path: Path) -> None:
    """Ten lessons nearer the query than the one filtered for: the filter still finds it."""
    with ReflexionMemory(tmp_path / "agent", embedder=HASH) as memory:
        for n in range(10):
            memory.remember(f"t{n}", f"Quote the ticket number {n} in the reply.")
        far = memory.remember("t-far", "Greet the customer by name.", metadata={"team": "b"})
        hits = memory.search("Quote the ticket number in the reply.", k=1, filters={"team": "b"})
        assert [h.reflection.id for h in hits] == [far.id]
        scoped = memory.recall("t0", k=1, scope="global", filters={"team": "b"})
        assert [h.reflection.id for h in scoped] == [far.id]


def test_a_threshold_drops_the_hits_less_similar_than_it(tmp_path: Path) -> None:
    three_users(tmp_path / "agent")
    with ReflexionMemory(tmp_path / "agent", embedder=HASH) as memory:
        every = memory.search("Refunds over 100 euros need a manager", k=3)
        assert len(every) == 3
        least = every[0].similarity
        assert least is not None
        kept = memory.search("Refunds over 100 euros need a manager", k=3, threshold=least)
        assert texts(kept) == [REFUND]
        assert memory.search("zebra xylophone quasar", k=3, threshold=0.5) == []
        assert memory.recall("refund-3", threshold=0.99) == []  # its text is not the lesson's


def test_update_delete_history_and_revert_keep_the_history_the_cli_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agent"
    ids = three_users(path)
    rid = ids[DISCOUNT]
    with ReflexionMemory(path, embedder=HASH) as memory:
        new = memory.update(rid[:6], "Apply the 10% loyalty discount after tax.", why="policy")
        assert new.id == rid and memory.get(rid).text == new.text
        assert new.metadata == {"user": "alice", "session": "s1"}  # the lesson's, kept
        gone = memory.delete(rid[:6], why="retired")
        assert gone.id == rid and len(memory.get_all()) == 2
        assert [c.action for c in memory.history(rid[:6])] == ["edit", "forget"]
    code, out, err = cli(capsys, "memory", "history", str(path), rid[:6])
    assert code == 0, err
    assert "#1" in out and "edit (policy)" in out and "forget (retired)" in out
    assert cli(capsys, "memory", "revert", str(path), rid)[0] == 0  # the CLI undoes the forget
    with ReflexionMemory(path, embedder=HASH) as memory:
        assert memory.get(rid).text == "Apply the 10% loyalty discount after tax."
        assert [c.action for c in memory.history(rid)] == ["edit", "forget", "revert"]
        back = memory.revert(rid, to=1)  # as it was before the edit
        assert back is not None and back.text == DISCOUNT
        assert memory.search("loyalty discount", k=1)[0].reflection.text == DISCOUNT


def test_an_unknown_or_ambiguous_id_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    with ReflexionMemory(tmp_path / "agent", embedder=HASH) as memory:
        made = [memory.remember(f"t{n}", f"Lesson number {n}.") for n in range(20)]
        with pytest.raises(UsageError, match="no reflection with id 'zzzz'"):
            memory.get("zzzz")
        firsts = [r.id[0] for r in made]
        shared = next(c for c in firsts if firsts.count(c) > 1)
        with pytest.raises(UsageError, match="ambiguous"):
            memory.update(shared, "new text")
        memory.delete(made[0].id)
        with pytest.raises(UsageError, match="was forgotten"):
            memory.get(made[0].id)
        with pytest.raises(UsageError, match="empty"):
            memory.update(made[1].id, "  ")


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda m: m.search(""), "some text"),
        (lambda m: m.search("x", k=0), "at least 1"),
        (lambda m: m.search("x", threshold=2.0), "threshold"),
        (lambda m: m.search("x", filters={"user": {"$like": "a"}}), "unknown operator"),
        (lambda m: m.search("x", filters={"user": {"$in": "a"}}), "a list of scalars"),
        (lambda m: m.get_all(filters={"text": "x"}), "cannot filter on 'text'"),
        (lambda m: m.remember("t", "x", metadata={"env": "prod"}), "own field"),
        (lambda m: m.remember("t", "x", metadata={"tags": ["a"]}), "a string, a number"),
        (lambda m: m.remember("t", "x", metadata={"a b": 1}), "expected a word"),
    ],
)
def test_bad_filters_and_metadata_are_one_line_usage_errors(
    tmp_path: Path, call: object, says: str
) -> None:
    with ReflexionMemory(tmp_path / "agent", embedder=HASH) as memory:
        with pytest.raises(UsageError, match=says) as caught:
            call(memory)  # type: ignore[operator]
        assert "\n" not in str(caught.value)
        assert memory.get_all() == []  # nothing written by a refused call


def test_the_retriever_takes_the_same_filters_and_threshold(tmp_path: Path) -> None:
    three_users(tmp_path / "agent")
    with ReflexionMemory(tmp_path / "agent", embedder=HASH) as memory:
        mine = ReflexionRetriever(memory=memory, k=3, filters={"user": "alice"})
        docs: list[Document] = mine.invoke("Refunds over 100 euros need a manager")
        assert REFUND not in [d.page_content for d in docs] and len(docs) == 2
        assert docs[0].metadata["metadata"]["user"] == "alice"
        close = ReflexionRetriever(memory=memory, k=3, threshold=0.99)
        assert close.invoke("Refunds over 100 euros need a manager") == []


def test_metadata_travels_through_export_and_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    three_users(tmp_path / "agent")
    exported = tmp_path / "lessons.jsonl"
    assert (
        cli(capsys, "memory", "export", str(tmp_path / "agent"), "--output", str(exported))[0] == 0
    )
    code, _, err = cli(
        capsys, "memory", "import", str(tmp_path / "copy"), str(exported), "--embedder", HASH
    )
    assert code == 0, err
    with ReflexionMemory(tmp_path / "copy", embedder=HASH, create=False) as copy:
        assert [r.text for r in copy.get_all(filters={"user": "bob"})] == [REFUND]


def test_every_store_a_process_opens_shares_one_embedder(tmp_path: Path) -> None:
    with (
        ReflexionMemory(tmp_path / "a", embedder=HASH) as a,
        ReflexionMemory(tmp_path / "b", embedder=HASH) as b,
    ):
        assert a.store.embedder is b.store.embedder  # type: ignore[attr-defined]


@pytest.mark.slow  # the real sentence-transformers embedder
def test_an_unrelated_query_gets_nothing_above_the_threshold(tmp_path: Path) -> None:
    with ReflexionMemory(tmp_path / "agent") as memory:
        memory.remember("invoice-7", DISCOUNT)
        memory.remember("refund-3", REFUND)
        nearest = memory.search("unrelated weather", k=1)  # without one, the nearest comes back
        assert texts(nearest) == [DISCOUNT]
        assert memory.search("unrelated weather", threshold=0.3) == []
        assert memory.search("What is the capital of Peru?", threshold=0.3) == []
        on_topic = memory.search("customer discount on the invoice", threshold=0.3)
        assert texts(on_topic) == [DISCOUNT]


@pytest.mark.slow  # loads the real sentence-transformers model, in a process of its own
def test_a_second_open_in_a_process_takes_under_half_a_second(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[1] / "scripts" / "benchmark_memory_open.py"
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "agent")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    times = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    first, second = (float(times[k].split()[0]) for k in ("first open", "second open"))
    assert second < 0.5 < first, done.stdout
