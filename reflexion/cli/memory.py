"""`reflexion memory list|show|search|export`: what the agent wrote to memory, and why.

    reflexion memory list runs/quadratic-20261122-120000 --strategy reflexion --task q2 --limit 5
    reflexion memory list runs/shared-memory --run 3c1f0a9e2b7d
    reflexion memory show runs/quadratic-20261122-120000 3f9a        # a unique prefix of an id
    reflexion memory search runs/quadratic-20261122-120000 "gradient step"
    reflexion memory export runs/quadratic-20261122-120000 --format md --output lessons.md

PATH is a run folder (its stores, and its trace for `show`) or a Chroma store folder. Every store
is reached through the curation contract (reflexion.curate), whichever backend made it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

from reflexion.cli.common import typed
from reflexion.cli.memory_audit import AUDIT_VERBS, add_audit_verbs, cmd_memory_audit
from reflexion.cli.memory_edit import EDIT_VERBS, add_edit_verbs, cmd_memory_edit
from reflexion.cli.memory_why import add_why_verb, cmd_memory_why
from reflexion.core.curation import CREDIT, Chosen, Credit, Curated, utc
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import KINDS, Reflection, is_own
from reflexion.curate.lessons import pick_task, search_sources, task_label, unknown
from reflexion.curate.recalls import Recollection, recollections
from reflexion.curate.stores import credits_in, holder, opened, settings_for
from reflexion.runner.parsers import positive

READ_VERBS = ("list", "show", "search", "export")


def add_memory_parser(sub: Any, verb: str | None = None) -> None:
    """The `memory` group; for a known `verb`, that verb's parser alone (see cli.main)."""
    if verb not in (*READ_VERBS, *EDIT_VERBS, *AUDIT_VERBS, "why"):
        verb = None  # a help or an error lists every verb
    mem = sub.add_parser("memory", help="inspect the reflections stored in a run or store")
    verbs = mem.add_subparsers(dest="verb", required=True, parser_class=type(mem))
    reads = (
        ("list", "every reflection with its provenance"),
        ("show", "one reflection, and every episode that recalled it"),
        ("search", "reflections most similar to TEXT, with their similarity"),
        ("export", "all reflections as JSONL or Markdown"),
    )
    for name, help_text in reads if verb in (None, *READ_VERBS) else ():
        p = verbs.add_parser(name, help=help_text)
        p.add_argument("path", type=Path, help="a run folder or a Chroma store folder")
        _add_read_options(p, name)
        p.add_argument("--chroma-url", help="read from a Chroma server instead of a folder")
    if verb in (None, *EDIT_VERBS):
        add_edit_verbs(verbs)
    if verb in (None, *AUDIT_VERBS):
        add_audit_verbs(verbs)
    if verb in (None, "why"):
        add_why_verb(verbs)


def _add_read_options(p: argparse.ArgumentParser, name: str) -> None:
    """The options of read verb `name`; `--limit` caps what `list` and `search` print."""
    if name == "show":
        p.add_argument("id", help="reflection id (from `memory list`), or a unique prefix")
    if name == "search":
        p.add_argument("text", help="query text")
    if name == "export":
        p.add_argument("--format", choices=("jsonl", "md"), default="jsonl")
        p.add_argument("--output", type=Path, help="a new file to write (default: stdout)")
    if name in ("list", "export"):
        p.add_argument("--kind", choices=KINDS, help="only lessons of this kind")
    if name == "list":
        p.add_argument("--task", help="only this task's lessons (q2, or quadratic/q2)")
        p.add_argument("--strategy", help="only lessons this strategy wrote")
        p.add_argument("--run", help="only lessons this run wrote (its id, as listed)")
    if name in ("list", "search"):
        what = "hits (default 5; --k is the same)" if name == "search" else "lessons per store"
        p.add_argument(
            "--limit",
            *["--k"] * (name == "search"),  # search's older name
            dest="limit",
            type=typed(positive),
            default=5 if name == "search" else None,
            help=f"print at most N {what}",
        )


def cmd_memory(args: argparse.Namespace) -> int:
    if args.verb in AUDIT_VERBS:
        return cmd_memory_audit(args)
    if args.verb in EDIT_VERBS:
        return cmd_memory_edit(args)
    with opened(args.path, args.chroma_url) as stores:
        if args.verb == "list":
            _list(args, stores)
        elif args.verb == "show":
            _show(args, stores)
        elif args.verb == "why":
            cmd_memory_why(args, stores)
        elif args.verb == "search":
            if not args.text.strip():
                msg = "memory search needs some text to search for"
                raise UsageError(msg)
            embedder = settings_for(args.path, args.chroma_url).embedder
            for hit in search_sources(stores, args.text, args.limit, embedder):
                print(f"{hit.similarity:.3f}  {_line(hit.reflection)}")
        else:
            chosen = Chosen(kind=args.kind)
            held = [r for store in stores for r in store.lessons(chosen)]
            # oldest first, across the stores: an export imported into one store exports the same
            _export(sorted(held, key=lambda r: (r.created, r.id)), args.format, args.output)
    return 0


