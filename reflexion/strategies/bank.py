"""`bank` (ReasoningBank, Ouyang et al. 2025): after every task, success or failure, the model
distills at most three items (a title, when it applies, what to do) from its final attempt and
the visible verdict: a success's strategy or a failure's lesson, in the words of ReasoningBank's
two single-trajectory extraction prompts, sampled at temperature 1.0 as their `induce_memory.py`
samples them. As ReasoningBank keys its memory, an item is found by the question of
the task it came from, and a new task recalls all the items of the one earlier task whose
question is most similar (ReasoningBank's default, one task), listed before the task. An item
whose text is at least 0.9 similar (by embedding) to one kept for the same question is not
stored again (ReasoningBank's released code adds every item: a store can then fill with
near-copies of one note, and a recall of the k nearest items show that note k times).

`bank-scaled` is ReasoningBank's parallel scaling (MaTTS): all N candidates of a task are run,
none stopped by an early pass, and one curator call compares them all, each with its verdict,
before writing its items (their `induce_scaling.py`, whose request in
`prompts/memory_instruction.py` asks to "compare and contrast" by "self-contrast reasoning").

The reply is a JSON object held to a schema (--curation json, the default): a short reason, then
at most three items of three bounded fields; --curation text asks for TITLE/WHEN/DO lines.

    >>> parse_items("TITLE: Signs\\nWHEN: subtracting\\nDO: check the order.\\nTITLE: x")
    (['Signs. When: subtracting. Do: check the order.'], 1)
    >>> json_items('{"reason": "", "items": [{"title": "Sign", "when": "now", "do": "Check."}]}')
    (['Sign. When: now. Do: Check.'], 0)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, cast

from reflexion.core.lesson_records import Curation, Kind, Recalled, Reflection
from reflexion.core.protocols import Distilling, Trial
from reflexion.core.records import Attempt, Task
from reflexion.strategies.learning import (
    Design,
    Distill,
    Lessons,
    Request,
    both,
    bulleted,
    cannot_learn,
    json_object,
    reason_and,
    sampled,
)

HEADER = "Notes from the most similar earlier task. Use the ones that apply:"
SYSTEM = "You distill lessons from attempts at tasks, for use on other tasks."
# ReasoningBank's single-trajectory extraction prompts, word for word but for "product" (a web
# shop's): no repeats, and no specifics of the task; they ban no code, nor does this
GENERAL = (
    "You must not repeat similar or overlapping notes. Prefer concrete, actionable {procedures} "
    "over abstract principles. Do not embed specific names, queries, or literal string contents "
    "from the task."
)
PROCEDURES = {True: "procedures", False: "recovery procedures"}  # a success's, a failure's
REQUEST = (
    "{why} Write at most 3 notes that would help with OTHER tasks of this kind. " + GENERAL + " "
    "Each note is three lines:\nTITLE: <a few words>\n"
    "WHEN: <when it applies, and when it does not>\n"
    "DO: <what to do, in one to three sentences>\nReply with the notes only."
)
JSON_REQUEST = (
    "{why} Write at most 3 notes that would help with OTHER tasks of this kind. " + GENERAL + " "
    'Reply with a JSON object: "reason", one or two sentences on why {which} passed or '
    'failed, then "items", at most 3 notes, each {{"title": "<a few words>", "when": "<when it '
    'applies, and when it does not>", "do": "<what to do, in one to three sentences>"}}.'
)
WORKED = "The attempt above passed the check. Consider why it worked."
TRIES = "The {n} attempts above are tries at this same task"
CONTRAST = {  # ReasoningBank's parallel scaling: one curator call over a task's trajectories
    "some": TRIES + ", and {k} of them passed the check. Compare and contrast them: what "
    "made an attempt pass, what made one fail, and what would prevent such failures later.",
    "none": TRIES + ", and none of them passed the check. Compare them: what they got wrong, "
    "and what would prevent such failures on later tasks.",
    "all": TRIES + ", and all of them passed the check. Compare them: what they share that "
    "made them work.",
}
FAILED = (
    "The attempt above failed the check. Consider why, and what would prevent such a failure "
    "on later tasks."
)  # as ReasoningBank's two prompts: a success's strategy, or a failure's lesson
FIELD = re.compile(r"^\W*(TITLE|WHEN|DO)\s*:\s*(.+)$", re.IGNORECASE)
MAX_ITEMS = 3  # ReasoningBank's prompts: "at most 3 memory items"
TEMPERATURE = 1.0  # ReasoningBank samples its extraction at 1.0 (induce_memory.py)
DO_CHARS = 400
DISTINCT = 0.9  # an item at least this similar to a kept one is a near-copy, not stored
POOL = 20  # items asked of the memory, from which the nearest task's are kept
ITEM = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 3, "maxLength": 80},
        "when": {"type": "string", "minLength": 3, "maxLength": 200},
        "do": {"type": "string", "minLength": 3, "maxLength": DO_CHARS},
    },
    "required": ["title", "when", "do"],
    "additionalProperties": False,
}
SCHEMA = reason_and("items", [ITEM], MAX_ITEMS)


def schema(board: Sequence[Reflection]) -> dict[str, Any]:
    return SCHEMA


def asking(words: str) -> Request:
    def request(
        task: Task, shown: str, attempts: Sequence[Attempt], board: Sequence[Reflection]
    ) -> str:
        worked = bool(attempts) and attempts[-1].score.solved
        why, which = (WORKED if worked else FAILED), "the attempt"
        if len(attempts) > 1:
            n, k = len(attempts), sum(a.score.solved for a in attempts)
            case = "none" if k == 0 else "all" if k == n else "some"
            why, which = CONTRAST[case].format(n=n, k=k), "the attempts"
        asked = words.format(why=why, which=which, procedures=PROCEDURES[worked])
        return f"Task:\n{task.prompt}\n\n{shown}\n\n{asked}"

    return request


def item_text(title: str, when: str, do: str) -> str:
    return f"{title or 'Note'}. When: {when or 'always'}. Do: {do}."


def json_items(reply: str) -> tuple[list[str], int]:
    """`parse_items` of a JSON reply: the items as stored texts, and how many were malformed
    (no JSON object of items counts as one)."""
    data = json_object(reply)
    items = data.get("items") if data is not None else None
    if not isinstance(items, list):
        return [], 1
    good = [
        {k: " ".join(str(i.get(k) or "").split()).rstrip(".") for k in ("title", "when", "do")}
        for i in items
        if isinstance(i, dict)
    ]
    good = [i for i in good if i["do"] and len(i["do"]) <= DO_CHARS]
    texts = [item_text(i["title"], i["when"], i["do"]) for i in good[:MAX_ITEMS]]
    return texts, len(items) - len(good)


def parse_items(reply: str) -> tuple[list[str], int]:
    """The items of a reply as stored texts, and how many item starts were malformed (no DO,
    or a DO too long to be a note)."""
    items: list[dict[str, str]] = []
    for line in reply.splitlines():
        found = FIELD.match(line.strip())
        if not found:
            continue
        name, value = found[1].upper(), found[2].strip().rstrip(".")
        if name == "TITLE" or not items:
            items.append({})
        items[-1].setdefault(name, value)
    good = [i for i in items if "DO" in i and len(i["DO"]) <= DO_CHARS]
    texts = [item_text(i.get("TITLE", ""), i.get("WHEN", ""), i["DO"]) for i in good[:MAX_ITEMS]]
    return texts, len(items) - len(good)


def nearest_task(hits: list[Recalled]) -> list[Recalled]:
    """The hits from the task of the most similar one, in the memory's order: a task's items
    share its question as their key, so they are equally similar to the asking question. A
    memory that does not rank by similarity (`--memory-backend window`) gives the newest task's.

    >>> from reflexion.core.lesson_records import Reflection
    >>> def hit(i, task, sim):
    ...     return Recalled(Reflection(i, "x", "run", "bank", "e", task, 0, 1, 0.0, 1.0), sim)
    >>> [h.reflection.id for h in nearest_task([hit("a", "t1", 0.5), hit("b", "t2", 0.8),
    ...                                         hit("c", "t1", 0.5), hit("d", "t2", 0.8)])]
    ['b', 'd']
    >>> [h.reflection.id for h in nearest_task([hit("a", "t1", None), hit("b", "t2", None)])]
    ['b']
    """
    if not hits:
        return []
    if any(h.similarity is None for h in hits):  # a window: the newest, the last on a tie
        best = max(enumerate(hits), key=lambda p: (p[1].reflection.created, p[0]))[1]
    else:
        best = max(hits, key=lambda h: cast("float", h.similarity))
    return [h for h in hits if h.reflection.task_id == best.reflection.task_id]


async def shown(trial: Trial, episode: int) -> list[Recalled]:
    return await trial.recall(episode, Kind.ITEM, POOL, nearest_task)


async def learn(trial: Trial, attempts: list[Attempt], episode: int) -> None:
    """Items from the task's final attempt, kept with it."""
    await write_items(trial, attempts[-1:], attempts[-1], episode)


