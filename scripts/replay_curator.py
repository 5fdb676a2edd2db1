"""Ask `insights`' curator again, as the code asks it now, every request a run recorded, each with
the rules it showed then; count the replies taken in full, the run's and the new ones: what a
change to the curator's request does to the applied rate, on the same requests, without running
the stream again.

Each recorded request is rebuilt by today's code from what the trace holds (the task, the
attempts and the verdicts shown, the rules) and compared with the one the run sent, up to the
request's own words; a request that differs is counted and left out. A reply is taken in full
when it holds an operation and every operation applies, by the board's checks (as in
reflexion/trial/board.py), made here on the texts: an add is refused when the list holds 10
rules, or holds its text (case aside) or a text at least 0.9 similar by the run's embedding
model; an add or edit that is empty, over 300 characters or the prompt's placeholder copied is
refused; an edit that restates another rule counts, as the upvote it becomes; an edit changes
the text that later operations of the reply are judged against. Not followed: the rules' votes
(the prompt does not show them), so a reply that downvotes a rule to 0 and then names it again
counts as taken. What the board did with the run's own replies, read from the trace, is printed
beside this check's verdict on them, so any disagreement shows.

    .venv/bin/python scripts/replay_curator.py runs/sql-05-by15 --env sql --limit 16
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import reflexion.strategies as designs
from envs import make_env
from memory import embedder_for
from reflexion import Attempt, ChatActor, Kind, Reflection, ReflexionError, Score, Step, load_model
from reflexion.curate import placeholder, same_wording
from reflexion.models import DEFAULT_MODEL

RULE = re.compile(r"^(\d+)\. (.*)$")
RULES = designs.insights  # the design whose curator is asked
Embed = Callable[[list[str]], Sequence[Sequence[float]]]


def requests(run: Path, strategy: str) -> list[dict[str, Any]]:
    """Each recorded curator request of `strategy`: its trial's attempts before it (prompt,
    answer, the verdict shown), the request's messages, the reply, and what the board did with
    it (`then`: taken in full, as `reflexion report` counts a reply)."""
    out: list[dict[str, Any]] = []
    trials: dict[tuple[str, int], dict[str, Any]] = {}
    for line in (run / "trace.jsonl").read_text().splitlines():
        s = Step.from_dict(json.loads(line))
        if s.strategy != strategy:
            continue
        trial = trials.setdefault((s.task_id, s.seed), {"attempts": []})
        if s.kind in ("generate", "distill"):
            trial.pop("open", None)  # the reply before it is closed
        if s.kind == "generate":
            trial["attempts"].append({"answer": s.output, "prompt": s.prompt})
        elif s.kind == "score":
            trial["attempts"][-1]["score"] = s.data
        elif s.kind == "distill":
            attempts = [dict(a) for a in trial["attempts"]]
            trial["open"] = {"task": s.task_id, "attempts": attempts, "asked": s.prompt}
            trial["open"] |= {"reply": s.output, "made": False, "missed": False}
            out.append(trial["open"])
        elif "open" in trial:
            _board_did(trial["open"], s)
    return out


def _board_did(request: dict[str, Any], s: Step) -> None:
    """What a step after a reply says the board did with it (a change made, one refused)."""
    lines = s.output.splitlines()
    request["made"] |= s.kind == "revise"
    request["missed"] |= s.kind in ("unparsed", "skipped")
    request["missed"] |= s.kind == "revised" and any(x.startswith("skipped") for x in lines)


def material(request: dict[str, Any]) -> list[Attempt]:
    """The attempts `insights` shows its curator: the first failure and the last attempt (one
    failure alone when there was one attempt)."""
    attempts = []
    for n, a in enumerate(request["attempts"], 1):
        d = a["score"]
        score = Score(
            float(d["value"]), bool(d["solved"]), str(d.get("shown", d.get("feedback", "")))
        )
        attempts.append(Attempt(n, a["answer"], score, a["prompt"]))
    return RULES.compared(attempts)


def rules_shown(asked: Sequence[Any]) -> list[str]:
    """The rules a recorded request showed, in its numbered list."""
    text = asked[-1].content
    if "Current rules:\n" not in text:
        msg = "a curator request without a list of rules: is this an insights run (--strategy)?"
        raise ValueError(msg)
    block = text.split("Current rules:\n", 1)[1].split("\n\n", 1)[0]
    return [m[2] for line in block.splitlines() if (m := RULE.match(line))]


def taken(reply: str, rules: list[str], embed: Embed) -> bool:
    """Would the board take every operation of `reply` (see the module)?"""
    edits, bad, beyond = RULES.json_edits(reply, rules)
    if bad or beyond or not edits:
        return False
    now, added = list(rules), list[str]()  # the rules' texts as the reply changes them; adds
    for e in edits:
        if e.op in ("upvote", "downvote"):
            continue
        text = e.text.strip()
        if not text or len(text) > RULES.RULE_CHARS or placeholder(text):
            return False
        if e.op == "edit":
            i = rules.index(e.target or "")
            others = [t for j, t in enumerate(now) if j != i] + added
            if not copies(text, others, embed):  # else the upvote of the rule it restates
                now[i] = text
        elif len(now) + len(added) >= RULES.MAX_RULES or copies(text, now + added, embed):
            return False
        else:
            added.append(text)
    return True


def copies(text: str, held: list[str], embed: Embed) -> bool:
    """Is `text` one of `held` in the same words, or at least insights.DISTINCT similar to one?"""
    if not held:
        return False
    if any(same_wording(text, t) for t in held):
        return True
    new, *old = embed([text, *held])
    return any(cosine(new, v) >= RULES.DISTINCT for v in old)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot, norms = sum(x * y for x, y in zip(a, b, strict=True)), math.hypot(*a) * math.hypot(*b)
    return dot / norms if norms else 0.0


def as_rules(texts: list[str]) -> list[Reflection]:
    return [Reflection(t, t, "", "insights", "", "", 0, 0, 0.0, 0.0, kind="rule") for t in texts]


def same_request(now: Sequence[Any], then: Sequence[Any], words: str) -> bool:
    """Are two requests the same up to the request's own words (which open with `words`)?"""
    cut = [m.content.split(words, 1)[0] for m in (now[-1], then[-1])]
    return [m.content for m in now[:-1]] == [m.content for m in then[:-1]] and cut[0] == cut[1]


