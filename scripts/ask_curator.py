"""Ask a design's curator again, as the code asks it now, about attempts a run recorded, and print
beside each new reply what that run stored then: what a change to a curator's request does to
what the model writes, without running the stream again.

Each chosen task's final attempt (its answer and visible verdict, from the trace) is shown to
the curator of `--kind` with an empty board, as on a stream's first task. Tasks come from
`--env`, as the run built them, so that a shared context and a question are asked as the run
asked them. Nothing is stored.

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
from reflexion import Attempt, ChatActor, Kind, Score, load_model
from reflexion.models import DEFAULT_MODEL

KINDS = {"item": Kind.ITEM, "rule": Kind.RULE, "cheatsheet": Kind.CHEATSHEET}


def recorded(run: Path, strategy: str) -> dict[str, dict[str, Any]]:
    """Per task: its last answer, that answer's verdict, and the lessons the run stored."""
    tasks: dict[str, dict[str, Any]] = {}
    for line in (run / "trace.jsonl").read_text().splitlines():
        step = json.loads(line)
        if step["strategy"] != strategy:
            continue
        mine = tasks.setdefault(step["task_id"], {"answer": "", "score": None, "stored": []})
        if step["kind"] == "generate":
            mine["answer"] = step["output"]
        elif step["kind"] == "score":
            mine["score"] = step["data"]
        elif step["kind"] == "remember" and step["data"].get("kind"):
            mine["stored"].append((step["data"]["kind"], step["output"]))
    return {k: v for k, v in tasks.items() if v["score"] is not None}


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("run", type=Path, help="a run folder whose trace has the attempts")
    parser.add_argument("--env", required=True, help="the env spec the run used")
    parser.add_argument("--strategy", required=True, help="whose attempts (a strategy's name)")
    parser.add_argument("--kind", choices=sorted(KINDS), default="item")
    parser.add_argument("--tasks", default="", help="task ids, comma-separated (default: 3)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the curator's model")
    return parser.parse_args()


async def main() -> int:
    args = arguments()
    if not (args.run / "trace.jsonl").is_file():
        print(f"error: no trace.jsonl in {args.run}", file=sys.stderr)
        return 2
    found, tasks = recorded(args.run, args.strategy), {t.id: t for t in make_env(args.env).tasks()}
    chosen = [t for t in args.tasks.split(",") if t] or list(found)[:3]
    missing = [t for t in chosen if t not in found or t not in tasks]
    if missing or not chosen:
        where = ", ".join(missing) or "any task"
        print(f"error: no recorded {args.strategy} attempt at {where}", file=sys.stderr)
        return 2
    actor, kind = ChatActor(load_model(args.model), curation="json"), KINDS[args.kind]
    for task_id in chosen:
        mine = found[task_id]
        d = mine["score"]
        verdict = Score(float(d["value"]), bool(d["solved"]), str(d.get("feedback", "")))
        call = await actor.distill(tasks[task_id], kind, [Attempt(1, mine["answer"], verdict)], [])
        print(f"== {task_id} ({'passed' if verdict.solved else 'failed'}: {verdict.feedback})")
        for stored_kind, text in mine["stored"]:
            if stored_kind == kind:
                print(f"  stored then: {text}")
        print(f"  asked now:   {call.output}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
