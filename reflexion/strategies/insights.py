"""`insights` (ExpeL, Zhao et al., AAAI 2024): one shared list of rules, in every prompt, written
from ExpeL's two sources. After a task that succeeded, the model compares the task's first success
with each of its failed attempts, one call a pair; and each task's first success is kept (as an
exemplar) until 8 of them (ExpeL's `success_critique_num`) wait, when one call critiques all 8
together. A task that never succeeded writes no rule, as in ExpeL. Each call edits the list: ADD
a rule, EDIT one, UPVOTE or DOWNVOTE one. A new rule starts with 2 votes, and a rule whose votes
fall to 0 drops out. Every edit is kept in the rule's history. The reply is a JSON object held
to a schema (--curation json, the default): a short reason, then at most 4 operations (ExpeL
asks for at most 4); --curation text asks for them as free-text lines.

ExpeL critiques its successes offline, shuffled into chunks once every training task is over;
a stream has no end to wait for, so here a chunk is the 8 successes in the order they came, asked
when the eighth arrives (the last fewer than 8 of a stream are never critiqued). The waiting
successes are this run's exemplars in the memory, not a list in the process, so a resumed run
asks the same chunks.

`expel` is ExpeL as it evaluates: the rules, and beside them the successful attempts of the 6
most similar earlier tasks (`fewshot_strategy: task_similarity`), as worked examples.

The rules go in the system message (the same for every task, so the prefix cache keeps them;
where tasks share a long context, such as a database's schema, in the user message after that
context), numbered, most votes first; the list holds at most 10 of this run's rules, each of at
most 300 characters.

A reply that is no JSON object, or an operation (a reply line) that does not parse or names a
rule not on the list, is skipped and said in the trace; it never changes the list.

    >>> edits, bad, _ = parse_edits("ADD: Check the sign.\\nUPVOTE 2\\nEDIT 9: x\\nhi", ["a", "b"])
    >>> [(e.op.value, e.target) for e in edits], bad
    ([('add', None), ('upvote', 'b')], ['EDIT 9: x', 'hi'])
    >>> ops = '{"reason": "r", "operations": [{"op": "upvote", "rule": 1}]}'
    >>> [(e.op.value, e.target) for e in json_edits(ops, ["a"])[0]]
    [('upvote', 'a')]
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

from reflexion.core.lesson_records import (
    Board,
    BoardEdit,
    Curation,
    EditOp,
    Kind,
    Recalled,
    Reflection,
)
from reflexion.core.protocols import Distilling, Trial
from reflexion.core.records import Attempt, Score, Task
from reflexion.strategies.exemplars import exemplar_text
from reflexion.strategies.learning import (
    Design,
    Distill,
    Lessons,
    Request,
    both,
    cannot_learn,
    json_object,
    operation,
    reason_and,
)

HEADER = "Rules learned from earlier tasks. Apply the ones that fit this task:"
SYSTEM = "You keep a short list of general rules that help solve tasks of one kind."
GOAL = (
    "{opening} Change the rules so that an attempt at a DIFFERENT task of this kind avoids "
    "what went wrong (or repeats what worked)."
)
JSON_REQUEST = GOAL + (
    ' Reply with a JSON object: "reason", one or two sentences on what the attempts show, then '
    '"operations", at most 4 of these:\n'
    '{{"op": "add", "text": "<a new general rule, in one sentence>"}}\n'
    '{{"op": "edit", "rule": <n>, "text": "<a better wording of rule n>"}}\n'
    '{{"op": "upvote", "rule": <n>}}\n'
    '{{"op": "downvote", "rule": <n>}}\n'
    "A rule must be general: no names or numbers from this task."
)
REQUEST = (
    "{opening} Change the rules so that an attempt at a DIFFERENT task of "
    "this kind avoids what went wrong (or repeats what worked). Reply with at most 4 lines, "
    "each one of these forms:\n"
    "ADD: <a new general rule, in one sentence>\n"
    "EDIT <n>: <a better wording of rule n>\n"
    "UPVOTE <n>\n"
    "DOWNVOTE <n>\n"
    "A rule must be general: no names or numbers from this task. Reply with the lines only."
)
SHARED = "what they share that made them work."
LINE = re.compile(r"^\W*(ADD|EDIT|UPVOTE|DOWNVOTE)\b\s*(\d+)?\s*:?\s*(.*)$", re.IGNORECASE)
# A reply read: the edits to apply, the lines that are no edit, the edits beyond MAX_EDITS.
Read = tuple[list[BoardEdit], list[str], list[str]]
MAX_EDITS = 4  # per reply: ExpeL's prompt says "Do at most 4 operations"
CHUNK = 8  # successes critiqued in one call: ExpeL's success_critique_num
SHOTS = 6  # `expel`'s exemplars: ExpeL's HotpotQA (question answering) takes 6
EVERY = 100_000  # exemplars one recall may read: all of them, to count this run's
VOTED = (EditOp.EDIT, EditOp.UPVOTE, EditOp.DOWNVOTE)  # the edits of a rule on the board
MAX_RULES = 10  # rules on one board: ExpeL keeps a short list, and a prompt must stay small
NEW_RULE_VOTES = 2  # as ExpeL: a new rule survives one downvote
RULE_CHARS = 300  # a rule is one sentence or two; a longer "rule" is a malformed reply
# A new rule at least this similar to one on the list (by the store's embedding model) is a
# near-copy and is not added, and an edit that makes one rule a near-copy of another upvotes
# that other rule instead (ExpeL turns such an EDIT into an AGREE): the 1.5B curator re-adds
# and rewrites its favourite rule in new words (on the SQL stream, 7 of 9 rules became one rule
# about one question's table alias). As `bank`'s items.
DISTINCT = 0.9
BOARD = Board(
    most=MAX_RULES,
    chars=RULE_CHARS,
    new_votes=NEW_RULE_VOTES,
    drops_at_zero=True,
    distinct=DISTINCT,
)


def schema(board: Sequence[Reflection]) -> dict[str, Any]:
    """The reply's schema for this board: an add while the list has room, and edits and votes
    only of rules on it, so every operation the grammar lets through can be applied.

    >>> schema([])["properties"]["operations"]["items"]["properties"]["op"]
    {'const': 'add'}
    """
    n = len(board)
    ops = [operation("add", "rule", 0, RULE_CHARS)] if n < MAX_RULES else []
    if n:
        ops += [operation("edit", "rule", n, RULE_CHARS)]
        ops += [operation(["upvote", "downvote"], "rule", n, 0)]
    return reason_and("operations", ops, MAX_EDITS)


def numbered(texts: Sequence[str]) -> str:
    return "\n".join(f"{n}. {t}" for n, t in enumerate(texts, 1))


def asking(words: str) -> Request:
    """The request: a task and a pair of its attempts, or a chunk of successes (all passed),
    each attempt holding its own task."""

    def request(
        task: Task, shown: str, attempts: Sequence[Attempt], board: Sequence[Reflection]
    ) -> str:
        rules = numbered([r.text for r in board]) or "(none yet)"
        asked = words.format(opening=opening(attempts))
        tried = shown if successes(attempts) else f"Task:\n{task.prompt}\n\n{shown}"
        return f"Current rules:\n{rules}\n\n{tried}\n\n{asked}"

    return request


def successes(attempts: Sequence[Attempt]) -> bool:
    """Whether `attempts` are a chunk of successes (a pair holds a failure)."""
    return all(a.score.solved for a in attempts)


def opening(attempts: Sequence[Attempt]) -> str:
    """What to look at, as ExpeL's two critiques: a failure against the task's success, or the
    successes of several tasks.

    >>> opening([Attempt(1, "Task: ...", Score(1.0, True))])
    'Look at the successful attempts at the tasks above: what they share that made them work.'
    """
    if successes(attempts):
        return f"Look at the successful attempts at the tasks above: {SHARED}"
    return "Compare the failed attempt with the one that succeeded, above."


def parse_edits(reply: str, ids: Sequence[str]) -> Read:
    """The edits a reply asks for (rules by their number in the list the model saw, `ids`), the
    lines that were not edits, and the edits beyond the reply's first `MAX_EDITS`, skipped.

    >>> parse_edits("ADD: a\\nADD: b\\nADD: c\\nADD: d\\nADD: e", [])[2]
    ['skipped, beyond the 4 operations of a reply: ADD: e']
    """
    edits: list[BoardEdit] = []
    bad: list[str] = []
    beyond: list[str] = []
    for line in (x.strip() for x in reply.splitlines()):
        found = LINE.match(line) if line else None
        if not line:
            continue
        op, number, text = (found[1].lower(), found[2], found[3].strip()) if found else ("", "", "")
        target = ids[int(number) - 1] if number and 0 < int(number) <= len(ids) else None
        if op == EditOp.ADD and text and not number:
            edit = BoardEdit(EditOp.ADD, None, text)
        elif op in VOTED and target and (text or op != EditOp.EDIT):
            edit = BoardEdit(EditOp(op), target, text)
        else:
            bad.append(line)
            continue
        if len(edits) < MAX_EDITS:
            edits.append(edit)
        else:
            beyond.append(f"skipped, beyond the {MAX_EDITS} operations of a reply: {line}"[:200])
    return edits, bad, beyond


def json_edits(reply: str, ids: Sequence[str]) -> Read:
    """`parse_edits` of a JSON reply: each operation as the line it stands for; a reply with
    no JSON object of operations is one bad line."""
    data = json_object(reply)
    ops = data.get("operations") if data is not None else None
    if not isinstance(ops, list):
        return [], ["no JSON object of operations in the reply"], []
    lines = [line for op in ops if (line := as_line(op))]
    edits, bad, beyond = parse_edits("\n".join(lines), ids)
    return edits, bad + ["an operation that is not an object"] * (len(ops) - len(lines)), beyond


def as_line(op: object) -> str:
    """A JSON operation as the reply line it stands for ("" when it is no operation).

    >>> as_line({"op": "edit", "rule": 2, "text": "Check\\nsigns."})
    'EDIT 2: Check signs.'
    """
    if not isinstance(op, dict):
        return ""
    name, rule, text = str(op.get("op", "")).upper(), op.get("rule", 0), str(op.get("text", ""))
    number = f" {rule}" if isinstance(rule, int) and rule and name != "ADD" else ""
    return f"{name}{number}: {' '.join(text.split())}".rstrip(": ")


async def shown(trial: Trial, episode: int) -> list[Recalled]:
    return [Recalled(r) for r in await trial.board(Kind.RULE, episode, BOARD)]


async def shown_with_exemplars(trial: Trial, episode: int) -> list[Recalled]:
    """`expel`: the rules, and the successes of the most similar earlier tasks."""
    return await shown(trial, episode) + await trial.recall(episode, Kind.EXEMPLAR, SHOTS)


async def learn(trial: Trial, attempts: list[Attempt], episode: int) -> None:
    """ExpeL's two sources: the first success against each failure, one call a pair; then the
    success waits for a chunk. A task that never succeeded teaches nothing."""
    solved = next((a for a in attempts if a.score.solved), None)
    if solved is None:
        return
    text = exemplar_text(trial.task.lookup, trial.answer_of(solved.candidate))
    kept = await trial.keep(Kind.EXEMPLAR, text, solved, key=trial.task.lookup)
    if not isinstance(trial.actor, Distilling) or cannot_learn(trial, Kind.RULE, episode):
        return
    for failed in (a for a in attempts if not a.score.solved):
        # subtle: at the failure's episode, so the next pair's board, read at a later episode,
        # holds what this one wrote, as ExpeL edits its list pair by pair
        await curate(trial, trial.task, [failed, solved], failed.episode)
    chunk = await waiting(trial, kept, episode) if kept is not None else []
    if len(chunk) == CHUNK:
        # each success an attempt holding its task; the last opens as this task's answer did,
        # so that over a shared context (a schema) the request keeps the model's cached prefix
        tried = [Attempt(n, text, Score(1.0, True)) for n, text in enumerate(chunk, 1)]
        tried[-1] = dataclasses.replace(tried[-1], prompt=solved.prompt)
        await curate(trial, trial.task, tried, episode)


async def waiting(trial: Trial, kept: Reflection, episode: int) -> list[str]:
    """The chunk that `kept` (this task's success) completes: the texts of this run's last
    `CHUNK` successes, oldest first, when this run has kept a multiple of `CHUNK`; else none.
    Counted from the memory (this run, strategy and seed), so a resume counts the same; the
    recall shows no prompt anything (its trace step holds no hits: `memory audit` reruns an
    episode with its hits)."""
    picked: list[str] = []

    def success_chunk(hits: list[Recalled]) -> list[Recalled]:
        mine = sorted(
            (h for h in hits if same_writer(h.reflection, kept) and h.reflection.id != kept.id),
            key=lambda h: (h.reflection.created, h.reflection.id),
        )
        if (len(mine) + 1) % CHUNK == 0:
            picked.extend([h.reflection.text for h in mine[len(mine) + 1 - CHUNK :]])
            picked.append(kept.text)
        return []

    await trial.recall(episode, Kind.EXEMPLAR, EVERY, success_chunk)
    return picked


def same_writer(lesson: Reflection, kept: Reflection) -> bool:
    return (lesson.run_id, lesson.strategy, lesson.seed) == (kept.run_id, kept.strategy, kept.seed)


async def curate(trial: Trial, task: Task, attempts: list[Attempt], episode: int) -> None:
    """One curator call about `attempts` (a pair of `task`'s, or a chunk of successes), its
    edits applied to the board as it stands now."""
    assert isinstance(trial.actor, Distilling)
    board = await trial.board(Kind.RULE, episode, BOARD)
    call = await trial.ask(trial.actor.distill(task, Kind.RULE, attempts, board), episode)
    read = json_edits if trial.actor.curation == Curation.JSON else parse_edits
    edits, bad, beyond = read(call.output, [r.id for r in board])
    if bad:
        trial.note(episode, "unparsed", "\n".join(bad), {"kind": Kind.RULE})
    if beyond:  # parsed, and not applied: as the cheatsheet's
        trial.note(episode, "skipped", "\n".join(beyond), {"kind": Kind.RULE})
    if edits:
        await trial.revise(Kind.RULE, edits, episode, rules=BOARD)


RULES = Lessons(
    Kind.RULE,
    HEADER,
    place="system",
    body=numbered,
    distill=Distill(SYSTEM, asking(JSON_REQUEST), schema, asking(REQUEST)),
    board=BOARD,
)
DESIGN = Design(RULES, shown, learn)
run, with_reflexion = both(DESIGN)
EXPEL = Design(RULES, shown_with_exemplars, learn)
expel, _ = both(EXPEL)
