"""ChromaMemory beyond the Memory contract: persistence, refusing foreign or broken stores, ranking,
threads, a `chroma run` server, and the real sentence-transformers embedder (slow)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from chroma_server import free_port

from memory import ChromaMemory, HashEmbedder, SentenceTransformerEmbedder
from reflexion.core.errors import StoreError, UsageError
from reflexion.core.lesson_records import RecallScope, Reflection

ROOT = Path(__file__).resolve().parents[1]


def refl(rid: str, text: str, **kw: object) -> Reflection:
    base: dict[str, object] = dict(
        id=rid, text=text, run_id="R", strategy="reflexion", env="quad", task_id="t1", seed=0,
        episode=1, score=-1.0, created=1_700_000_000.0 + len(rid),
    )  # fmt: skip
    base.update(kw)
    return Reflection(**base)  # type: ignore[arg-type]


LESSONS = [
    refl("a", "the loop stopped one element early"),
    refl("b", "convert grams to kilograms before comparing"),
    refl("c", "the gradient step had the wrong sign"),
]
SCOPE = RecallScope(env="quad", task_id="t1", run_id="R", strategy="reflexion", seed=0, episode=2)


def run_python(code: str) -> str:
    """Run code in a fresh interpreter (a new process: no Chroma client cache, no imports)."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def assert_one_line(e: pytest.ExceptionInfo[StoreError], *parts: str) -> None:
    text = str(e.value)
    assert "\n" not in text
    for part in parts:
        assert part in text


# -- persistence and refusing stores -----------------------------------------------------------


def test_reflections_persist_across_processes(tmp_path: Path) -> None:
    ChromaMemory(tmp_path, embedder=HashEmbedder()).add(LESSONS)
    assert ChromaMemory(tmp_path, embedder=HashEmbedder()).reflections() == LESSONS
    out = run_python(f"""
        import json
        from memory import ChromaMemory
        m = ChromaMemory.open({str(tmp_path)!r})
        print(json.dumps([r.to_dict() for r in m.reflections()]))
        print(json.dumps(m.info()))
    """)
    rows, info = out.splitlines()
    assert [Reflection.from_dict(d) for d in json.loads(rows)] == LESSONS
    assert json.loads(info)["embedding_model"] == "hash-64"
    assert json.loads(info)["count"] == 3


def test_refuses_a_store_made_with_another_embedder(tmp_path: Path) -> None:
    ChromaMemory(tmp_path, embedder=HashEmbedder(64)).add(LESSONS)
    with pytest.raises(StoreError) as e:
        ChromaMemory(tmp_path, embedder=HashEmbedder(32))
    assert_one_line(e, "hash-64", "hash-32", str(tmp_path))
    assert ChromaMemory.open(tmp_path).embedder.name == "hash-64"  # open() adopts the model


