"""How often a curator's reply can be used: the free-text forms of issue 22 (`--curation text`)
against the JSON forms held to a schema (`--curation json`, the default), on the same attempts.

The attempts come from a run folder's trace (each strategy's final attempt at each task, with
the visible verdict the curator is shown). For each of them, in order, every design's curator
(insights, cheatsheet, bank) is asked in both forms, each form with a board of its own that its
replies change as a run would (rules with votes, the sheet, the items), so later prompts show
what earlier replies wrote. A reply counts as used when all of it parsed and everything it asked
for could be applied: every rule edit, every sheet operation (or, in text, a sheet that was
accepted), every item.

Resumable: each reply is appended to OUT as a line; the same command skips what is there.

    .venv/bin/python scripts/curator_parse.py RUN --limit 10 --out runs/curator-parse.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import reflexion.strategies as designs
from reflexion import (
    Attempt,
    ChatActor,
    Kind,
    Reflection,
    ReflexionError,
    Score,
    Task,
    UsageError,
    load_model,
)
from reflexion.curate import same_wording
from reflexion.models import DEFAULT_MODEL

DESIGNS = (Kind.RULE, Kind.CHEATSHEET, Kind.ITEM)
FORMS = ("text", "json")


@dataclass
class Board:
    """One design's memory in one form, as the replies so far left it."""

    lessons: list[Reflection] = field(default_factory=list)

    def shown(self) -> list[Reflection]:
        return sorted(self.lessons, key=lambda r: -r.votes)


def lesson(n: int, text: str, kind: Kind, votes: int = 0) -> Reflection:
    return Reflection(
        f"l{n}", text, "parse", "curator", "env", "t", 0, 1, 0.0, 0.0, "", kind, votes
    )


def apply(kind: Kind, form: str, board: Board, reply: str) -> tuple[bool, str]:
    """Change `board` as the design would; whether the whole reply was used, and why not."""
    shown = board.shown()
    if kind == Kind.RULE:
        read = designs.insights.json_edits if form == "json" else designs.insights.parse_edits
        edits, bad, beyond = read(reply, [r.id for r in shown])
        for e in edits:
            apply_rule(board, e.op, e.target, e.text)
        return bool(edits) and not bad and not beyond, "; ".join(bad + beyond)[:200]
    if kind == Kind.CHEATSHEET:
        old = shown[0].text if shown else ""
        if form == "json":
            text, skipped = designs.cheatsheet.updated(old, reply)
            why = "; ".join(skipped)
        else:
            text, why = designs.cheatsheet.new_sheet(reply, old)
        if text and text != old:
            board.lessons = [lesson(0, text, kind)]
        return not why and bool(text), why[:200]
    items, malformed = (designs.bank.json_items if form == "json" else designs.bank.parse_items)(
        reply
    )
    board.lessons += [lesson(len(board.lessons), t, kind) for t in items]
    return bool(items) and not malformed, f"{malformed} malformed" if malformed else ""


def apply_rule(board: Board, op: str, target: str | None, text: str) -> None:
    # as a run, but copies by their text alone (a run also catches 0.9-similar ones by embedding)
    same = next((r for r in board.lessons if text and same_wording(r.text, text)), None)
    if op == "edit" and same is not None and same.id != target:  # restates another: upvotes it
        op, target, text = "upvote", same.id, ""
    if op == "add" and same is None and len(board.lessons) < designs.insights.MAX_RULES:
        board.lessons.append(lesson(len(board.lessons) + 100, text, Kind.RULE, 2))
        return
    for i, r in enumerate(board.lessons):
        if r.id == target:
            votes = r.votes + {"edit": 1, "upvote": 1, "downvote": -1}[op]
            board.lessons[i] = replace(r, text=text or r.text, votes=votes)
    board.lessons = [r for r in board.lessons if r.votes > 0]


def attempts(folder: Path, limit: int) -> Iterator[tuple[Task, Attempt]]:
    """Each strategy's final attempt at each task, in the trace's order: its prompt (the first
    human message of its first answer), its answer and its visible verdict."""
    final: dict[tuple[str, str], tuple[Task, Attempt]] = {}
    asked: dict[tuple[str, str], str] = {}
    for line in (folder / "trace.jsonl").read_text().splitlines():
        step = json.loads(line)
        key = (step["strategy"], step["task_id"])
        if step["kind"] == "generate" and key not in asked:
            human = [m["content"] for m in step["prompt"] if m["role"] == "human"]
            asked[key] = human[0] if human else ""
        if step["kind"] == "generate":
            answer = step["output"]
        if step["kind"] == "score" and key in asked:
            d = step["data"]
            score = Score(float(d["value"]), bool(d["solved"]), str(d.get("feedback", "")))
            task = Task(step["task_id"], asked[key])
            final[key] = (task, Attempt(int(step["episode"]), answer, score))
    yield from list(final.values())[:limit]