async def contrast(trial: Trial, attempts: list[Attempt], episode: int) -> None:
    """Items from all the task's attempts compared (`bank-scaled`), kept with the first that
    passed, or the last (the trace's `remember` step carries that attempt's episode; the
    curator's `distill` step, the last one's)."""
    kept_with = next((a for a in attempts if a.score.solved), attempts[-1])
    await write_items(trial, attempts, kept_with, episode)


async def write_items(
    trial: Trial, attempts: list[Attempt], kept_with: Attempt, episode: int
) -> None:
    """One curator call about `attempts`; its items are kept with `kept_with`."""
    if not isinstance(trial.actor, Distilling) or cannot_learn(trial, Kind.ITEM, episode, False):
        return
    call = await trial.ask(trial.actor.distill(trial.task, Kind.ITEM, attempts, []), episode)
    read = json_items if trial.actor.curation == Curation.JSON else parse_items
    texts, bad = read(call.output)
    if bad or not texts:
        trial.note(episode, "unparsed", call.output, {"kind": Kind.ITEM, "malformed": bad})
    for text in texts:
        await trial.keep(Kind.ITEM, text, kept_with, key=trial.task.lookup, distinct=DISTINCT)


ITEMS = Lessons(
    Kind.ITEM,
    HEADER,
    place="before_task",
    body=bulleted,
    distill=Distill(SYSTEM, asking(JSON_REQUEST), schema, asking(REQUEST), temperature=TEMPERATURE),
)
DESIGN = Design(ITEMS, shown, learn)
run, with_reflexion = both(DESIGN)
SCALED = Design(ITEMS, shown, contrast)


async def scaled(trial: Trial) -> None:
    await sampled(SCALED, trial, run_all=True)
