"""`reflexion memory why RUN TASK EPISODE`: why an episode recalled what it did. The query, every
recalled lesson with its similarity, score and rank, the lessons that the scope, k or the
design's pick cut off (and which; `bank` keeps the nearest task's items), and what happened to
the attempt that followed. A recalled lesson that --memory-tokens kept out of the prompt is
marked, and was not credited. Each recall is explained by the store its strategy used, in that
store's own order (a window's is newest first), among the lessons of its kind. A board (the
rules, the cheatsheet) is not searched: only --memory-tokens bounds what of it reaches the
prompt. Board reads made after the attempt (to learn from it) are not explained: the attempt
never saw them.

    reflexion memory why runs/x q4 2 --strategy reflexion
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from reflexion.core.curation import Curated
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import REFLECTION, Recalled, RecallScope, Reflection, is_own
from reflexion.core.records import Step
from reflexion.core.runfolder import RunFolder
from reflexion.curate.lessons import pick_task
from reflexion.curate.recalls import recalls_seen
from reflexion.curate.stores import kept_by
from reflexion.trial.provenance import left_entry


def add_why_verb(verbs: Any) -> None:
    p = verbs.add_parser("why", help="why an episode recalled what it did, and what it cut off")
    p.add_argument("path", type=Path, help="a run folder")
    p.add_argument("task", help="task id")
    p.add_argument("episode", type=int, help="episode number")
    p.add_argument("--strategy", help="only this strategy's trials")
    p.add_argument("--seed", type=int, help="only this seed")
    p.add_argument("--chroma-url", help="the run's Chroma server, if it used one")


def cmd_memory_why(args: argparse.Namespace, stores: list[Curated]) -> None:
    folder = RunFolder(args.path)
    if not folder.trace_file.is_file():  # a store folder has the lessons, not the recalls
        msg = f"no trace.jsonl in {args.path}: memory why reads a run folder's recalls"
        raise UsageError(msg)
    steps = folder.steps()
    config = folder.load_config() or {}
    asked = recalls_seen(steps)
    tasks = [(str(s.data.get("env") or config.get("env") or ""), s.task_id) for s in asked]
    _, task = pick_task(args.task, tasks, args.path)
    recalling = sorted({s.strategy for s in asked})
    if args.strategy is not None and args.strategy not in recalling:
        msg = f"no recall by strategy {args.strategy!r} in {args.path}; by: {', '.join(recalling)}"
        raise UsageError(msg)
    recalls = [
        s
        for s in asked
        if s.task_id == task
        and s.episode == args.episode
        and (args.strategy is None or s.strategy == args.strategy)
        and (args.seed is None or s.seed == args.seed)
    ]
    if not recalls:
        msg = f"no recall of task {args.task!r} at episode {args.episode} in {args.path}"
        raise UsageError(msg)
    for step in recalls:
        print(_explain(step, steps, config, kept_by(stores, step.strategy, config)))


def _explain(step: Step, steps: list[Step], config: dict[str, Any], stores: list[Curated]) -> str:
    data = step.data
    query = step.prompt[0].content if step.prompt else ""
    kind = str(data.get("kind", REFLECTION))
    k, rank = data.get("k", config.get("k", 3)), config.get("rank", "similarity")
    ranking = "newest first" if all(s.kind == "window" for s in stores) else f"ranking {rank}"
    picked = f", then {data['picked']}" if data.get("picked") else ""  # bank: one task's items
    how = f"k={k}{picked}, scope {data.get('scope', '?')}, {ranking}"
    if data.get("board"):
        from reflexion.strategies import one_text  # the designs load only to explain a board

        how = "the newest sheet" if one_text(kind) else "the board, most votes first"
    lines = [
        f"{step.strategy} seed {step.seed}, task {step.task_id}, episode {step.episode}, "
        f"{kind} lessons: {how}",
        f"query: {_short(query, 200)}" if query else "query: none (a board is not searched)",
        "recalled:",
    ]
    hits, unshown = data.get("hits", []), _over_bound(step, steps)
    for i, h in enumerate(hits, start=1):
        lines.append(
            f"  {i}. {h['id']}  similarity {_num(h.get('similarity'))}  score "
            f"{_num(h.get('score'))}  from {h.get('source', '?')}"
            + ("  (not in the prompt: over --memory-tokens)" if h["id"] in unshown else "")
        )
    if not hits:
        lines.append("  (nothing)")
    if data.get("board"):
        lines.append("cut off: none by search (a board is not searched; --memory-tokens bounds it)")
        rule = data.get("same_task_left_out", [])
        lines += ["left out:"] if rule else []
        lines += [f"  {r['id']}  {r['task_id']}  {r['why']}" for r in rule]
    else:
        lines += _cut_off(step, stores, {h["id"] for h in hits}, kind)
    lines.append(f"then: {_then(step, steps)}")
    return "\n".join(lines) + "\n"


def _over_bound(step: Step, steps: list[Step]) -> set[str]:
    """The recalled ids that --memory-tokens kept out of the episode's prompts (not credited)."""
    trial = (step.strategy, step.task_id, step.seed, step.episode)
    return {
        i
        for s in steps
        if (s.strategy, s.task_id, s.seed, s.episode) == trial
        for i in s.data.get("over_bound", ())
    }


