"""How often a `chroma run` server leaves a process's own new row out of a query's answer, and
how often a reflexion-memory store on that server still recalls it (memory.chroma.recent).

Each round makes a new collection; P processes open it and store W lessons each in it at once,
and after each write recall the lesson at the next episode, as a Reflexion trial does: once from
the server's own answer (a query for every row, nearest first), then through the store. Prints
both miss counts. The server is `--url`, or a new one this script runs (`chroma run`).

    .venv/bin/python scripts/chroma_visibility.py --rounds 40 --url http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing as mp
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any

import chromadb

from memory import ChromaMemory, HashEmbedder
from reflexion import RecallScope, Reflection

EMBED = HashEmbedder(64)
Misses = Queue  # of (the server's answer missed it, the store's recall missed it)


def one_writer(
    url: str, collection: str, n: int, writes: int, out: Misses[tuple[bool, bool]]
) -> None:
    store = ChromaMemory(url=url, embedder=EMBED, collection=collection)
    host, port = url.removeprefix("http://").split(":")
    server = chromadb.HttpClient(host=host, port=int(port)).get_collection(collection)
    for i in range(writes):
        task, text = f"code/t{n}-{i}", f"The answer printed instead of returning {i}"
        mine = Reflection(uuid.uuid4().hex[:16], text, "run", "reflexion", "env", task, 0, 1, 0, 0)
        store.add([mine])
        query = f"def running_max(xs) task text {task}"
        vector: Any = EMBED.embed([query])
        answer = server.query(query_embeddings=vector, n_results=server.count())
        scope = RecallScope("env", task, "run", "reflexion", 0, 2, leave_task_out=True)
        recalled = [h.reflection.id for h in store.recall(query, scope, 3)]
        out.put((mine.id not in answer["ids"][0], mine.id not in recalled))
    store.close()


@contextlib.contextmanager
def new_server(folder: Path, port: int = 8765) -> Iterator[str]:
    chroma = Path(sys.executable).parent / "chroma"
    cmd = [str(chroma), "run", "--path", str(folder), "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1).close()
                break
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--writes", type=int, default=3, help="lessons each process stores")
    parser.add_argument("--url", help="a running `chroma run` server (default: a new one)")
    args = parser.parse_args()
    server_missed = store_missed = 0
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        url = args.url or stack.enter_context(new_server(Path(folder)))
        for _ in range(args.rounds):
            collection = f"c{uuid.uuid4().hex[:8]}"
            out: Misses[tuple[bool, bool]] = mp.Queue()
            writers = [
                mp.Process(target=one_writer, args=(url, collection, n, args.writes, out))
                for n in range(args.processes)
            ]
            for w in writers:
                w.start()
            for _ in range(args.processes * args.writes):
                server, store = out.get(timeout=120)
                server_missed, store_missed = server_missed + server, store_missed + store
            for w in writers:
                w.join()
    writes = args.rounds * args.processes * args.writes
    day = time.strftime("%F")
    print(f"{writes} writes, {args.processes} processes at once on new collections ({day})")
    print(f"missing from the server's answer: {server_missed}")
    print(f"missing from the store's recall:  {store_missed}")


if __name__ == "__main__":
    main()
