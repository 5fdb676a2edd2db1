"""What the split checks cost: our two-process `run_checks` against the official harness's way
(prompt + solution + tests in one sandboxed process), on HumanEval's reference solutions.

Both run in the same sandbox with the same limits, one problem at a time, in this one run; it
prints the wall time of each, their ratio, and how many references each passed (all should).

    .venv/bin/python scripts/benchmark_checks.py            # all 164 problems
    .venv/bin/python scripts/benchmark_checks.py --count 40
"""

from __future__ import annotations

import argparse
import time

from envs.code_tasks import task_helpers
from envs.humaneval import HELD_OUT_SECONDS, load_problems
from envs.sandbox import Check, run_checks, run_python


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=164)
    args = parser.parse_args()
    problems = load_problems(args.count)

    start = time.perf_counter()
    one_process = 0
    for p in problems:
        program = f"{p.prompt}{p.canonical_solution}\n{p.test}\ncheck({p.entry_point})\n"
        one_process += run_python(program, timeout_s=HELD_OUT_SECONDS + 2).ok
    baseline_s = time.perf_counter() - start

    start = time.perf_counter()
    split = 0
    for p in problems:
        official = Check("official tests", f"{p.test}\ncheck({p.entry_point})\n")
        helpers = task_helpers(p.prompt, p.entry_point)
        run = run_checks(
            p.prompt + p.canonical_solution,
            [official],
            helpers=helpers,
            per_check_s=HELD_OUT_SECONDS,
        )
        split += run.load_error is None and run.results[0].passed
    ours_s = time.perf_counter() - start

    n = len(problems)
    print(f"{n} HumanEval references, official tests, one at a time")
    print(f"one process (official harness style): {baseline_s:6.1f} s, {one_process}/{n} passed")
    print(f"two processes (run_checks):           {ours_s:6.1f} s, {split}/{n} passed")
    print(
        f"ratio: {ours_s / baseline_s:.2f}x the time, "
        f"{1000 * (ours_s - baseline_s) / n:+.0f} ms per problem"
    )


if __name__ == "__main__":
    main()
