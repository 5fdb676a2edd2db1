"""`bank` (ReasoningBank, Ouyang et al. 2025): after every task, success or failure, the model
distills at most two items (a title, when it applies, what to do) from its final attempt and
the visible verdict; a new task recalls the k most similar items by embedding, listed before
the task.

    >>> parse_items("TITLE: Signs\\nWHEN: subtracting\\nDO: check the order.\\nTITLE: x")
    (['Signs. When: subtracting. Do: check the order.'], 1)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from reflexion.core.protocols import Distilling, Trial
from reflexion.core.records import Attempt, Kind, Recalled, Reflection, Task
from reflexion.strategies.learning import Design, Distill, Lessons, both, bulleted

HEADER = "Notes from similar earlier tasks. Use the ones that apply:"
SYSTEM = "You distill lessons from attempts at tasks, for use on other tasks."
REQUEST = (
    "{why} Write at most 2 notes that would help with OTHER tasks of this kind. Each note is "
    "three lines:\nTITLE: <a few words>\nWHEN: <when it applies>\n"
    "DO: <what to do, in one or two sentences>\nReply with the notes only."
)
FIELD = re.compile(r"^\W*(TITLE|WHEN|DO)\s*:\s*(.+)$", re.IGNORECASE)
MAX_ITEMS = 2
DO_CHARS = 400


def request(
    task: Task, shown: str, attempts: Sequence[Attempt], board: Sequence[Reflection]
) -> str:
    worked = bool(attempts) and attempts[-1].score.solved
    why = "Say why the answer worked." if worked else "Say what went wrong, and what to do."
    return f"Task:\n{task.prompt}\n\n{shown}\n\n{REQUEST.format(why=why)}"


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
    texts = [
        f"{i.get('TITLE', 'Note')}. When: {i.get('WHEN', 'always')}. Do: {i['DO']}."
        for i in good[:MAX_ITEMS]
    ]
    return texts, len(items) - len(good)


async def shown(trial: Trial, episode: int) -> list[Recalled]:
    return await trial.recall(episode, Kind.ITEM)


async def learn(trial: Trial, attempts: list[Attempt], episode: int) -> None:
    if not isinstance(trial.actor, Distilling):
        return
    last = attempts[-1]
    call = await trial.ask(trial.actor.distill(trial.task, Kind.ITEM, [last], []), episode)
    texts, bad = parse_items(call.output)
    if bad or not texts:
        trial.note(episode, "unparsed", call.output, {"kind": Kind.ITEM, "malformed": bad})
    for text in texts:
        await trial.keep(Kind.ITEM, text, last)


ITEMS = Lessons(
    Kind.ITEM,
    HEADER,
    place="before_task",
    body=bulleted,
    distill=Distill(SYSTEM, request),
)
DESIGN = Design(ITEMS, shown, learn)
run, with_reflexion = both(DESIGN)
