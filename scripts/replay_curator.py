"""Ask `insights`' curator again, as the code asks it now, every request a run recorded, each with
the rules that run showed then; print how many replies the board would take in full, beside how
many the run's own replies were: what a change to the curator's request does to the applied
rate, on the same requests, without running the stream again.

A reply is taken in full when it holds an operation and every operation applies: an add is
refused when the rules (with the reply's earlier adds) hold its text, case aside, or a text at
least 0.9 similar by the store's embedding model (`insights.DISTINCT`); an add or edit that is
empty or over 300 characters is refused; an edit that restates another rule counts, as the
upvote it becomes. These are the board's checks (reflexion/trial/board.py), made here on the
texts alone. First the script rebuilds each recorded request and checks that it is the one the
run sent (the task, the attempt and its verdict, the rules), so the requests compared are the
same but for the code's words; a request that differs is counted and left out.

    .venv/bin/python scripts/replay_curator.py runs/sql-05-by15 --env sql --limit 30
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import reflexion.strategies as designs
from envs import make_env
from memory import embedder_for
from reflexion import Attempt, ChatActor, Kind, Reflection, ReflexionError, Score, Step, load_model
from reflexion.models import DEFAULT_MODEL

RULE = re.compile(r"^(\d+)\. (.*)$")
RULES = designs.insights  # the design whose curator is asked


def requests(run: Path, strategy: str) -> list[dict[str, Any]]:
    """Each recorded curator request of `strategy`: its task, the attempt before it (prompt,
    answer, the verdict shown), the request's messages and the reply the run got."""
    out: list[dict[str, Any]] = []
    last: dict[str, dict[str, Any]] = {}
    for line in (run / "trace.jsonl").read_text().splitlines():
        s = Step.from_dict(json.loads(line))
        if s.strategy != strategy:
            continue
        mine = last.setdefault(s.task_id, {})
        if s.kind == "generate":
            mine.update(answer=s.output, prompt=s.prompt)
        elif s.kind == "score":
            mine["score"] = s.data
        elif s.kind == "distill":
            out.append({"task": s.task_id, **mine, "asked": s.prompt, "reply": s.output})
    return out


def rules_shown(asked: list[Any]) -> list[str]:
    """The rules a recorded request showed, in its numbered list."""
    block = asked[-1].content.split("Current rules:\n", 1)[1].split("\n\n", 1)[0]
    return [m[2] for line in block.splitlines() if (m := RULE.match(line))]


def taken(reply: str, rules: list[str], embed: Any) -> bool:
    """Would the board take every operation of `reply` (see the module)?"""
    edits, bad, beyond = RULES.json_edits(reply, rules)
    if bad or beyond or not edits:
        return False
    held = list(rules)
    for e in edits:
        if e.op in ("upvote", "downvote"):
            continue
        text = e.text.strip()
        if not text or len(text) > RULES.RULE_CHARS:
            return False
        if e.op == "add":
            if any(text.casefold() == r.casefold() for r in held):
                return False
            vectors = embed([text, *held])
            if any(cosine(vectors[0], v) >= RULES.DISTINCT for v in vectors[1:]):
                return False
            held.append(text)
    return True


def same_request(now: Any, then: Any, words: str) -> bool:
    """Are two requests the same up to the request's own words (which open with `words`)?"""
    cut = [m.content.split(words, 1)[0] for m in (now[-1], then[-1])]
    return [m.content for m in now[:-1]] == [m.content for m in then[:-1]] and cut[0] == cut[1]


def cosine(a: list[float], b: list[float]) -> float:
    dot, norms = sum(x * y for x, y in zip(a, b, strict=True)), math.hypot(*a) * math.hypot(*b)
    return dot / norms if norms else 0.0


def as_rules(texts: list[str]) -> list[Reflection]:
    return [Reflection(t, t, "", "insights", "", "", 0, 0, 0.0, 0.0, kind="rule") for t in texts]


async def replay(args: argparse.Namespace) -> int:
    found = requests(args.run, args.strategy)
    if not found:
        print(f"error: no {args.strategy} curator request in {args.run}", file=sys.stderr)
        return 2
    step = max(1, len(found) // args.limit) if args.limit else 1
    chosen = found[::step][: args.limit or None]
    tasks = {t.id: t for t in make_env(args.env).tasks()}
    actor = ChatActor(load_model(args.model), curation="json")
    embed = embedder_for(args.embedder).embed
    counts = [await again(r, actor, tasks, embed) for r in chosen]
    both = [c for c in counts if c is not None]
    print(
        f"\n{len(both)} requests replayed ({len(counts) - len(both)} rebuilt differently, left out)"
    )
    then, now = (sum(c[i] for c in both) for i in (0, 1))
    print(f"taken in full: the run's replies {then} of {len(both)}, asked now {now} of {len(both)}")
    return 0


async def again(r: dict[str, Any], actor: ChatActor, tasks: dict[str, Any], embed: Any) -> Any:
    """One recorded request asked again: (the run's reply taken in full, the new one), or None
    when the request rebuilt by the code now differs from the recorded one but for its words."""
    d, rules = r["score"], rules_shown(r["asked"])
    score = Score(float(d["value"]), bool(d["solved"]), str(d.get("shown", d.get("feedback", ""))))
    attempt = Attempt(1, r["answer"], score, r["prompt"])
    call = await actor.distill(tasks[r["task"]], Kind.RULE, [attempt], as_rules(rules))
    if not same_request(call.prompt, r["asked"], RULES.opening([attempt])):
        return None
    then, now = taken(r["reply"], rules, embed), taken(call.output, rules, embed)
    words = {True: "full", False: "not "}
    print(f"{r['task']}  rules {len(rules):2}  then {words[then]}  now {words[now]}", flush=True)
    print(f"  now: {call.output[:300]!r}", flush=True)
    return then, now


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run folder with insights' curator requests")
    parser.add_argument("--env", required=True, help="the env spec the run used")
    parser.add_argument("--strategy", default="insights")
    parser.add_argument("--limit", type=int, default=30, help="requests, evenly spaced (0: all)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the curator's model")
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    return parser.parse_args()


def main() -> int:
    args = arguments()
    try:
        return asyncio.run(replay(args))
    except (ReflexionError, OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
