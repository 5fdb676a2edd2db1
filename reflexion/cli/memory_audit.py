"""`reflexion memory audit|prune`: measure each recalled lesson's effect, and remove the lessons
measured to hurt.

    reflexion memory audit runs/main --sample 20        # rerun 20 episodes, each without a lesson
    reflexion memory prune runs/main --harmful --dry-run
    reflexion memory prune runs/main --harmful --why "audit of 2026-11-23"

The audit's counts go into the store, beside each lesson's credit (see reflexion.curate.audit).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from typing import Any

from memory.backend import Access
from reflexion.cli.common import plural, typed
from reflexion.core.curation import CREDIT, FORGET, Curated, require
from reflexion.core.errors import UsageError
from reflexion.curate.lessons import task_label
from reflexion.curate.stores import credits_in, opened
from reflexion.runner.parsers import positive

AUDIT_VERBS = ("audit", "prune")


def add_audit_verbs(verbs: Any) -> None:
    a = verbs.add_parser("audit", help="rerun recalling episodes without a lesson: its effect")
    a.add_argument("path", type=Path, help="a run folder")
    a.add_argument("--sample", type=typed(positive), default=20, help="probes (default 20)")
    a.add_argument("--seed", type=int, default=0, help="which probes are drawn (default 0)")
    a.add_argument("--model", help="a model to use instead of the run's own (a --model name)")
    p = verbs.add_parser("prune", help="forget the lessons the audit measured to hurt")
    p.add_argument("path", type=Path, help="a run folder or a Chroma store folder")
    p.add_argument("--harmful", action="store_true", required=True, help="(required)")
    p.add_argument("--dry-run", action="store_true", help="list them, change nothing")
    p.add_argument("--why", default="", help="the reason, kept in each one's history")
    for parser in (a, p):
        parser.add_argument("--chroma-url", help="a Chroma server instead of a folder")


def cmd_memory_audit(args: argparse.Namespace) -> int:
    with opened(args.path, args.chroma_url, Access.EDIT) as stores:
        if args.verb == "prune":
            _prune(stores, args)
            return 0
        from reflexion.curate.audit import audit_run
        from reflexion.models.registry import load_model

        model = load_model(args.model) if args.model else None
        report = audit_run(args.path, stores, args.sample, model, args.seed)
        _print(report, args.path)
        totals = {rid: c for store in stores for rid, c in credits_in(store).items()}
        held = {r.id for store in stores for r in store.lessons()}
    for lesson in sorted({p.lesson for p in report.probes}):
        said = "not stored now" if lesson not in held else "(its store keeps no credit)"
        print(f"{lesson}: {totals.get(lesson, said)}")
    return 0


def _print(report: Any, path: Path) -> None:
    if not report.candidates:
        print(f"no episode in {path} recalled a lesson: nothing to audit")
        return
    probes = report.probes
    print(
        f"audited {len(probes)} of {report.candidates} (episode, lesson) pairs in {path}: "
        "each episode rerun with every lesson it recalled and without this one"
    )
    print(
        f"{'lesson':<17} {'kind':<10} {'task':<16} {'episode':>7} {'with':>6} {'without':>8}  "
        "effect  held-out with/without"
    )
    for p in probes:
        held = f"{_word(p.passed_with)}/{_word(p.passed_without)}"
        print(
            f"{p.lesson:<17} {p.kind:<10} {p.task_id:<16} {p.episode:>7} {p.score_with:>6.3g} "
            f"{p.score_without:>8.3g}  {p.effect:<6}  {held}"
        )
    same = sum(p.score_with == p.recorded_score for p in probes)
    print(f"the rerun with every lesson scored what the run recorded in {same} of {len(probes)}")
    effects: dict[str, int] = defaultdict(int)
    for p in probes:
        effects[p.effect] += 1
    print("effects: " + ", ".join(f"{k} {effects[k]}" for k in ("helped", "hurt", "same")))
    print(f"counted in the store: {report.counted} (a probe audited before is not counted again)")
    for kind in report.uncounted:
        print(f"not counted: the {kind} backend keeps no credit")
    for line in report.skipped:
        print(f"skipped: {line}")


def _word(passed: bool) -> str:
    return "passed" if passed else "failed"


def _prune(stores: list[Curated], args: argparse.Namespace) -> None:
    keeping = [store for store in stores if CREDIT in store.can]
    if not keeping:
        kinds = " and ".join(sorted({store.kind for store in stores}))
        msg = f"the {kinds} backend cannot prune: it keeps no credit, so no audit counts"
        raise UsageError(msg)
    credit = {
        r.id: (store, r, c)
        for store in keeping
        for r in store.lessons()
        if (c := store.credits().get(r.id)) is not None and c.audited
    }
    if not credit:
        msg = "no lesson in this store has been audited: run `reflexion memory audit RUN` first"
        raise UsageError(msg)
    harmful = {rid: held for rid, held in credit.items() if held[2].harmful}
    verb = "would forget" if args.dry_run else "forgetting"
    print(
        f"{verb} {len(harmful)} of {len(credit)} audited lessons: measured to hurt more "
        "often than to help"
    )
    for rid, (_, r, c) in harmful.items():
        print(f"  {rid}  {task_label(r.env, r.task_id)}  {c}")
    if args.dry_run:
        print("(dry run: nothing changed)")
        return
    why = args.why or "prune --harmful: the audit measured it to hurt"
    done = 0
    for store in keeping:
        mine = [rid for rid, held in harmful.items() if held[0] is store]
        if mine:
            require(store, FORGET)
            done += store.forget(mine, why)
    print(f"forgot {plural(done, 'lesson')}")
