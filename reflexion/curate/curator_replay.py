"""A design's curator asked again, as the code asks it now, about what a run recorded: what a
change to a curator's request does to what the model writes, without running the stream
again. Nothing is stored. `scripts/curator.py ask` and `replay` run these.

- `ask`: each chosen task's final attempt (the prompt that asked for it, its answer and the
  verdict the model was shown, from the trace) is put to the curator of a kind with an empty
  board, as on a stream's first task, in the run's curation form (its config.json); each new
  reply is printed beside what that run stored then. With `every`, all recorded attempts of
  the task, each with its verdict, as `bank-scaled` asks.
- `replay`: every curator request of an `insights` run, rebuilt by today's code from what the
  trace holds (the task, the attempts and the verdicts shown, the rules), compared with the one
  the run sent up to the request's own words (a request that differs is counted and left
  out), asked again; the replies taken in full are counted, the run's and the new ones. A
  reply is taken in full when it holds an operation and the board (reflexion.trial.board's
  `apply`, with insights' rules and the run's embedding model) applies every one. Not
  followed: the rules' votes (the prompt does not show them), so a reply that downvotes a rule
  to 0 and then names it again counts as taken. What the board did with the run's own replies,
  read from the trace, is printed beside this check's verdict on them, so any disagreement
  shows.

    >>> spread(list(range(10)), 3), spread(list(range(4)), 6)
    ([0, 3, 6], [0, 1, 2, 3])
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envs import make_env
from memory import embedder_for
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Curation, Kind, Reflection
from reflexion.core.records import Attempt, Score, Step, Task
from reflexion.core.runfolder import RunFolder
from reflexion.models import DEFAULT_MODEL, load_model
from reflexion.strategies import insights
from reflexion.trial.board import Author, Embed, apply, by_embedding, near_copy
from reflexion.trial.hygiene import same_wording

if TYPE_CHECKING:
    from reflexion.actor.chat import ChatActor
# the chat actor (langchain) is imported when a curator is asked: `reflexion --help` lists
# these tools' package without loading it

CURATED_KINDS = {"item": Kind.ITEM, "rule": Kind.RULE, "cheatsheet": Kind.CHEATSHEET}
RULE = re.compile(r"^(\d+)\. (.*)$")
RULES = insights  # the design whose curator `replay` asks
# the board's author here: its rules are shown as this run's own, so every edit may apply
REPLAY = Author("", "insights", "", Task("", ""), 0, 1, clock=lambda: 0.0)
VOTES = 1_000  # the rules' votes are not followed (see the module): none drops to 0


def recorded(run: Path, strategy: str, seed: int) -> dict[str, dict[str, Any]]:
    """Per task: its attempts (each prompt, answer and verdict shown, in order), and the lessons
    the run stored."""
    tasks: dict[str, dict[str, Any]] = {}
    for step in RunFolder(run).steps():  # trace.jsonl, or a kept folder's trace.jsonl.gz
        if (step.strategy, step.seed) != (strategy, seed):
            continue
        mine = tasks.setdefault(step.task_id, {"tried": [], "stored": []})
        if step.kind == "generate":
            mine["tried"].append({"answer": step.output, "prompt": step.prompt})
        elif step.kind == "score" and mine["tried"]:
            mine["tried"][-1]["score"] = step.data
        elif step.kind == "remember" and step.data.get("kind"):
            mine["stored"].append((step.data["kind"], step.output))
    for mine in tasks.values():
        mine["tried"] = [t for t in mine["tried"] if "score" in t]  # a generate the check saw
    return {k: v for k, v in tasks.items() if v["tried"]}


def attempts(mine: dict[str, Any], every: bool) -> list[Attempt]:
    """The task's final attempt, or, with `every`, all of them in order."""
    tried = mine["tried"] if every else mine["tried"][-1:]
    made = []
    for n, t in enumerate(tried, 1):
        d = t["score"]
        shown = str(d.get("shown", d.get("feedback", "")))  # what the model was shown
        score = Score(float(d["value"]), bool(d["solved"]), shown)
        made.append(Attempt(n, t["answer"], score, t["prompt"]))
    return made


