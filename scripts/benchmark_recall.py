"""Recall at scale: p50 and p95 of one recall from a Chroma store holding 1k, 10k and 100k
lessons, embedded (a folder) and on a `chroma run` server, against a numpy scan of the same
vectors; then embedding throughput, lessons embedded one at a time against in batches. Every
ratio is measured in this run.

The stored lessons are synthetic: random unit vectors in the embedder's 384 dimensions, with
the provenance a run writes (500 tasks, 5 episodes), since what a recall costs depends on how
many vectors there are, not on what they say. Each query is a real lesson-like text, embedded
by all-MiniLM-L6-v2 as a run embeds it (beforehand, timed on its own row, unless
--with-embedding), and goes through the store as a trial's recall does: global scope (every
lesson admitted) and task scope (the asking task's own: 1 in 500), then the ranking. Task scope
is timed both ways in the same run: through Chroma's query with the scope's filter
(`recall_by_query`, the path before the task cache) and through `recall` (the task's lessons in
memory: its first recall reads them, a new task for each query, then the same task again).
A server store is not cached (other clients may write it), so its `recall` is its query. The
last column is each p50 over the task-scope query's p50 on the same store. The numpy scan has
no filter.

    .venv/bin/python scripts/benchmark_recall.py                       # 1k, 10k, 100k
    .venv/bin/python scripts/benchmark_recall.py --sizes 100000 --stores embedded
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from memory import ChromaMemory, embedder_for
from reflexion import Embedder, RecallScope, Reflection

EMBEDDER = "all-MiniLM-L6-v2"
TOPICS = ("loop bound", "empty list", "negative numbers", "string index", "rounding", "sorting")


def lessons(n: int, start: int = 0) -> list[Reflection]:
    now = time.time()
    return [
        Reflection(
            f"b{i:07d}",
            f"Lesson {i}: check the {TOPICS[i % len(TOPICS)]}.",
            "r0",
            "reflexion",
            "bench",
            f"t{i % 500}",
            0,
            i % 5 + 1,
            0.5,
            now + i,
        )
        for i in range(start, start + n)
    ]


def fill(memory: ChromaMemory, vectors: np.ndarray, start: int) -> None:
    """Write lessons with precomputed vectors (random unit vectors: no embedding to wait for)."""
    memory.add_embedded(lessons(len(vectors), start), vectors.tolist())


def percentiles(run: Callable[[str], object], queries: Sequence[str]) -> tuple[float, float]:
    times = []
    for q in queries:
        start = time.perf_counter()
        run(q)
        times.append((time.perf_counter() - start) * 1000)
    cuts = statistics.quantiles(times, n=20)
    return statistics.median(times), cuts[18]  # p50, p95 in ms


def numpy_recall(embedder: Embedder, matrix: np.ndarray, k: int) -> Callable[[str], object]:
    def run(text: str) -> object:
        query = np.asarray(embedder.embed([text])[0], dtype=np.float32)
        scores = matrix @ query
        top = np.argpartition(-scores, k)[:k]
        return top[np.argsort(-scores[top])]

    return run


class Remembered:
    """The run's embedder, with the benchmark's queries embedded beforehand: on a loaded
    machine the query's embedding (its own row) varies more than the store's whole recall."""

    def __init__(self, embedder: Embedder, texts: Sequence[str]) -> None:
        self.embedder, self.name, self.dim = embedder, embedder.name, embedder.dim
        self.known = dict(zip(texts, embedder.embed(list(texts)), strict=True))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if all(t in self.known for t in texts):
            return [self.known[t] for t in texts]
        return self.embedder.embed(texts)


def scope(task: str, name: str) -> RecallScope:
    """Another run's trial asking: global scope admits every lesson, task scope 1 in 500."""
    return RecallScope("bench", task, "another-run", "reflexion", 0, 1, scope=name)


def arms(memory: ChromaMemory, k: int) -> dict[str, Callable[[str], object]]:
    """What is timed on one store, in this order: a recall in global scope; in task scope
    through Chroma's query (the path before the task cache); a task's first recall (the cache
    reads the task's lessons: a new task each time); and the next recalls of the same task."""
    fresh = (scope(f"t{i}", "task") for i in itertools.count(1))
    task = scope("t0", "task")
    return {
        "global  recall": lambda q: memory.recall(q, scope("t0", "global"), k),
        "task    by query": lambda q: memory.recall_by_query(q, task, k),
        "task    recall, 1st": lambda q: memory.recall(q, next(fresh), k),
        "task    recall": lambda q: memory.recall(q, task, k),
    }