def test_create_false_needs_an_existing_store_and_collection(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as e:
        ChromaMemory(tmp_path / "missing", embedder=HashEmbedder(), create=False)
    assert_one_line(e, "cannot open Chroma store at", "missing")
    assert not (tmp_path / "missing").exists()
    ChromaMemory(tmp_path, embedder=HashEmbedder())
    with pytest.raises(StoreError) as e:
        ChromaMemory(tmp_path, embedder=HashEmbedder(), collection="other", create=False)
    assert_one_line(e, "other")


@pytest.mark.parametrize(
    ("what", "make"),
    [
        ("garbage sqlite", lambda d: (d / "chroma.sqlite3").write_bytes(b"not a database" * 99)),
        ("a folder of other files", lambda d: (d / "notes.txt").write_text("hello")),
        ("a file, not a folder", lambda d: None),
    ],
)
def test_broken_or_foreign_paths_raise_store_error(tmp_path: Path, what: str, make: object) -> None:
    target = tmp_path / "store"
    if what.startswith("a file"):
        target.write_text("x")
    else:
        target.mkdir()
        make(target)  # type: ignore[operator]
    with pytest.raises(StoreError) as e:
        ChromaMemory(target, embedder=HashEmbedder())
    assert_one_line(e, f"cannot open Chroma store at {target}: ")


def test_a_collection_not_made_by_us_is_refused(tmp_path: Path) -> None:
    import chromadb
    from chromadb.config import Settings

    # subtle: the same settings as ChromaMemory's, or chromadb refuses a second client on the path
    client = chromadb.PersistentClient(str(tmp_path), Settings(anonymized_telemetry=False))
    client.create_collection("reflections", embedding_function=None)
    with pytest.raises(StoreError) as e:
        ChromaMemory.open(tmp_path)
    assert_one_line(e, "no embedding_model")


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        ChromaMemory(embedder=HashEmbedder())
    with pytest.raises(UsageError):
        ChromaMemory(tmp_path, url="http://127.0.0.1:8000", embedder=HashEmbedder())
    with pytest.raises(UsageError):
        ChromaMemory(url="localhost:8000", embedder=HashEmbedder())


def test_an_unreachable_server_is_a_store_error() -> None:
    with pytest.raises(StoreError) as e:
        ChromaMemory(url=f"http://127.0.0.1:{free_port()}", embedder=HashEmbedder())
    assert_one_line(e, "cannot open Chroma store at http://127.0.0.1:")


def test_closing_one_memory_leaves_others_on_the_folder_working(tmp_path: Path) -> None:
    other = ChromaMemory(tmp_path, embedder=HashEmbedder())
    with ChromaMemory(tmp_path, embedder=HashEmbedder()) as m:
        m.add(LESSONS)
    with pytest.raises(ValueError, match="closed"):
        m.get("a")
    assert other.reflections() == LESSONS


# -- ranking, info, threads --------------------------------------------------------------------


def test_search_ranks_an_identical_text_first(tmp_path: Path) -> None:
    m = ChromaMemory(tmp_path, embedder=HashEmbedder())
    m.add(LESSONS)
    hits = m.search("the gradient step had the wrong sign", k=3)
    assert hits[0].reflection.id == "c"
    assert hits[0].similarity == pytest.approx(1.0, abs=1e-5)
    sims = [h.similarity for h in hits]
    assert sims == sorted(sims, reverse=True)  # type: ignore[type-var]
    assert hits[-1].similarity is not None and hits[-1].similarity < 0.9
    # similarity is the true cosine (an L2 index would report 2cos - 1 here)
    e = HashEmbedder()
    q, v = e.embed(["the gradient step had the wrong sign", hits[-1].reflection.text])
    assert hits[-1].similarity == pytest.approx(sum(a * b for a, b in zip(q, v)), abs=1e-5)


def test_info_describes_the_store(tmp_path: Path) -> None:
    m = ChromaMemory(tmp_path, embedder=HashEmbedder(16), collection="lessons")
    m.add(LESSONS[:2])
    assert m.info() == {
        "location": str(tmp_path), "path": str(tmp_path), "url": None, "collection": "lessons",
        "embedding_model": "hash-16", "embedding_dim": 16, "count": 2,
    }  # fmt: skip


def test_concurrent_adds_and_recalls_from_threads(tmp_path: Path) -> None:
    m = ChromaMemory(tmp_path, embedder=HashEmbedder())

    def worker(w: int) -> int:
        for i in range(10):
            m.add([refl(f"w{w}-{i}", f"lesson {i} from worker {w}", run_id=f"other{w}")])
            m.recall("lesson", SCOPE, k=3)
        return len(m.search("lesson", k=100))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(worker, range(8)))
    assert len(m.reflections()) == 80
    assert len(m.recall("lesson", SCOPE, k=200)) == 80


# -- a `chroma run` server ---------------------------------------------------------------------


def test_server_store_shared_by_two_clients(chroma_server: str) -> None:
    writer = ChromaMemory(url=chroma_server, embedder=HashEmbedder(), collection="shared")
    reader = ChromaMemory(url=chroma_server, embedder=HashEmbedder(), collection="shared")
    with writer, reader:
        writer.add(LESSONS + [refl("late", "a lesson from a later episode", episode=5)])
        got = reader.recall("the loop stopped one element early", SCOPE, k=10)
        assert got[0].reflection == LESSONS[0]
        assert {r.reflection.id for r in got} == {"a", "b", "c"}  # not "late": episode 5 > 2
        assert reader.info()["url"] == chroma_server
        with pytest.raises(StoreError):
            ChromaMemory(url=chroma_server, embedder=HashEmbedder(8), collection="shared")


# -- the real embedder -------------------------------------------------------------------------


