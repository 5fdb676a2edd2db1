"""Recall at scale: p50 and p95 of one recall (the query's embedding included) from a Chroma store
holding 1k, 10k and 100k lessons, embedded (a folder) and on a `chroma run` server, against a
numpy scan of the same vectors; then embedding throughput, lessons embedded one at a time
against in batches. Every ratio is measured in this run.

The stored lessons are synthetic: random unit vectors in the embedder's 384 dimensions, with
the provenance a run writes (500 tasks, 5 episodes), since what a recall costs depends on how
many vectors there are, not on what they say. Each query is a real lesson-like text, embedded
by all-MiniLM-L6-v2 as a run embeds it, and goes through `ChromaMemory.recall` as a trial's
recall does: global scope (every lesson admitted) and task scope (the asking task's own: 1 in
500), then the ranking. The numpy scan has no filter.

    .venv/bin/python scripts/benchmark_recall.py                       # 1k, 10k, 100k
    .venv/bin/python scripts/benchmark_recall.py --sizes 1000 --queries 50
"""

from __future__ import annotations

import argparse
import functools
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


def recall(memory: ChromaMemory, scope: RecallScope, k: int, text: str) -> object:
    return memory.recall(text, scope, k)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    embedder = embedder_for(EMBEDDER)
    queries = [f"the answer failed on the {TOPICS[i % 6]} case {i}" for i in range(args.queries)]
    embedder.embed(queries[:2])  # load the model before timing
    scopes = {  # another run's trial asking: global scope admits every lesson, task scope 1 in 500
        "global": RecallScope("bench", "t0", "another-run", "reflexion", 0, 1, scope="global"),
        "task": RecallScope("bench", "t0", "another-run", "reflexion", 0, 1, scope="task"),
    }
    rng = np.random.default_rng(0)
    print(f"recall of k={args.k}, {args.queries} queries each, query embedding included (ms)")
    print(f"{'lessons':>8}  {'store':<9} {'scope':<7} {'p50':>7} {'p95':>7}   {'p50 vs numpy':>12}")
    with tempfile.TemporaryDirectory() as tmp, chroma_server(Path(tmp) / "server") as url:
        for n in sizes:
            vectors = rng.standard_normal((n, embedder.dim)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            scan = percentiles(numpy_recall(embedder, vectors, args.k), queries)
            for name, where in (
                ("embedded", {"path": Path(tmp) / f"e{n}"}),
                ("server", {"url": url}),
            ):
                collection = f"bench{n}"
                with ChromaMemory(**where, embedder=embedder, collection=collection) as memory:
                    fill(memory, vectors, 0)
                    for label, scope in scopes.items():
                        asking = functools.partial(recall, memory, scope, args.k)
                        p50, p95 = percentiles(asking, queries)
                        print(
                            f"{n:>8}  {name:<9} {label:<7} {p50:>7.2f} {p95:>7.2f}   "
                            f"{p50 / scan[0]:>11.1f}x"
                        )
            row = f"{n:>8}  {'numpy':<9} {'global':<7} {scan[0]:>7.2f} {scan[1]:>7.2f}"
            print(f"{row}   {1.0:>11.1f}x")
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