async def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run folder whose trace has the attempts")
    parser.add_argument("--limit", type=int, default=10, help="the first N final attempts")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--out", type=Path, default=Path("runs/curator-parse.jsonl"))
    args = parser.parse_args()
    try:
        if not (args.run / "trace.jsonl").is_file():
            msg = f"no trace.jsonl in {args.run}"
            raise UsageError(msg)
        todo, run_id = list(attempts(args.run, args.limit)), run_id_of(args.run)
        done = saved(args.out, todo, {"run": run_id, "model": args.model})
        model = load_model(args.model)
    except ReflexionError as exc:
        print(f"curator_parse: error: {exc}", file=sys.stderr)
        return 2
    actors = {form: ChatActor(model, curation=form) for form in FORMS}
    boards = {(k, f): Board() for k in DESIGNS for f in FORMS}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows = list(done.values())
    for n, (task, attempt) in enumerate(todo):
        for kind in DESIGNS:
            for form in FORMS:
                board = boards[(kind, form)]
                old = done.get((n, kind, form))
                if old is not None:  # replayed, so the board is as the run left it
                    apply(kind, form, board, old["reply"])
                    continue
                start = time.perf_counter()
                call = await actors[form].distill(task, kind, [attempt], board.shown())
                used, why = apply(kind, form, board, call.output)
                row = {"n": n, "task": task.id, "kind": kind, "form": form, "used": used}
                row |= {"run": run_id, "model": args.model, "why": why, "reply": call.output}
                row |= {"tokens": call.output_tokens, "seconds": time.perf_counter() - start}
                rows.append(row)
                with args.out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(f"{n} {task.id} {kind} {form}: {'used' if used else 'NOT used: ' + why}")
    print(table([r for r in rows if r["n"] < len(todo)]))  # the first --limit attempts only
    return 0


def run_id_of(run: Path) -> str:
    config = run / "config.json"
    return str(json.loads(config.read_text()).get("run_id", "")) if config.is_file() else ""


def saved(
    out: Path, todo: list[tuple[Task, Attempt]], asked: dict[str, str]
) -> dict[tuple[int, str, str], Any]:
    """OUT's replies by (attempt number, design, form); a UsageError for a file that is not
    this script's, or whose replies were to another run's attempts or by another model (they
    would be replayed as this one's). `asked`: this call's run id and model."""
    if not out.exists():
        return {}
    rows: dict[tuple[int, str, str], Any] = {}
    for number, line in enumerate(out.read_text().splitlines(), start=1):
        try:
            row = json.loads(line)
            key, task = (int(row["n"]), str(row["kind"]), str(row["form"])), str(row["task"])
        except (ValueError, KeyError, TypeError):
            msg = f"{out} line {number} is not a reply this script wrote: give another --out"
            raise UsageError(msg) from None
        if key[0] < len(todo) and todo[key[0]][0].id != task:
            msg = (
                f"{out} holds replies to another run's attempts (its attempt {key[0]} is {task}, "
                f"this run's is {todo[key[0]][0].id}): give another --out"
            )
            raise UsageError(msg)
        for name, mine in asked.items():
            if row.get(name, mine) != mine:  # rows written before these were recorded pass
                msg = (
                    f"{out} holds replies of {name} {row[name]!r}, not {mine!r}: give another --out"
                )
                raise UsageError(msg)
        rows[key] = row
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["design      form  replies  used  share  mean tokens", "-" * 52]
    for kind in DESIGNS:
        for form in FORMS:
            mine = [r for r in rows if r["kind"] == kind and r["form"] == form]
            if not mine:
                continue
            used = sum(r["used"] for r in mine)
            tokens = sum(r["tokens"] for r in mine) / len(mine)
            share = f"{used / len(mine):.0%}"
            lines.append(
                f"{kind:<11} {form:<5} {len(mine):>7} {used:>5} {share:>6} {tokens:>12.0f}"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
