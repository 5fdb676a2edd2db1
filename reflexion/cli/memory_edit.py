"""`reflexion memory forget|edit|history|revert|import`: change what a Chroma store holds, with
every change kept in the store's history (memory.chroma.changes).

    reflexion memory forget runs/x --task HumanEval/3 --dry-run
    reflexion memory forget runs/x 3f9a0c1d2e4b5a69 --why "misleading"
    reflexion memory edit runs/x 3f9a0c1d2e4b5a69 --text "Check the loop bound."
    reflexion memory history runs/x 3f9a0c1d2e4b5a69
    reflexion memory revert runs/x 3f9a0c1d2e4b5a69
    reflexion memory import runs/other lessons.jsonl
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.backend import DEFAULT_EMBEDDER
from memory.chroma import changes
from memory.chroma.connect import SQLITE_FILE
from memory.chroma.lock import StoreLock
from memory.chroma.store import ChromaMemory
from memory.embedders import embedder_for
from reflexion.core.errors import UsageError
from reflexion.core.records import Reflection

EDIT_VERBS = ("forget", "edit", "history", "revert", "import")


def add_edit_verbs(verbs: Any) -> None:
    helps = {
        "forget": "remove reflections (by ID, --task, --run, --before), kept in their history",
        "edit": "give a reflection new text (embedded again), the old one kept in its history",
        "history": "every change to a reflection: what it was before, when and why",
        "revert": "undo the latest change to a reflection",
        "import": "load reflections from a JSONL export (memory export)",
    }
    for verb in EDIT_VERBS:
        p = verbs.add_parser(verb, help=helps[verb])
        p.add_argument("path", type=Path, help="a run folder or a Chroma store folder")
        if verb == "forget":
            p.add_argument("ids", nargs="*", help="reflection ids")
            p.add_argument("--task", help="every reflection of this task")
            p.add_argument("--run", help="every reflection of this run id")
            p.add_argument("--before", help="every reflection made before this date (YYYY-MM-DD)")
            p.add_argument("--dry-run", action="store_true", help="count, change nothing")
        elif verb == "import":
            p.add_argument("file", type=Path, help="a JSONL file from `memory export`")
            p.add_argument("--embedder", default=DEFAULT_EMBEDDER, help="for a new store")
        else:
            p.add_argument("id", help="reflection id (from `memory list`)")
        if verb == "edit":
            p.add_argument("--text", required=True, help="the new text")
        if verb != "history":
            p.add_argument("--why", default="", help="the reason, kept with the change")
        p.add_argument("--chroma-url", help="a Chroma server instead of a folder")


def cmd_memory_edit(args: argparse.Namespace, folder: Path | None) -> int:
    """Run one verb on the store at `folder` (None: the server at --chroma-url)."""
    rows = _read_export(args.file) if args.verb == "import" else []
    with writable_store(folder, args, create=args.verb == "import") as memory:
        if args.verb == "forget":
            _forget(memory, args)
        elif args.verb == "edit":
            changes.edit(memory, args.id, args.text, args.why)
            print(f"edited {args.id}")
        elif args.verb == "history":
            _history(memory, args.id)
        elif args.verb == "revert":
            now = changes.revert(memory, args.id, args.why or "revert")
            print(f"reverted {args.id}: " + ("not stored now" if now is None else now.text))
        else:
            print(f"imported {changes.bring_in(memory, rows, args.why or 'import')} reflections")
    return 0


@contextlib.contextmanager
def writable_store(
    folder: Path | None, args: argparse.Namespace, create: bool
) -> Iterator[ChromaMemory]:
    """The store, held against concurrent writers (a run on it waits, and says so)."""
    if folder is not None and not (folder / SQLITE_FILE).exists() and not create:
        msg = f"no Chroma store at {folder} (no {SQLITE_FILE}): nothing to {args.verb}"
        raise UsageError(msg)
    lock = StoreLock(folder) if folder is not None else None
    try:
        if folder is not None and not (folder / SQLITE_FILE).exists():
            memory = ChromaMemory(folder, embedder=embedder_for(args.embedder))
        else:
            memory = ChromaMemory.open(folder, url=args.chroma_url)
        with memory:
            yield memory
    finally:
        if lock is not None:
            lock.close()


def _forget(memory: ChromaMemory, args: argparse.Namespace) -> None:
    if not (args.ids or args.task or args.run or args.before):
        msg = "memory forget needs reflection ids, or --task, --run or --before"
        raise UsageError(msg)
    before = _timestamp(args.before) if args.before else None
    chosen = [
        r
        for r in memory.reflections()
        if (not args.ids or r.id in args.ids)
        and (args.task is None or r.task_id == args.task)
        and (args.run is None or r.run_id == args.run)
        and (before is None or r.created < before)
    ]
    if args.dry_run:
        print(f"would forget {len(chosen)} reflections (dry run: nothing changed)")
        for r in chosen:
            print(f"  {r.id}  {r.env}/{r.task_id}  run {r.run_id}")
        return
    print(f"forgot {changes.forget(memory, [r.id for r in chosen], args.why)} reflections")


def _history(memory: ChromaMemory, reflection_id: str) -> None:
    with memory.changelog() as log:
        versions = log.of(reflection_id)
    now = memory.get(reflection_id)
    print(f"{reflection_id}: {len(versions)} changes; now: {now.text if now else '(not stored)'}")
    for v in versions:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(v.when))
        was = v.before.text if v.before else "(not stored)"
        print(f"#{v.number} {when} {v.action}{' (' + v.why + ')' if v.why else ''}; before: {was}")


def _timestamp(text: str) -> float:
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        msg = f"--before wants a date like 2026-11-23 (or 2026-11-23T17:00), got {text!r}"
        raise UsageError(msg) from None


def _read_export(path: Path) -> list[Reflection]:
    """Every line of a JSONL export, checked before anything is written."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        msg = f"cannot read {path}: {exc.strerror or exc}"
        raise UsageError(msg) from None
    out = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append(Reflection.from_dict(json.loads(line)))
        except (ValueError, TypeError, KeyError) as exc:
            msg = f"{path}:{n}: not a reflection from `memory export` ({type(exc).__name__})"
            raise UsageError(msg) from None
    return out