def _list(args: argparse.Namespace, stores: list[Curated]) -> None:
    """Each store's lessons that pass the filters (a store they leave no lesson in is left out);
    --limit cuts each store's list, and says how many it left out."""
    chosen = Chosen(kind=args.kind, strategy=args.strategy, run=args.run)
    if args.task:
        tasks = [(r.env, r.task_id) for store in stores for r in store.lessons()]
        env, task = pick_task(args.task, tasks, args.path)
        chosen = dataclasses.replace(chosen, env=env, task=task)
    if args.strategy:
        known = [r.strategy for store in stores for r in store.lessons()]
        if args.strategy not in known:
            what = "lessons of strategy"
            raise unknown(what, args.strategy, known, args.path)
    if args.run:
        runs = [r.run_id for store in stores for r in store.lessons()]
        if args.run not in runs:
            what = "lessons of run"
            raise unknown(what, args.run, runs, args.path)
    found = [(store, store.lessons(chosen)) for store in stores]
    if chosen != Chosen():  # a filter: only the stores it leaves lessons in (at least one line)
        found = [(store, lessons) for store, lessons in found if lessons] or found[:1]
    for store, lessons in found:
        credit = credits_in(store)
        shown = lessons[: args.limit]
        more = f" (the first {len(shown)}: --limit {args.limit})" * (len(shown) < len(lessons))
        print(f"{len(lessons)} reflections in {store.label}{more}")
        for r in shown:
            print(_line(r, credit.get(r.id)))


def _show(args: argparse.Namespace, stores: list[Curated]) -> None:
    store, found = holder(stores, args.id, args.path)
    print(_describe(found, recollections(args.path, found.id)))
    if CREDIT in store.can:
        print(f"credit: {store.credits().get(found.id, Credit())}")
    for twin in store.merged_from(found.id):
        print(
            f"merged in: {twin['id']} ({twin['task_id']}, {twin['strategy']} seed "
            f"{twin['seed']} episode {twin['episode']}, run {twin['run_id']})"
        )


def _line(r: Reflection, credit: Credit | None = None) -> str:
    text = " ".join(r.text.split())
    text = text if len(text) <= 90 else text[:87] + "..."
    credited = "" if credit is None else f"  [{credit}]"
    credited += f"  [vague: {r.flag}]" if r.flag else ""
    credited += f"  [{r.verdict()}]" if r.status else ""
    if not is_own(r.kind):
        from reflexion.strategies import voted  # the designs load only for a design's lesson

        credited += f"  [{r.kind}" + (f", {r.votes} votes]" if voted(r.kind) else "]")
    return (
        f"{r.id}  {task_label(r.env, r.task_id)}  {r.strategy} seed {r.seed} ep {r.episode}  "
        f"run {r.run_id}  score {r.score:.4g}{credited}  | {text}"
    )


def _describe(r: Reflection, recalls: list[Recollection]) -> str:
    hidden = ("text", "evidence")
    shown = {k: v for k, v in r.to_dict().items() if k not in hidden and (v or k != "metadata")}
    lines = [f"{k}: {utc(v) if k == 'created' else v}" for k, v in shown.items()]
    if r.status:  # the gate's replays, one line each
        e = r.evidence
        lines += [f"gate: {r.verdict()}; rule {e.get('rule')}, K {e.get('k')}"]
        lines += [f"  replayed {', '.join(e.get('replayed', ())) or 'no task'}"]
        lines += [f"  calls (trace steps): {', '.join(e.get('calls', ())) or 'none'}"]
    lines += ["", r.text, ""]
    if not recalls:
        lines.append("never recalled in this run folder's trace")
    for seen in recalls:
        step, source = seen.step, seen.source
        sim = "n/a" if seen.similarity is None else f"{seen.similarity:.3f}"
        # the attempt made with this lesson in context against the recalling trial's previous
        # one: a hint, not a causal claim (other lessons were recalled alongside)
        outcome = ""
        if seen.after is not None and seen.before is None:
            outcome = f", first attempt scored {seen.after:.4g}"
        elif seen.after is not None and seen.before is not None:
            outcome = f", score {seen.before:.4g} -> {seen.after:.4g}"
        lines.append(
            f"recalled by {step.strategy} task {step.task_id} seed {step.seed} "
            f"episode {step.episode} (similarity {sim}{outcome}"
            f"{'; from ' + source if source else ''})"
        )
    return "\n".join(lines)


def _export(reflections: list[Reflection], fmt: str, output: Path | None) -> None:
    if fmt == "jsonl":
        text = "".join(json.dumps(r.exported(), ensure_ascii=False) + "\n" for r in reflections)
    else:
        parts = ["# Reflections\n"]
        for r in reflections:
            parts.append(
                f"\n## {r.id}: {r.env}/{r.task_id}, episode {r.episode}\n\n"
                f"- run {r.run_id}, strategy {r.strategy}, seed {r.seed}\n"
                f"- score of the attempt: {r.score:.6g}\n\n{r.text}\n"
            )
        text = "".join(parts)
    if output is None:
        print(text, end="")
        return
    try:
        with output.open("x", encoding="utf-8") as f:  # "x": never overwrite a file
            f.write(text)
    except OSError as exc:
        msg = f"cannot write {output}: {exc.strerror or exc}"
        raise UsageError(msg) from None
    print(f"wrote {len(reflections)} reflections to {output}")
