"""Two run folders on the same tasks, compared per strategy and paired per task: pass@1 of each,
tasks won and lost by the second, the exact McNemar p-value, tokens (output and prompt tokens
the runtime processed, i.e. not served from its cache), model calls, and the share of each
role's prompt tokens served from the cache.

    .venv/bin/python scripts/compare_runs.py runs/before runs/after
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from reflexion import Step, TaskResult
from reflexion.report import compare_paired, run_results, run_steps

ROLES = ("generate", "feedback", "refine", "correct", "reflect")


def passed(results: list[TaskResult], strategy: str) -> dict[str, bool]:
    return {f"{r.task_id}/{r.seed}": r.final_passed for r in results if r.strategy == strategy}


def work(steps: list[Step], strategy: str) -> tuple[int, int, int]:
    """Model calls, output tokens and processed prompt tokens (what the runtime did)."""
    calls = [s for s in steps if s.kind in ROLES and s.strategy == strategy]
    calls = [s for s in calls if not s.data.get("reused")]
    uncached = sum(s.input_tokens - int(s.data.get("cached_tokens", 0)) for s in calls)
    return len(calls), sum(s.output_tokens for s in calls), uncached


def cached_share(steps: list[Step]) -> dict[str, float]:
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for s in steps:
        if s.kind in ROLES and not s.data.get("reused"):
            sums[s.kind][0] += int(s.data.get("cached_tokens", 0))
            sums[s.kind][1] += s.input_tokens
    return {role: c / t for role, (c, t) in sums.items() if t}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    args = parser.parse_args()
    folders = [args.a, args.b]
    results = [run_results(f) for f in folders]
    steps = [run_steps(f) for f in folders]
    strategies = [s for s in dict.fromkeys(r.strategy for r in results[0]) if passed(results[1], s)]
    print(f"A = {args.a}\nB = {args.b}\n")
    print(
        "strategy      tasks  pass A  pass B  won  lost  McNemar p   calls A/B   out tok A/B"
        "  prompt tok A/B"
    )
    for s in strategies:
        c = compare_paired(passed(results[0], s), passed(results[1], s))
        (calls_a, out_a, in_a), (calls_b, out_b, in_b) = work(steps[0], s), work(steps[1], s)
        print(
            f"{s:13} {c.tasks:5d} {c.rate_a:7.1%} {c.rate_b:7.1%} {c.won:4d} {c.lost:5d}"
            f" {c.p_value:10.3f} {calls_a:5d}/{calls_b:<5d} {out_a:6d}/{out_b:<6d}"
            f" {in_a:6d}/{in_b:<6d}"
        )
    print("\nprompt tokens served from the runtime's cache, by role (A -> B):")
    shares = [cached_share(x) for x in steps]
    for role in ROLES:
        if role in shares[0] or role in shares[1]:
            a, b = shares[0].get(role, 0.0), shares[1].get(role, 0.0)
            print(f"  {role:9} {a:6.1%} -> {b:6.1%}")


if __name__ == "__main__":
    main()
