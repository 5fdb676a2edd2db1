"""Choose HumanEval problems by what a strategy sees: the problems where the first answer of one
strategy (`single` by default) in a finished run failed its visible signal (the docstring
examples). Never reads a held-out verdict. With --count N, keeps N of them evenly spaced.

Prints the list and the `--env humaneval:ids=...` that runs it; the main job's `first-miss`
subset in envs/humaneval/subsets.py was made this way.

    .venv/bin/python scripts/choose_subset.py runs/bench-humaneval --count 20
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reflexion import TaskResult
from reflexion.core import RunFolder
from reflexion.report import run_results

PREFIX = "HumanEval/"


def first_misses(results: list[TaskResult], strategy: str) -> list[int]:
    """Problem numbers whose first attempt was not solved by the visible signal (seed 0)."""
    missed = set()
    for r in results:
        if r.strategy == strategy and r.seed == 0 and r.task_id.startswith(PREFIX):
            first = r.curve[0] if r.curve else None
            visibly_solved = first is not None and (first.solved or first.score >= 1.0)
            if not visibly_solved:
                missed.add(int(r.task_id.removeprefix(PREFIX)))
    return sorted(missed)


def spaced(ids: list[int], count: int | None) -> list[int]:
    if count is None or count >= len(ids):
        return ids
    return [ids[i * len(ids) // count] for i in range(count)]


def fail(message: str) -> None:
    print(f"choose_subset: error: {message}", file=sys.stderr)
    sys.exit(2)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--strategy", default="single")
    parser.add_argument("--count", type=int, default=None)
    args = parser.parse_args()
    if args.count is not None and args.count < 1:
        fail(f"--count must be at least 1, got {args.count}")
    if not RunFolder(args.run).results_file.is_file():
        fail(f"no results.jsonl in {args.run}")
    results = run_results(args.run)
    tried = {r.task_id for r in results if r.strategy == args.strategy}
    if not tried:
        fail(f"no {args.strategy!r} results in {args.run}")
    signals = {p.signal or "visible" for r in results for p in r.curve[:1]}
    if signals != {"visible"}:
        fail(
            f"{args.run} was scored by {', '.join(sorted(signals))}, not the docstring "
            "examples: choose from a run with --signal visible"
        )
    missed = first_misses(results, args.strategy)
    if not missed:
        fail(f"no HumanEval problem in {args.run} failed its visible examples at first")
    chosen = spaced(missed, args.count)
    print(f"{len(missed)} of {len(tried)} problems: {args.strategy}'s first answer failed its")
    print(f"visible examples; {len(chosen)} chosen: {chosen}")
    print("--env humaneval:ids=" + ",".join(map(str, chosen)))


if __name__ == "__main__":
    main()
