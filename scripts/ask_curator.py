"""Ask a design's curator again, as the code asks it now, about attempts a run recorded, and print
beside each new reply what that run stored then: what a change to a curator's request does to
what the model writes, without running the stream again.

Each chosen task's final attempt (the prompt that asked for it, its answer and the verdict the
model was shown, from the trace) is put to the curator of `--kind` with an empty board, as on a
stream's first task, in the run's curation form (its config.json). Tasks come from `--env`, as
the run built them, so that a shared context and a question are asked as the run asked them.
With `--all-attempts`, every recorded attempt of the task is put to it, each with its verdict,
as `bank-scaled` asks (its item request then compares them). Nothing is stored.

    .venv/bin/python scripts/ask_curator.py runs/sql-bank --env sql --strategy bank \\
        --kind item --tasks sql/055,sql/005,sql/020
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from envs import make_env
from reflexion import Attempt, ChatActor, Kind, ReflexionError, Score, load_model
from reflexion.core import RunFolder
from reflexion.models import DEFAULT_MODEL

KINDS = {"item": Kind.ITEM, "rule": Kind.RULE, "cheatsheet": Kind.CHEATSHEET}


def recorded(run: Path, strategy: str, seed: int) -> dict[str, dict[str, Any]]:
    """Per task: its attempts (each prompt, answer and verdict shown, in order), and the lessons
    the run stored."""
    tasks: dict[str, dict[str, Any]] = {}
    for step in RunFolder(run).steps():  # trace.jsonl, or a kept folder's trace.jsonl.gz
        if (step.strategy, step.seed) != (strategy, seed):
            continue
        mine = tasks.setdefault(step.task_id, {"tried": [], "stored": []})
        if step.kind == "generate":
            mine["tried"].append({"answer": step.output, "prompt": step.prompt})
        elif step.kind == "score" and mine["tried"]:
            mine["tried"][-1]["score"] = step.data
        elif step.kind == "remember" and step.data.get("kind"):
            mine["stored"].append((step.data["kind"], step.output))
    for mine in tasks.values():
        mine["tried"] = [t for t in mine["tried"] if "score" in t]  # a generate the check saw
    return {k: v for k, v in tasks.items() if v["tried"]}


def attempts(mine: dict[str, Any], every: bool) -> list[Attempt]:
    """The task's final attempt, or, with `every`, all of them in order."""
    tried = mine["tried"] if every else mine["tried"][-1:]
    made = []
    for n, t in enumerate(tried, 1):
        d = t["score"]
        shown = str(d.get("shown", d.get("feedback", "")))  # what the model was shown
        score = Score(float(d["value"]), bool(d["solved"]), shown)
        made.append(Attempt(n, t["answer"], score, t["prompt"]))
    return made


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run folder whose trace has the attempts")
    parser.add_argument("--env", required=True, help="the env spec the run used")
    parser.add_argument("--strategy", required=True, help="whose attempts (a strategy's name)")
    parser.add_argument("--kind", choices=sorted(KINDS), default="item")
    parser.add_argument("--tasks", default="", help="task ids, comma-separated (default: 3)")
    parser.add_argument("--seed", type=int, default=0, help="whose attempts, of a run's seeds")
    parser.add_argument("--show-prompt", action="store_true", help="print each request too")
    parser.add_argument(
        "--all-attempts", action="store_true", help="every recorded attempt, as bank-scaled asks"
    )
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the curator's model")
    return parser.parse_args()


async def ask(args: argparse.Namespace) -> int:
    if not RunFolder(args.run).trace_file.is_file():
        print(f"error: no trace.jsonl in {args.run}", file=sys.stderr)
        return 2
    found, tasks = recorded(args.run, args.strategy, args.seed), make_env(args.env).tasks()
    chosen = [t for t in args.tasks.split(",") if t] or list(found)[:3]
    unknown = [t for t in chosen if t not in {task.id for task in tasks}]
    missing = [t for t in chosen if t not in found]
    if unknown or missing or not chosen:
        what = (
            f"not a task of --env {args.env}" if unknown else f"no recorded {args.strategy} attempt"
        )
        print(f"error: {what}: {', '.join(unknown or missing) or 'any task'}", file=sys.stderr)
        return 2
    config = json.loads((args.run / "config.json").read_text())
    actor = ChatActor(load_model(args.model), curation=config.get("curation", "json"))
    for task in (t for t in tasks if t.id in chosen):
        mine = found[task.id]
        shown = attempts(mine, args.all_attempts)
        call = await actor.distill(task, KINDS[args.kind], shown, [])
        verdicts = "; ".join(
            f"{'passed' if a.score.solved else 'failed'}: {a.score.feedback}" for a in shown
        )
        print(f"== {task.id} ({verdicts})")
        if args.show_prompt:
            print(f"  prompt:      {json.dumps([m.to_dict() for m in call.prompt])}")
        for kind, text in mine["stored"]:
            if kind == KINDS[args.kind]:
                print(f"  stored then: {text}")
        print(f"  asked now:   {call.output}", flush=True)
    return 0


def main() -> int:
    args = arguments()
    try:
        return asyncio.run(ask(args))
    except (ReflexionError, OSError, ValueError, KeyError) as exc:  # a bad spec, a torn trace
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