async def again(r: dict[str, Any], actor: ChatActor, tasks: dict[str, Any], embed: Embed) -> Any:
    """One recorded request asked again: (the board took the run's reply in full, this check
    says so too, it takes the new reply), or None when the rebuilt request differs."""
    rules, shown = rules_shown(r["asked"]), material(r)
    call = await actor.distill(tasks[r["task"]], Kind.RULE, shown, as_rules(rules))
    if not same_request(call.prompt, r["asked"], RULES.opening(shown)):
        return None
    board = r["made"] and not r["missed"]
    then, now = taken(r["reply"], rules, embed), taken(call.output, rules, embed)
    said = {True: "full", False: "not "}
    print(f"{r['task']}  rules {len(rules):2}  board {said[board]}  check {said[then]}  ", end="")
    print(f"now {said[now]}\n  now: {json.dumps(call.output)}", flush=True)
    return board, then, now


async def replay(args: argparse.Namespace) -> int:
    if args.limit < 0:
        print(f"error: --limit must be 0 (all) or more, got {args.limit}", file=sys.stderr)
        return 2
    config = json.loads((args.run / "config.json").read_text())
    if config.get("curation", "json") != "json":
        print(f"error: {args.run} asked for free-text replies (--curation text)", file=sys.stderr)
        return 2
    found = requests(args.run, args.strategy)
    if not found:
        print(f"error: no {args.strategy} curator request in {args.run}", file=sys.stderr)
        return 2
    chosen = spread(found, args.limit)
    tasks = {t.id: t for t in make_env(args.env).tasks()}
    if missing := sorted({r["task"] for r in chosen} - set(tasks)):
        print(f"error: task {missing[0]} is not a task of --env {args.env}", file=sys.stderr)
        return 2
    model = args.model or config.get("curator_model") or config.get("model") or DEFAULT_MODEL
    actor = ChatActor(load_model(model), max_tokens=config.get("max_tokens"), curation="json")
    embed = embedder_for(args.embedder or config.get("embedder", "all-MiniLM-L6-v2")).embed
    counts = [c for r in chosen if (c := await again(r, actor, tasks, embed)) is not None]
    n, (board, then, now) = len(counts), (sum(c[i] for c in counts) for i in range(3))
    print(f"\n{n} requests replayed ({len(chosen) - n} rebuilt differently, left out)")
    print(f"the run's replies taken in full: {board} of {n} by the board, {then} by this check")
    agree = sum(c[0] == c[1] for c in counts)
    print(f"this check agrees with the board on {agree} of {n}; asked now: {now} of {n}")
    return 0


def spread(found: list[Any], limit: int) -> list[Any]:
    """`limit` of `found`, evenly spaced from the first to near the last (all: `limit` 0).

    >>> spread(list(range(10)), 3), spread(list(range(4)), 6)
    ([0, 3, 6], [0, 1, 2, 3])
    """
    n = min(limit, len(found)) if limit else len(found)
    return [found[i * len(found) // n] for i in range(n)]


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run folder with insights' curator requests")
    parser.add_argument("--env", required=True, help="the env spec the run used")
    parser.add_argument("--strategy", default="insights")
    parser.add_argument("--limit", type=int, default=30, help="requests, evenly spaced (0: all)")
    parser.add_argument("--model", default="", help="default: the run's curator (config.json)")
    parser.add_argument("--embedder", default="", help="default: the run's (config.json)")
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
