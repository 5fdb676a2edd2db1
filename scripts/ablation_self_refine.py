"""Self-Refine's two ablations, reproduced in direction with the default local model on
HumanEval: (1) success by iteration 0..3 (the paper: gains shrink with each iteration), and
(2) the kind of feedback, paired per problem (the paper: actionable > generic > none).

Three runs of `self-refine`, 4 candidates each (iterations 0..3), on the same problems:
--feedback actionable (its own written feedback on the docstring examples' results), generic (a
fixed "there may be an error in your answer; check it and try again"), and none (the score
only). Resumable: run the same command again to finish.

    .venv/bin/python scripts/ablation_self_refine.py     # spread-30 (not yet timed here)
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from reflexion import ReflexionError, RunConfig, TaskResult, run
from reflexion.models import DEFAULT_MODEL
from reflexion.report import arm, arm_table, episode_curve

MODES = ("actionable", "generic", "none")
ROWS = [  # arm, what the paper found, expected direction against actionable
    ("actionable", "best (e.g. code optimization 27.5)", ""),
    ("generic", "below actionable (26.0)", "lower"),
    ("none", "lowest (24.8)", "lower"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--env", default="humaneval:spread-30")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--out", default="runs/ablation-self-refine")
    args = parser.parse_args()
    out = Path(args.out)
    base = RunConfig(env=args.env, episodes=4, model=args.model, strategies=("self-refine",))
    start = time.perf_counter()
    try:
        for mode in MODES:
            print(f"run --feedback {mode}: {out / mode}", flush=True)
            run(replace(base, feedback=mode, out=str(out / mode)), progress=True)
    except ReflexionError as exc:
        sys.exit(f"ablation: error: {exc}")
    results = [r for mode in MODES for r in arm(out / mode, "self-refine", mode)]
    print(f"\nSelf-Refine's ablations on {args.env}, model {args.model}")
    print(f"({time.perf_counter() - start:.0f} s of wall time this call)\n")
    print_iterations(results)
    print("\nfeedback, paired with actionable:")
    print(arm_table(results, "actionable", ROWS))


def print_iterations(results: list[TaskResult]) -> None:
    """pass@1 of the best-so-far after iteration 0..3, and the gain of each iteration."""
    print("pass@1 by iteration (best so far; the paper: the gains shrink)")
    print("feedback      it 0    it 1    it 2    it 3   gains 1/2/3       shrinking")
    for mode in MODES:
        curve = episode_curve([r for r in results if r.strategy == mode], 4).y
        gains = [b - a for a, b in zip(curve, curve[1:], strict=False)]
        shrink = all(later <= earlier for earlier, later in zip(gains, gains[1:], strict=False))
        verdict = "no gains" if not any(gains) else ("yes" if shrink else "no")
        print(
            f"{mode:<11}"
            + "".join(f"{y:8.1%}" for y in curve)
            + "   "
            + "/".join(f"{g * 100:+.1f}" for g in gains)
            + f"   {verdict:>9}"
        )


if __name__ == "__main__":
    main()