@pytest.mark.slow
def test_sentence_transformer_ranks_by_meaning(tmp_path: Path) -> None:
    embedder = SentenceTransformerEmbedder()
    m = ChromaMemory(tmp_path, embedder=embedder)
    m.add([refl("loop", "The for loop ended one iteration too early: use range(n + 1)."),
           refl("units", "Convert grams to kilograms before comparing the weights.")])  # fmt: skip
    hits = m.search("off-by-one error in the loop bound", k=2)
    assert [h.reflection.id for h in hits] == ["loop", "units"]
    assert hits[0].similarity is not None and hits[1].similarity is not None
    assert hits[0].similarity > hits[1].similarity + 0.2
    vector = embedder.embed(["hello"])[0]
    assert len(vector) == 384
    assert sum(x * x for x in vector) == pytest.approx(1.0, abs=1e-4)
    assert ChromaMemory.open(tmp_path).embedder.name == "all-MiniLM-L6-v2"


# -- --collection: runs sharing a store keep their lessons apart ---------------------------------


def test_runs_sharing_a_server_keep_their_lessons_apart_by_collection(
    chroma_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reflexion.cli import main
    from reflexion.core.runfolder import RunFolder

    argv = ["compare", "--env", "quadratic", "--strategies", "reflexion", "--episodes", "3"]
    argv += ["--tasks", "2", "--chroma-url", chroma_server, "--embedder", "hash-64"]
    argv += ["--no-progress"]
    folders = {name: tmp_path / name for name in ("first", "apart", "beside")}
    printed = {}
    # beside: other tasks' lessons (a task's own from another run are left out)
    runs = [("first", []), ("apart", ["--collection", "apart-1"])]
    for name, extra in [*runs, ("beside", ["--scope", "global"])]:
        assert main([*argv, "--out", str(folders[name]), *extra]) == 0
        printed[name] = capsys.readouterr().out
    sources = {
        name: [
            h["source"] for s in RunFolder(f).steps() if s.kind == "recall" for h in s.data["hits"]
        ]
        for name, f in folders.items()
    }
    # a run in a collection of its own recalls only its own lessons, and says so
    assert sources["apart"] and not any(s.endswith("another run") for s in sources["apart"])
    apart = re.search(
        r"\nreflexion\s+(\d+)\s+(\d+)\s+(\d+) \(100\.0%\)\s+0 \(0\.0%\)\s+0 \(0\.0%\)\n",
        printed["apart"],
    )
    assert apart and int(apart[2]) == len(sources["apart"]) == int(apart[3])
    assert "written by another run" not in printed["apart"]
    # beside the first run, in the same (default) collection: its lessons are recalled, and the
    # summary says how many came from another run
    borrowed = sum(s.endswith("another run") for s in sources["beside"])
    assert borrowed > 0 and "this task, another run" not in sources["beside"]
    assert re.search(rf"reflexion\s+\d+\s+\d+\s+.*\s{borrowed} \(\d+\.\d%\)\n", printed["beside"])
    assert f"reflexion recalled {borrowed} lessons written by another run" in printed["beside"]
    assert "--collection NAME keeps a run's lessons apart" in printed["beside"]
    # the memory commands read each run's lessons from its own collection: the run apart's
    # alone, and in the shared one, the first run's too
    kept = {n: sum(s.kind == "remember" for s in RunFolder(f).steps()) for n, f in folders.items()}
    for name, held in [("apart", kept["apart"]), ("beside", kept["first"] + kept["beside"])]:
        assert main(["memory", "list", str(folders[name])]) == 0
        assert capsys.readouterr().out.startswith(f"{held} reflections in {chroma_server}")


def test_an_internal_error_of_chroma_is_tried_again_and_one_that_persists_is_a_store_error(
    tmp_path: Path,
) -> None:
    """Chroma's server once answered a run's call with "Internal error: Error finding id" while
    another run wrote to it; the store tries such a call again, and says so in one line if it
    keeps failing."""
    import chromadb.errors

    store = ChromaMemory(tmp_path, embedder=HashEmbedder())
    store.add(LESSONS)
    inner = store._collection._collection  # type: ignore[attr-defined]  # the real collection
    real_get, failures = inner.get, [2]

    def flaky_get(*args: object, **kwargs: object) -> object:
        if failures[0] > 0:
            failures[0] -= 1
            raise chromadb.errors.InternalError(
                "Error executing plan: Internal error: Error finding id"
            )
        return real_get(*args, **kwargs)

    inner.get = flaky_get
    assert store.get(LESSONS[0].id) == LESSONS[0]  # two failures, then the answer
    failures[0] = 3  # one more than the tries
    with pytest.raises(StoreError, match=r"^Chroma store at .*Error finding id$"):
        store.get(LESSONS[0].id)
    inner.get = real_get
    assert store.reflections() == LESSONS  # nothing lost or doubled
