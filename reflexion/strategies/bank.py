"""`bank` (ReasoningBank, Ouyang et al. 2025): after every task, success or failure, the model
distills at most two items (a title, when it applies, what to do) from its final attempt and
the visible verdict; a new task recalls the k most similar items by embedding.

    >>> parse_items("TITLE: Signs\\nWHEN: subtracting\\nDO: check the order.\\nTITLE: x")
    (['Signs. When: subtracting. Do: check the order.'], 1)
"""

from __future__ import annotations

import re

from reflexion.core.protocols import Distilling, Trial
from reflexion.core.records import ITEM, Attempt, Recalled
from reflexion.strategies.experience import Design, both

FIELD = re.compile(r"^\W*(TITLE|WHEN|DO)\s*:\s*(.+)$", re.IGNORECASE)
MAX_ITEMS = 2
DO_CHARS = 400


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
    return await trial.recall(episode, ITEM)


async def learn(trial: Trial, attempts: list[Attempt], episode: int) -> None:
    if not isinstance(trial.actor, Distilling):
        return
    last = attempts[-1]
    call = await trial.ask(trial.actor.distill(trial.task, ITEM, [last], []), episode)
    texts, bad = parse_items(call.output)
    if bad or not texts:
        trial.note(episode, "unparsed", call.output, {"kind": ITEM, "malformed": bad})
    for text in texts:
        await trial.keep(ITEM, text, last)


DESIGN = Design(ITEM, shown, learn)
run, with_reflexion = both(DESIGN)