def _cut_off(step: Step, stores: list[Curated], recalled: set[str], kind: str) -> list[str]:
    """The store's other lessons of `kind` that existed at the recall, and what kept each out."""
    data, query = step.data, step.prompt[0].content if step.prompt else ""
    stream = bool(data.get("stream", False))
    # as RecordedTrial.scope asks: in a parallel run, no lesson of this run for other tasks
    episode = step.episode if is_own(kind) or stream else 0
    where = (step.run_id, step.strategy, step.seed, episode)
    scope = RecallScope(
        str(data.get("env", "")),
        step.task_id,
        *where,
        str(data.get("scope", "task")),
        stream=stream,
        kinds=(kind,),
        leave_task_out=bool(data.get("leave_task_out", False)),  # a trace before the rule: off
    )
    at = float(data.get("at", float("inf")))
    every: list[Recalled] = []
    order: list[Recalled] = []
    for store in stores:
        every += store.search(query, k=max(len(store.lessons()), 1))
        order += store.ranked(query, scope, at)
    there = [
        h
        for h in every
        if h.reflection.created <= at
        and h.reflection.id not in recalled
        and h.reflection.kind == kind
    ]
    place = {h.reflection.id: i for i, h in enumerate(order, start=1)}
    lines = ["cut off:" if there else "cut off: nothing (every lesson there was recalled)"]
    for h in sorted(there, key=lambda h: place.get(h.reflection.id, 10**9)):
        r = h.reflection
        if r.id in data.get("left_out", ()):  # found, then left out (bank: another task's)
            why = f"found (k={data.get('k', '?')}), then left out by {data.get('picked')}"
        elif r.id in place:
            why = f"ranked {place[r.id]} (k={data.get('k', '?')})"
        else:
            why = f"scope: {_not_admitted(scope, r)}"
        similar = "" if h.similarity is None else f"  similarity {_num(h.similarity)}"
        lines.append(f"  {r.id}{similar}  {r.task_id}  {why}")
    return lines


def _not_admitted(scope: RecallScope, r: Reflection) -> str:
    if r.rejected:
        return f"{r.verdict()} (the gate; `memory show {r.id}` lists its replays)"
    if scope.left_out(r):
        return str(left_entry(r, scope.task_id)["why"])
    if r.env != scope.env:
        return "another env"
    if scope.scope == "task" and r.task_id != scope.task_id:
        return "another task (--scope task)"
    if r.strategy != scope.strategy or r.seed != scope.seed:
        return "this run, another strategy or seed"
    return "this run, this episode or a later one"


def _then(step: Step, steps: list[Step]) -> str:
    trial = (step.strategy, step.task_id, step.seed)
    same = [s for s in steps if s.kind == "score" and (s.strategy, s.task_id, s.seed) == trial]
    now = next((s for s in same if s.episode == step.episode), None)
    before = [s for s in same if s.episode < step.episode]
    if now is None:
        return "no attempt followed"
    value = float(now.data.get("value", 0.0))
    if not before:
        return f"the attempt scored {value:.4g}"
    last = float(before[-1].data.get("value", 0.0))
    verdict = "rose" if value > last else "fell" if value < last else "stayed the same"
    return f"the attempt scored {value:.4g}, after {last:.4g}: {verdict}"


def _num(value: object) -> str:
    return "n/a" if value is None else f"{float(value):.3f}"  # type: ignore[arg-type]


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
