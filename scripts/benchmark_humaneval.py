"""HumanEval benchmark: does reflection help the default local model, by how much, at what cost?

Runs `single`, `self-refine` and `reflexion` (3 episodes) on HumanEval in one run folder, writes
the report, and prints each strategy's pass@1 (held-out tests), tokens per solved problem and wall
time, as ratios to `single` measured in this same run. Resumable: run it again with the same
--out to finish an interrupted benchmark.

    .venv/bin/python scripts/benchmark_humaneval.py                          # all 164 problems
    .venv/bin/python scripts/benchmark_humaneval.py --env humaneval:spread-40  # 40 spread out
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from reflexion import ReflexionError, RunConfig, run
from reflexion.loop.runfolder import RunFolder
from reflexion.models import DEFAULT_MODEL
from reflexion.report import Summary, format_table, write_report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--env",
        default="humaneval",
        help="humaneval, humaneval:N, or "
        "humaneval:spread-N (N problems evenly spaced over the 164)",
    )
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--strategies", default="single,self-refine,reflexion")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    out = args.out or f"runs/bench-{args.env.replace(':', '-')}"
    config = RunConfig(
        env=args.env,
        strategies=tuple(args.strategies.split(",")),
        out=out,
        episodes=args.episodes,
        model=args.model,
        concurrency=args.concurrency,
    )
    if "single" not in config.strategies:
        parser.error("--strategies must include single: the ratios are to single")
    start = time.perf_counter()
    try:
        results = run(config, progress=True)
    except ReflexionError as exc:
        sys.exit(f"benchmark: error: {exc}")
    elapsed = time.perf_counter() - start
    report = write_report(Path(out), results, RunFolder(Path(out)).load_config() or {})
    print(format_table(report.summaries))
    print_ratios(report.summaries, elapsed)
    print(f"report: {report.files[-1]}")


def print_ratios(summaries: list[Summary], elapsed: float) -> None:
    base = next(s for s in summaries if s.strategy == "single")
    print(f"\nratios to single, measured in this run ({elapsed:.0f} s of wall time this call):")
    for s in summaries:
        pass_ratio = s.final_success / base.final_success if base.final_success else float("nan")
        tokens_ratio = s.tokens / base.tokens if base.tokens else float("nan")
        per_solved = "n/a" if s.tokens_per_solved is None else f"{s.tokens_per_solved:,.0f}"
        print(
            f"  {s.strategy:<12} pass@1 {s.final_success:6.1%} ({pass_ratio:.2f}x)  "
            f"tokens {s.tokens:>9,} ({tokens_ratio:.2f}x)  "
            f"tokens/solved {per_solved:>7}  trial time {s.wall_s:7.0f} s"
        )


if __name__ == "__main__":
    main()
