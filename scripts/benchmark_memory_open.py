"""How long opening a ReflexionMemory takes, the first time in a process and the second: the
first loads the sentence-transformers embedder (torch and the model), every later open in the
process shares it. Then a store in another folder, which shares it too. Each open is timed from
the constructor's call to its return (the store is ready to recall), all in this one run.

    .venv/bin/python scripts/benchmark_memory_open.py             # in a new temporary folder
    .venv/bin/python scripts/benchmark_memory_open.py runs/agent  # a folder of your own
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from reflexion import ReflexionMemory


def opened(path: Path) -> float:
    """Seconds to open the memory at `path` (then closed)."""
    start = time.perf_counter()
    memory = ReflexionMemory(path)
    took = time.perf_counter() - start
    memory.close()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, help="default: a new temporary folder")
    args = parser.parse_args()
    root = args.folder or Path(tempfile.mkdtemp(prefix="memory-open-")) / "agent"
    first, second = opened(root), opened(root)
    other = opened(root.with_name(root.name + "-other"))
    print(f"first open: {first:.3f} s (loads the embedder)")
    print(f"second open: {second:.3f} s")
    print(f"another folder's store: {other:.3f} s")
    print(f"first / second: {first / second:.0f}x")


if __name__ == "__main__":
    main()
