"""How often a curator's reply can be used: the free-text forms of issue 22 (`--curation text`)
against the JSON forms held to a schema (`--curation json`, the default), on the same attempts.
`scripts/curator.py parse` runs it.

The attempts come from a run folder's trace (each strategy's final attempt at each task, with
the visible verdict the curator is shown). For each of them, in order, every design's curator
(insights, cheatsheet, bank) is asked in both forms, each form with a board of its own that its
replies change as a run would (rules with votes and the sheet by the board's own function,
reflexion.trial.board's `apply`, with the design's rules; the items by appending), so later
prompts show what earlier replies wrote. Copies are found by their words alone (a run also
catches near-copies by embedding). A reply counts as used when all of it parsed and everything
it asked for could be applied: every rule edit, every sheet operation (or, in text, a sheet
that was accepted), every item.

Resumable: each reply is appended to OUT as a line; the same command skips what is there.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reflexion.core.errors import UsageError
from reflexion.core.jsonl import read_jsonl
from reflexion.core.lesson_records import Board, BoardEdit, Curation, EditOp, Kind, Reflection
from reflexion.core.records import Attempt, Score, Task
from reflexion.core.runfolder import RunFolder
from reflexion.models import load_model
from reflexion.strategies import bank, cheatsheet, insights
from reflexion.trial.board import Author, apply

if TYPE_CHECKING:
    pass
# the chat actor (langchain) is imported when a curator is asked: `reflexion --help` lists
# these tools' package without loading it

DESIGNS = (Kind.RULE, Kind.CHEATSHEET, Kind.ITEM)
FORMS = (Curation.TEXT, Curation.JSON)


@dataclass
class Kept:
    """One design's memory in one form, as the replies so far left it."""

    lessons: list[Reflection] = field(default_factory=list)
    clock: Iterator[int] = field(default_factory=itertools.count)

    def shown(self) -> list[Reflection]:
        return sorted(self.lessons, key=lambda r: -r.votes)

    def change(self, kind: Kind, edits: list[BoardEdit], rules: Board) -> None:
        """The board after `edits`, as a run's board would be (see the module)."""
        # each change a reply of its own (as each task's is in a run), so its adds get new ids
        n = next(self.clock)
        author = Author("parse", "curator", "env", Task("t", ""), 0, n, lambda: float(n))
        self.lessons, _, _ = apply(kind, self.lessons, edits, rules, author)


def lesson(n: int, text: str, kind: Kind, votes: int = 0) -> Reflection:
    return Reflection(
        f"l{n}", text, "parse", "curator", "env", "t", 0, 1, 0.0, 0.0, "", kind, votes
    )


def applied(kind: Kind, form: str, board: Kept, reply: str) -> tuple[bool, str]:
    """Change `board` as the design would; whether the whole reply was used, and why not."""
    shown = board.shown()
    if kind == Kind.RULE:
        read = insights.json_edits if form == "json" else insights.parse_edits
        edits, bad, beyond = read(reply, [r.id for r in shown])
        board.change(kind, edits, insights.BOARD)
        return bool(edits) and not bad and not beyond, "; ".join(bad + beyond)[:200]
    if kind == Kind.CHEATSHEET:
        old = shown[0].text if shown else ""
        if form == "json":
            text, skipped = cheatsheet.updated(old, reply)
            why = "; ".join(skipped)
        else:
            text, why = cheatsheet.new_sheet(reply, old)
        if text and text != old:
            board.change(kind, [BoardEdit(EditOp.REPLACE, None, text)], cheatsheet.BOARD)
        return not why and bool(text), why[:200]
    items, malformed = (bank.json_items if form == "json" else bank.parse_items)(reply)
    board.lessons += [lesson(len(board.lessons), t, kind) for t in items]
    return bool(items) and not malformed, f"{malformed} malformed" if malformed else ""


def apply_rule(board: Kept, op: str, target: str | None, text: str) -> None:
    """One rule edit, as a run's board applies it (see the module)."""
    board.change(Kind.RULE, [BoardEdit(EditOp(op), target, text)], insights.BOARD)


def attempts(folder: Path, limit: int) -> Iterator[tuple[Task, Attempt]]:
    """Each strategy's final attempt at each task, in the trace's order: its prompt (the first
    human message of its first answer), its answer and its visible verdict."""
    final: dict[tuple[str, str], tuple[Task, Attempt]] = {}
    asked: dict[tuple[str, str], str] = {}
    for step in read_jsonl(RunFolder(folder).trace_file):  # plain, or a kept folder's .gz
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


async def curator_parse_rates(args: argparse.Namespace) -> int:
    """`curator.py parse` (see the module); a UsageError for a run, OUT or model it cannot use."""
    if not RunFolder(args.run).trace_file.is_file():
        msg = f"no trace.jsonl in {args.run}"
        raise UsageError(msg)
    todo, run_id = list(attempts(args.run, args.limit)), run_id_of(args.run)
    done = saved(args.out, todo, {"run": run_id, "model": args.model})
    model = load_model(args.model)
    from reflexion.actor.chat import ChatActor

    actors = {form: ChatActor(model, curation=form) for form in FORMS}
    boards = {(k, f): Kept() for k in DESIGNS for f in FORMS}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows = list(done.values())
    for n, (task, attempt) in enumerate(todo):
        for kind in DESIGNS:
            for form in FORMS:
                board = boards[(kind, form)]
                old = done.get((n, kind, form))
                if old is not None:  # replayed, so the board is as the run left it
                    applied(kind, form, board, old["reply"])
                    continue
                start = time.perf_counter()
                call = await actors[form].distill(task, kind, [attempt], board.shown())
                used, why = applied(kind, form, board, call.output)
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