async def ask_curator(args: argparse.Namespace) -> int:
    """`curator.py ask` (see the module); a UsageError for a run or task it cannot ask about."""
    if not RunFolder(args.run).trace_file.is_file():
        msg = f"no trace.jsonl in {args.run}"
        raise UsageError(msg)
    found, tasks = recorded(args.run, args.strategy, args.seed), make_env(args.env).tasks()
    chosen = [t for t in args.tasks.split(",") if t] or list(found)[:3]
    unknown = [t for t in chosen if t not in {task.id for task in tasks}]
    missing = [t for t in chosen if t not in found]
    if unknown or missing or not chosen:
        what = (
            f"not a task of --env {args.env}" if unknown else f"no recorded {args.strategy} attempt"
        )
        msg = f"{what}: {', '.join(unknown or missing) or 'any task'}"
        raise UsageError(msg)
    config = json.loads((args.run / "config.json").read_text())
    from reflexion.actor.chat import ChatActor

    curation = Curation(config.get("curation", Curation.JSON))
    actor = ChatActor(load_model(args.model), curation=curation)
    for task in (t for t in tasks if t.id in chosen):
        mine = found[task.id]
        shown = attempts(mine, args.all_attempts)
        call = await actor.distill(task, CURATED_KINDS[args.kind], shown, [])
        verdicts = "; ".join(
            f"{'passed' if a.score.solved else 'failed'}: {a.score.feedback}" for a in shown
        )
        print(f"== {task.id} ({verdicts})")
        if args.show_prompt:
            print(f"  prompt:      {json.dumps([m.to_dict() for m in call.prompt])}")
        for kind, text in mine["stored"]:
            if kind == CURATED_KINDS[args.kind]:
                print(f"  stored then: {text}")
        print(f"  asked now:   {call.output}", flush=True)
    return 0


def requests(run: Path, strategy: str) -> list[dict[str, Any]]:
    """Each recorded curator request of `strategy`: its trial's attempts before it (prompt,
    answer, the verdict shown), the request's messages, the reply, and what the board did with
    it (`then`: taken in full, as `reflexion report` counts a reply)."""
    out: list[dict[str, Any]] = []
    trials: dict[tuple[str, int], dict[str, Any]] = {}
    for s in RunFolder(run).steps():
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
            trial["open"]["episode"] = s.episode  # a pair's: its failure's
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
    """The attempts `insights` shows its curator for a recorded request: the failure of the
    request's episode beside the task's first success. None for a chunk of successes, or for a
    request that today's code would not make: the rebuilt request then differs, and is left out."""
    attempts = []
    for n, a in enumerate(request["attempts"], 1):
        d = a["score"]
        score = Score(
            float(d["value"]), bool(d["solved"]), str(d.get("shown", d.get("feedback", "")))
        )
        attempts.append(Attempt(n, a["answer"], score, a["prompt"]))
    solved = next((a for a in attempts if a.score.solved), None)
    failed = [a for a in attempts if a.episode == request["episode"] and not a.score.solved]
    return [failed[0], solved] if solved is not None and failed else []


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
    how = (Kind.RULE, as_rules(rules), edits, RULES.BOARD, REPLAY, by_embedding(embed))
    _, _, notes = apply(*how)
    return not any(note.startswith("skipped") for note in notes)


def copies(text: str, held: list[str], embed: Embed) -> bool:
    """Is `text` one of `held` in the same words, or at least insights.DISTINCT similar to one?"""
    if any(same_wording(text, t) for t in held):
        return True
    return near_copy(text, as_rules(held), RULES.DISTINCT, by_embedding(embed)) is not None


def as_rules(texts: list[str]) -> list[Reflection]:
    """The rules a request showed, as the board's lessons (their text is their id)."""
    who = ("", "insights", "", "", 0, 0, 0.0, 0.0)
    return [Reflection(t, t, *who, kind="rule", votes=VOTES) for t in texts]


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


async def replay_curator(args: argparse.Namespace) -> int:
    """`curator.py replay` (see the module); a UsageError for a run it cannot replay."""
    if args.limit < 0:
        msg = f"--limit must be 0 (all) or more, got {args.limit}"
        raise UsageError(msg)
    config = json.loads((args.run / "config.json").read_text())
    if config.get("curation", Curation.JSON) != Curation.JSON:
        msg = f"{args.run} asked for free-text replies (--curation text)"
        raise UsageError(msg)
    found = requests(args.run, args.strategy)
    if not found:
        msg = f"no {args.strategy} curator request in {args.run}"
        raise UsageError(msg)
    chosen = spread(found, args.limit)
    tasks = {t.id: t for t in make_env(args.env).tasks()}
    if missing := sorted({r["task"] for r in chosen} - set(tasks)):
        msg = f"task {missing[0]} is not a task of --env {args.env}"
        raise UsageError(msg)
    model = args.model or config.get("curator_model") or config.get("model") or DEFAULT_MODEL
    from reflexion.actor.chat import ChatActor

    actor = ChatActor(load_model(model), max_tokens=config.get("max_tokens"))
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
