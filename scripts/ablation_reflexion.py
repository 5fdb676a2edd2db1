"""Reflexion's ablation of its own parts, reproduced in direction with the default local model
on HumanEval in Python (the paper: the 50 hardest HumanEval-Rust problems with GPT-4).

Four arms, every one scored by the model's own unit tests (--signal self-tests), on the same
problems, compared with `single` paired per problem:

- single (`single`): the paper's base, 0.60.
- tests, no reflection (`retry`: the last answers and their self-test results inline): 0.60,
  about equal to base.
- reflection, no tests (`reflexion --feedback generic`: it reflects on "there may be an error in
  your answer"): 0.52, below base.
- full reflexion (`reflexion`: it reflects on the failing self-tests): 0.68, above base.

One difference from the paper: in "reflection, no tests" the self-tests still decide when to
stop and which answer to return; only the reflection is written without their results.
Resumable: run the same command again to finish.

    .venv/bin/python scripts/ablation_reflexion.py   # spread-30: about 100 min on a busy machine
    .venv/bin/python scripts/ablation_reflexion.py --env humaneval:spread-20 --out runs/abl
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from reflexion import ReflexionError, RunConfig, run
from reflexion.models import DEFAULT_MODEL
from reflexion.report import arm, arm_table

ROWS = [  # arm, the paper's pass@1 (HumanEval-Rust, 50 hardest, GPT-4), expected direction
    ("single", "0.60", ""),
    ("tests, no reflection", "0.60", "same"),
    ("reflection, no tests", "0.52", "lower"),
    ("full reflexion", "0.68", "higher"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--env", default="humaneval:spread-30")
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--out", default="runs/ablation-reflexion")
    args = parser.parse_args()
    out = Path(args.out)
    base = RunConfig(
        env=args.env, episodes=args.episodes, model=args.model, signal="self-tests", seeds=1
    )
    runs = {
        "with-tests": replace(base, strategies=("single", "retry", "reflexion")),
        "no-test-results": replace(base, strategies=("reflexion",), feedback="generic"),
    }
    start = time.perf_counter()
    try:
        for name, config in runs.items():
            print(f"run {name}: {out / name}", flush=True)
            run(replace(config, out=str(out / name)), progress=True)
    except ReflexionError as exc:
        sys.exit(f"ablation: error: {exc}")
    results = [
        *arm(out / "with-tests", "single", "single"),
        *arm(out / "with-tests", "retry", "tests, no reflection"),
        *arm(out / "no-test-results", "reflexion", "reflection, no tests"),
        *arm(out / "with-tests", "reflexion", "full reflexion"),
    ]
    print(f"\nReflexion's ablation on {args.env}, {args.episodes} episodes, model {args.model}")
    print(f"({time.perf_counter() - start:.0f} s of wall time this call)\n")
    print(arm_table(results, "single", ROWS))


if __name__ == "__main__":
    main()