def measure(memory: ChromaMemory, n: int, name: str, queries: Sequence[str], k: int) -> None:
    p50s = {}
    for label, run in arms(memory, k).items():
        asks = queries[: min(len(queries), 100)] if "1st" in label else queries  # 500 tasks
        p50, p95 = percentiles(run, asks)
        p50s[label] = p50
        by_query = p50s.get("task    by query")  # global scope is timed before it: no ratio
        ratio = f"{p50 / by_query:>8.3f}x" if by_query else ""
        print(f"{n:>8}  {name:<9} {label:<20} {p50:>7.2f} {p95:>7.2f}   {ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--stores", default="embedded,server", help="embedded, server or both")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument(
        "--with-embedding", action="store_true", help="time the query's embedding in each recall"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    stores = args.stores.split(",")
    if args.queries < 20 or not set(stores) <= {"embedded", "server"}:
        sys.exit("benchmark_recall: error: --queries must be at least 20, --stores embedded|server")
    embedder = embedder_for(EMBEDDER)
    queries = [f"the answer failed on the {TOPICS[i % 6]} case {i}" for i in range(args.queries)]
    embedder.embed(queries[:2])  # load the model before timing
    if not args.with_embedding:
        embedder = Remembered(embedder, queries)
    rng = np.random.default_rng(0)
    how = "included" if args.with_embedding else "made beforehand (its own row)"
    print(f"recall of k={args.k}, {args.queries} queries each, query embedding {how} (ms)")
    print(f"{'lessons':>8}  {'store':<9} {'scope   path':<20} {'p50':>7} {'p95':>7}   vs query")
    with tempfile.TemporaryDirectory() as tmp, chroma_server(Path(tmp) / "server") as url:
        for n in sizes:
            vectors = rng.standard_normal((n, embedder.dim)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            for name in stores:
                where = {"path": Path(tmp) / f"e{n}"} if name == "embedded" else {"url": url}
                with ChromaMemory(**where, embedder=embedder, collection=f"bench{n}") as memory:
                    fill(memory, vectors, 0)
                    measure(memory, n, name, queries, args.k)
            scan = percentiles(numpy_recall(embedder, vectors, args.k), queries)
            print(f"{n:>8}  {'numpy':<9} {'global  scan':<20} {scan[0]:>7.2f} {scan[1]:>7.2f}")
    model = embedder.embedder if isinstance(embedder, Remembered) else embedder
    alone = percentiles(lambda q: model.embed([q]), queries)
    print(f"{'':>8}  {'':<9} {'query embedding':<20} {alone[0]:>7.2f} {alone[1]:>7.2f}")
    throughput(embedder)


def throughput(embedder: Embedder, n: int = 512) -> None:
    texts = [r.text for r in lessons(n)]
    print(f"\nembedding {n} lessons with {EMBEDDER}")
    rates = {}
    for label, size in (("one at a time", 1), ("batches of 32", 32), (f"one batch of {n}", n)):
        start = time.perf_counter()
        for i in range(0, n, size):
            embedder.embed(texts[i : i + size])
        rates[label] = n / (time.perf_counter() - start)
    for label, rate in rates.items():
        print(f"  {label:<18} {rate:>8.0f} lessons/s  {rate / rates['one at a time']:>5.1f}x")


class chroma_server:  # noqa: N801 - used as a context manager, like a function
    """`chroma run` on a free loopback port, for the server rows."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __enter__(self) -> str:
        import socket
        import urllib.request

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        chroma = Path(sys.executable).parent / "chroma"
        self.proc = subprocess.Popen(
            [str(chroma), "run", "--path", str(self.folder), "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1):
                    return url
            except OSError:
                time.sleep(0.1)
        self.proc.kill()
        sys.exit("benchmark_recall: error: chroma run did not answer within 30 s")

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)


if __name__ == "__main__":
    main()
