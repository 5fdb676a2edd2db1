"""One task: a one-line verdict per strategy at the top (from results.jsonl), a picker of the
strategies to set side by side (`?show=single&show=reflexion`; by default all of them, up to
SIDE_BY_SIDE), and those strategies side by side: each episode's recalled lessons, the model's
calls, the candidate as a diff against the one before, its visible score and feedback, the
held-out verdict, and the reflection written after it. Read from the run's trace, in its
order."""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Sequence

from reflexion.core.records import Step, TaskResult
from reflexion.web.layout import Html, join, link, page, pre, tag, url
from reflexion.web.site import NotFound, Site
from reflexion.web.task_list import attempts

SIDE_BY_SIDE = 4  # strategies shown side by side when none are picked

# not model calls: notes shown with what they say (a program checked before it is kept as a
# skill, operations of a curator's reply skipped or unparsed, board edits)
QUIET = {"evaluate", "score", "recall", "remember", "self-tests", "budget", "verify", "skipped"}
QUIET |= {"unparsed", "revise", "revised"}


def task_page(site: Site, name: str, task_id: str, seed: int, show: Sequence[str] = ()) -> str:
    steps = [s for s in site.steps(name) if s.task_id == task_id]
    if not steps:
        msg = f"no task {task_id!r} in the trace of run {name!r}"
        raise NotFound(msg)
    seeds = sorted({s.seed for s in steps})
    if seed not in seeds:
        msg = f"task {task_id!r} of run {name!r} has no seed {seed} (it has {seeds})"
        raise NotFound(msg)
    by_strategy: dict[str, list[Step]] = defaultdict(list)
    for s in steps:
        if s.seed == seed:
            by_strategy[s.strategy].append(s)
    strategies = list(by_strategy)
    unknown = [s for s in show if s not in by_strategy]
    if unknown:
        msg = (
            f"task {task_id!r} has no strategy {unknown[0][:40]!r} (it has {', '.join(strategies)})"
        )
        raise NotFound(msg)
    shown = list(show) or strategies[:SIDE_BY_SIDE]
    trials = {r.strategy: r for r in site.results(name) if r.task_id == task_id and r.seed == seed}
    others = [link(url("runs", name, "tasks", task_id, seed=str(n)), f"seed {n}") for n in seeds]
    body = [tag("p", "Seeds: ", join(others, " · "))] if len(seeds) > 1 else []
    body.append(tag("ul", *(verdict_line(s, trials.get(s)) for s in strategies), cls="verdicts"))
    body.append(_picker(name, task_id, seed, strategies, shown))
    columns = [
        tag("div", tag("h2", strategy), *_episodes(name, by_strategy[strategy]))
        for strategy in strategies
        if strategy in shown
    ]
    body.append(tag("div", *columns, cls="side"))
    crumbs = [(url("runs", name), name), (url("runs", name, "tasks", task_id), task_id)]
    return page(f"{task_id}, seed {seed}", *body, crumbs=crumbs)


def verdict_line(strategy: str, r: TaskResult | None) -> Html:
    """One strategy's outcome on the task, in a line."""
    if r is None:
        return tag("li", tag("strong", strategy), ": not finished (no result yet)")
    word, cls = ("passed", "pass") if r.final_passed else ("failed", "fail")
    returned = f"episode {r.best_episode}'s answer, visible score {r.best_score:.3g}"
    tokens = r.input_tokens + r.output_tokens
    calls = f"{r.llm_calls} call" + "s" * (r.llm_calls != 1)
    spent = f"{tokens:,} tokens in {calls}" if r.llm_calls else "no model calls"
    return tag(
        "li",
        tag("strong", strategy),
        ": ",
        tag("span", word, cls=cls),
        f" held-out after {attempts(r.attempts)} (it returned {returned}); {spent}",
        data_strategy=strategy,
    )


def _picker(name: str, task_id: str, seed: int, strategies: list[str], shown: list[str]) -> Html:
    """Checkboxes of the strategies to set side by side."""
    boxes = [
        tag(
            "label",
            tag(
                "input",
                type="checkbox",
                name="show",
                value=s,
                **({"checked": "checked"} if s in shown else {}),
            ),
            f" {s} ",
        )
        for s in strategies
    ]
    return tag(
        "form",
        "Side by side: ",
        *boxes,
        tag("input", type="hidden", name="seed", value=str(seed)),
        tag("button", "Show", type="submit"),
        action=url("runs", name, "tasks", task_id),
        method="get",
        cls="picker",
    )


def _episodes(name: str, steps: list[Step]) -> list[Html]:
    """One box per episode (episode 0 holds what came before the first attempt)."""
    boxes, previous = [], None
    for episode in sorted({s.episode for s in steps}):
        parts: list[Html] = [tag("h3", f"episode {episode}")]
        last_output = ""
        for s in (s for s in steps if s.episode == episode):
            parts.append(_step(name, s, last_output, previous))
            if s.kind not in QUIET:
                last_output = s.output
            if s.kind == "score":
                previous = last_output
        boxes.append(tag("div", *parts, cls="attempt"))
    return boxes


def _step(name: str, s: Step, last_output: str, previous: str | None) -> Html:
    if s.kind == "recall":
        hits = s.data.get("hits", [])
        items = [
            tag("li", link(url("runs", name, "memory", str(h["id"])), str(h["id"])), _sim(h))
            for h in hits
        ]
        return tag("div", f"recalled {len(hits)} lessons", tag("ul", *items), cls="note")
    if s.kind == "score":
        candidate = _candidate(last_output, previous)
        value = float(s.data.get("value", 0.0))
        verdict = f"visible score {value:.3g}" + (" (solved)" if s.data.get("solved") else "")
        return join([candidate, tag("div", tag("strong", verdict)), pre(s.output)])
    if s.kind == "evaluate":
        ok = bool(s.data.get("solved"))
        text = "held-out: " + ("passed" if ok else "failed")
        return tag("div", text, cls="pass" if ok else "fail")
    if s.kind == "remember":
        rid = str(s.data.get("id", ""))
        return tag("div", "stored as lesson ", link(url("runs", name, "memory", rid), rid))
    if s.kind in QUIET:
        return tag("div", f"{s.kind}: ", pre(s.output), cls="note")
    if s.kind in ("reflect", "feedback"):
        return join([tag("div", tag("strong", s.kind)), pre(s.output, cls="lesson")])
    return tag("div", f"{s.kind} ({s.output_tokens} tokens out)", cls="note")


def _candidate(text: str, previous: str | None) -> Html:
    """The first candidate in full; a later one as a diff against the one before it, with the
    whole text one click away."""
    if previous is None:
        return join([tag("div", tag("strong", "candidate")), pre(text)])
    lines = list(difflib.unified_diff(previous.splitlines(), text.splitlines(), lineterm="", n=2))
    if not lines:
        return tag("div", tag("strong", "candidate"), " (same as the one before)")
    marked = [
        tag("span", line + "\n", cls="add" if line[:1] == "+" else "del" if line[:1] == "-" else "")
        for line in lines[2:]
    ]
    full = tag("details", tag("summary", "whole candidate"), pre(text))
    return join([tag("div", tag("strong", "candidate, changed lines")), tag("pre", *marked), full])


def _sim(hit: dict[str, object]) -> str:
    similarity = hit.get("similarity")
    source = hit.get("source") or ""
    text = "" if similarity is None else f" similarity {float(str(similarity)):.3f}"
    return text + (f" ({source})" if source else "")
