"""`reflexion memory forget|edit|history|revert|import`: change what a run's stores hold, with
every change kept in the lesson's history, whichever backend holds it (reflexion.core.curation);
a backend that cannot do a verb says so in one line.

    reflexion memory forget runs/x --task HumanEval/3 --dry-run
    reflexion memory forget runs/x 3f9a0c1d2e4b5a69 --why "misleading"
    reflexion memory edit runs/x 3f9a0c1d2e4b5a69 --text "Check the loop bound."
    reflexion memory history runs/x 3f9a0c1d2e4b5a69
    reflexion memory revert runs/x 3f9a0c1d2e4b5a69
    reflexion memory import runs/other lessons.jsonl
"""

from __future__ import annotations

import argparse
import gzip
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.backend import DEFAULT_EMBEDDER, Access
from reflexion.cli.common import plural, typed
from reflexion.core.curation import (
    EDIT,
    FORGET,
    HISTORY,
    IMPORT,
    REVERT,
    Chosen,
    Curated,
    require,
    utc,
)
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Reflection
from reflexion.curate.lessons import pick_task, reflection_from, task_label
from reflexion.curate.stores import changed, holder, importing, opened
from reflexion.runner.parsers import positive

EDIT_VERBS = ("forget", "edit", "history", "revert", "import")


def add_edit_verbs(verbs: Any) -> None:
    helps = {
        "forget": "remove reflections (by ID, --task, --run, --before), kept in their history",
        "edit": "give a reflection new text (embedded again), the old one kept in its history",
        "history": "every change to a reflection: what it was before, when and why",
        "revert": "undo the latest change to a reflection (--to N: go back to before change N)",
        "import": "load reflections from a JSONL export (memory export)",
    }
    for verb in EDIT_VERBS:
        p = verbs.add_parser(verb, help=helps[verb])
        p.add_argument("path", type=Path, help="a run folder or a Chroma store folder")
        if verb == "forget":
            p.add_argument("ids", nargs="*", help="reflection ids (or unique prefixes)")
            p.add_argument("--task", help="every reflection of this task")
            p.add_argument("--run", help="every reflection of this run id")
            p.add_argument("--before", help="every reflection made before this date (YYYY-MM-DD)")
            p.add_argument("--dry-run", action="store_true", help="count, change nothing")
        elif verb == "import":
            p.add_argument("file", type=Path, help="a JSONL file from `memory export`")
            p.add_argument("--embedder", default=DEFAULT_EMBEDDER, help="for a new store")
        else:
            p.add_argument("id", help="reflection id (from `memory list`), or a unique prefix")
        if verb == "edit":
            p.add_argument("--text", required=True, help="the new text")
        if verb == "revert":
            p.add_argument(
                "--to",
                type=typed(positive),
                metavar="N",
                help="bring back the lesson as it was before change #N of its history "
                "(default: undo the latest change)",
            )
        if verb != "history":
            p.add_argument("--why", default="", help="the reason, kept with the change")
        p.add_argument("--chroma-url", help="a Chroma server instead of a folder")


def cmd_memory_edit(args: argparse.Namespace) -> int:
    """Run one verb on the stores of the run (or store folder) at args.path."""
    if args.verb == "import":
        rows = _read_export(args.file)
        with importing(args.path, args.chroma_url, args.embedder) as store:
            require(store, IMPORT)
            print(f"imported {plural(store.bring_in(rows, args.why), 'reflection')}")
        return 0
    access = Access.READ if args.verb == "history" else Access.EDIT
    # history, forget, edit and revert recall nothing: the run's ranking is not read
    with opened(args.path, args.chroma_url, access, ranked=False) as stores:
        if args.verb == "forget":
            _forget(stores, args)
        elif args.verb == "edit":
            store, found = holder(stores, args.id, args.path)
            require(store, EDIT)
            store.edit(found.id, args.text, args.why)
            print(f"edited {found.id}")
        elif args.verb == "history":
            _history(*_changed(stores, args.id, args.path, HISTORY))
        else:
            store, rid = _changed(stores, args.id, args.path, REVERT)
            now = store.revert(rid, args.why, args.to)
            to = "" if args.to is None else f" to #{args.to}"
            print(f"reverted {rid}{to}: " + ("not stored now" if now is None else now.text))
    return 0


def _changed(stores: list[Curated], rid: str, where: Path, verb: str) -> tuple[Curated, str]:
    """The store that holds `rid` or kept it in its history (a forgotten lesson's prefix is
    enough too), able to do `verb`, and the full id."""
    store, rid = changed(stores, rid, where)
    require(store, verb)
    return store, rid


def _forget(stores: list[Curated], args: argparse.Namespace) -> None:
    if not (args.ids or args.task or args.run or args.before):
        msg = "memory forget needs reflection ids, or --task, --run or --before"
        raise UsageError(msg)
    # an id (or prefix) matching no lesson, or several: an error, before any change
    ids = tuple(holder(stores, rid, args.path)[1].id for rid in args.ids)
    env, task = None, None
    if args.task:
        tasks = [(r.env, r.task_id) for store in stores for r in store.lessons()]
        env, task = pick_task(args.task, tasks, args.path)
    before = _timestamp(args.before) if args.before else None
    chosen = Chosen(ids, task, env, run=args.run, before=before)
    found = [(store, store.lessons(chosen)) for store in stores]
    for store, lessons in found:
        if lessons:
            require(store, FORGET)
    if args.dry_run:
        count = sum(len(lessons) for _, lessons in found)
        print(f"would forget {plural(count, 'reflection')} (dry run: nothing changed)")
        for r in (r for _, lessons in found for r in lessons):
            print(f"  {r.id}  {task_label(r.env, r.task_id)}  run {r.run_id}")
        return
    done = sum(store.forget([r.id for r in lessons], args.why) for store, lessons in found)
    print(f"forgot {plural(done, 'reflection')}")


def _history(store: Curated, reflection_id: str) -> None:
    changes, now = store.history(reflection_id), store.get(reflection_id)
    print(
        f"{reflection_id}: {plural(len(changes), 'change')}; "
        f"now: {now.text if now else '(not stored)'}"
    )
    for v in changes:
        # subtle: stores before this version kept "revert" as a revert's reason too
        why = f" ({v.why})" if v.why and v.why != v.action else ""
        was = v.before.text if v.before else "(not stored)"
        print(f"#{v.number} {utc(v.when)} {v.action}{why}; before: {was}")


def _timestamp(text: str) -> float:
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        msg = f"--before wants a date like 2026-11-23 (or 2026-11-23T17:00), got {text!r}"
        raise UsageError(msg) from None


def _read_export(path: Path) -> list[Reflection]:
    """Every line of a JSONL export (gzipped where the name ends in .gz), checked before
    anything is written."""
    try:
        data = path.read_bytes()
        # a kept run folder's export is gzipped (memory.jsonl.gz)
        lines = (gzip.decompress(data) if path.suffix == ".gz" else data).decode().splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        msg = f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}"
        raise UsageError(msg) from None
    out = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            msg = f"{path}:{n}: not a reflection from `memory export` (not JSON)"
            raise UsageError(msg) from None
        out.append(reflection_from(data, f"{path}:{n}"))
    return out
