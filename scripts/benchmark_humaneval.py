"""HumanEval benchmark: does reflection help the default local model, by how much, at what cost?

Runs `single`, `self-refine` and `reflexion` (3 episodes) on HumanEval in one run folder, then
(with --self-tests, the default) `reflexion` scored by the model's own unit tests in a second
folder, OUT-self-tests. Writes the report and prints each strategy's pass@1 (held-out tests),
tokens per solved problem and wall time, as ratios to `single` measured in this same run, and
every pair of arms compared paired per problem. `single` is set beside the model's published
HumanEval pass@1. Resumable: run it again with the same --out to finish. --no-main runs only the
self-tests folder and sets it against its own first answers and what OUT already holds.

    .venv/bin/python scripts/benchmark_humaneval.py                          # all 164 problems
    .venv/bin/python scripts/benchmark_humaneval.py --env humaneval:spread-40  # 40 spread out
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from reflexion import ReflexionError, RunConfig, TaskResult, run
from reflexion.models import DEFAULT_MODEL
from reflexion.report import (
    Summary,
    all_pairs,
    arm,
    first_attempt,
    format_pairs,
    format_signals,
    format_table,
    run_config,
    run_results,
    signal_errors,
    success_rate,
    write_report,
)

ST = "-self-tests"  # the second run folder: OUT-self-tests
OWN = "reflexion+self-tests"  # its arm in the paired tables
# HumanEval pass@1 as published (greedy), the model and where
PUBLISHED = {
    "qwen2.5-coder-1.5b": (70.7, "Qwen2.5-Coder technical report, the instruct model"),
}


def main() -> None:
    args = parse_args()
    out = args.out or f"runs/bench-{args.env.replace(':', '-')}"
    config = RunConfig(
        env=args.env,
        strategies=tuple(args.strategies.split(",")),
        out=out,
        episodes=args.episodes,
        model=args.model,
        concurrency=args.concurrency,
    )
    own = replace(config, strategies=("reflexion",), signal="self-tests", out=out + ST)
    print(f"folders: {out}, {own.out}" if args.main else f"folder: {own.out}", flush=True)
    start = time.perf_counter()
    try:
        results = run(config, progress=True) if args.main else []
        if args.self_tests:
            run(own, progress=True)
    except ReflexionError as exc:
        sys.exit(f"benchmark: error: {exc}")
    elapsed = time.perf_counter() - start
    if args.main:
        report_main(config, results, elapsed, args.self_tests)
    else:
        report_self_tests(out, args.model)
    if args.self_tests:
        print("\nreflexion+self-tests, its own tests against held-out, per attempt:")
        print(format_signals(signal_errors(arm(out + ST, "reflexion", OWN))))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
    parser.add_argument(
        "--self-tests",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run reflexion with --signal self-tests (in OUT-self-tests)",
    )
    parser.add_argument(
        "--main",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the first folder (--strategies); --no-main runs only OUT-self-tests and sets "
        "it against its own first answers (a single shot, under greedy decoding) and against "
        "the strategies OUT holds, if any",
    )
    args = parser.parse_args()
    if args.main and "single" not in args.strategies.split(","):
        parser.error("--strategies must include single: the ratios are to single")
    if not (args.main or args.self_tests):
        parser.error("--no-main --no-self-tests leaves nothing to run")
    return args


def report_main(config: RunConfig, results: list[TaskResult], elapsed: float, own: bool) -> None:
    out = str(config.out)  # set by main()
    report = write_report(Path(out), results, run_config(out))
    print(format_table(report.summaries))
    print_ratios(report.summaries, elapsed)
    print_published(report.summaries, str(config.model))  # set by main()
    arms = list(results)
    if own:
        arms += arm(out + ST, "reflexion", OWN)
    order = [*config.strategies, OWN]
    print(f"\npaired, on the same problems:\n{format_pairs(all_pairs(arms, order))}")
    print(f"report: {report.files[-1]}")


def report_self_tests(out: str, model: str) -> None:
    """OUT-self-tests: its table, and reflexion set against its own first answers and against
    whatever the first folder, OUT, holds (its strategies were run there, perhaps alone)."""
    folder = Path(out + ST)
    results = run_results(folder)
    report = write_report(folder, results, run_config(folder))
    print(format_table(report.summaries))
    first = first_attempt(folder, "reflexion", "first answer")
    rate = success_rate(first, lambda r: r.final_passed)
    published = PUBLISHED.get(model)
    print(
        f"\nfirst answer (a single shot): {rate.value:.1%} [{rate.low:.0%}-{rate.high:.0%}] here"
        + (f"; {published[0]:.1f}% published for {model}" if published else "")
    )
    main = run_results(out) if (Path(out) / "results.jsonl").exists() else []
    arms = first + main + arm(folder, "reflexion", OWN)
    pairs = all_pairs(arms, ["first answer", "single", "self-refine", "reflexion", OWN])
    print(f"\npaired, on the same problems:\n{format_pairs(pairs)}")
    print(f"report: {report.files[-1]}")


def print_published(summaries: list[Summary], model: str) -> None:
    single = next(s for s in summaries if s.strategy == "single")
    published = PUBLISHED.get(model)
    if published is not None:
        print(
            f"\nsingle: {single.final_success:.1%} [{single.final_low:.0%}-{single.final_high:.0%}]"
            f" here; {published[0]:.1f}% published for {model} ({published[1]})"
        )


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
