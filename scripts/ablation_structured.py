"""Structured reflections against free ones: `reflexion` with --reflection structured (a JSON
object of diagnosis, fix and failing test; the local model held to its schema) and with the free
default, on the same HumanEval problems, compared paired per problem. Structured reflections
become the default only if they do not hurt.

Choose problems where reflection happens: the default is the problems whose first answer failed
its visible examples (`humaneval:first-miss`, see envs/humaneval/subsets.py). The free arm can be
taken from a run that already has `reflexion` on those problems with the same settings
(--free-from RUN, e.g. the HumanEval benchmark's folder), so only the structured arm is run.
Resumable: run the same command again to finish.

    .venv/bin/python scripts/ablation_structured.py
    .venv/bin/python scripts/ablation_structured.py --free-from runs/bench-humaneval
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from reflexion import ReflexionError, RunConfig, TaskResult, run
from reflexion.models import DEFAULT_MODEL
from reflexion.report import arm, arm_table, differing_settings, run_config, run_steps

ROWS = [("free", "", ""), ("structured", "", "same")]  # expected: no worse than free
NOT_COMPARED = ("env", "reflection", "tasks")  # the settings the two arms may differ in


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--env", default="humaneval:first-miss")
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--out", default="runs/ablation-structured")
    parser.add_argument("--free-from", type=Path, help="a run folder with the free arm")
    args = parser.parse_args()
    out = Path(args.out)
    base = RunConfig(
        env=args.env, strategies=("reflexion",), episodes=args.episodes, model=args.model
    )
    arms = {"structured": replace(base, reflection="structured", out=str(out / "structured"))}
    if args.free_from is None:
        arms["free"] = replace(base, out=str(out / "free"))
    start = time.perf_counter()
    try:
        for name, config in arms.items():
            print(f"run {name}: {config.out}", flush=True)
            run(config, progress=True)
    except ReflexionError as exc:
        sys.exit(f"ablation_structured: error: {exc}")
    structured = arm(out / "structured", "reflexion", "structured")
    free = arm(args.free_from or out / "free", "reflexion", "free")
    if args.free_from is not None:
        free = _same_settings(args.free_from, out / "structured", free, structured)
    took = time.perf_counter() - start
    print(
        f"\nstructured vs free reflections on {args.env}, {args.episodes} episodes, "
        f"model {args.model} ({took:.0f} s of wall time this call)\n"
    )
    print(arm_table([*free, *structured], "free", ROWS))
    print(_parsed(out / "structured"))


def _same_settings(
    given: Path, ours: Path, free: list[TaskResult], structured: list[TaskResult]
) -> list[TaskResult]:
    """The free arm's results on our tasks, once its run's settings are ours (but the env)."""
    differ = differing_settings(given, ours, ignore=NOT_COMPARED)
    if differ or run_config(given).get("reflection", "free") != "free":
        sys.exit(
            f"ablation_structured: error: {given} differs in {', '.join(differ) or 'reflection'}"
        )
    tasks = {r.task_id for r in structured}
    kept = [r for r in free if r.task_id in tasks]
    if {r.task_id for r in kept} != tasks:
        sys.exit(f"ablation_structured: error: {given} lacks some of the tasks")
    return kept


def _parsed(folder: Path) -> str:
    """How many reflections came back as the JSON object (stored as labelled lines)."""
    reflections = [s for s in run_steps(folder) if s.kind == "reflect"]
    labelled = sum(s.output.startswith(("Diagnosis: ", "Fix: ")) for s in reflections)
    return f"reflections parsed as the JSON object: {labelled} of {len(reflections)}"


if __name__ == "__main__":
    main()
