"""`cheatsheet` (Dynamic Cheatsheet, Suzgun et al. 2025, its cumulative form): one text that the
model rewrites after each task, from the task, its answer and the visible verdict; the current
sheet goes into every prompt (the system message, so the prefix cache keeps it). Every version
is kept in the sheet's history.

A rewrite is refused, and the sheet kept, when the reply holds no <sheet>...</sheet>, is empty,
or keeps less than half of a sheet longer than 200 characters (a rewrite that drops most of what
was learned: ACE calls it context collapse).

    >>> new_sheet("<sheet>Try (a-b)*c first.</sheet>", "")
    ('Try (a-b)*c first.', '')
    >>> new_sheet("no tags", "old")
    ('', 'no <sheet>...</sheet> in the reply')
"""

from __future__ import annotations

import re

from reflexion.core.protocols import Distilling, Trial
from reflexion.core.records import CHEATSHEET, Attempt, BoardEdit, Recalled
from reflexion.strategies.experience import Design, both

SHEET = re.compile(r"<sheet>(.*?)</sheet>", re.DOTALL | re.IGNORECASE)
KEEP = 0.5  # a rewrite must keep at least this share of a long sheet's length
LONG = 200


def new_sheet(reply: str, old: str) -> tuple[str, str]:
    """The new sheet from a reply, or "" and why it was refused."""
    found = SHEET.findall(reply)
    if not found:
        return "", "no <sheet>...</sheet> in the reply"
    text = found[-1].strip()
    if not text:
        return "", "an empty sheet"
    if len(old) > LONG and len(text) < KEEP * len(old):
        return "", f"the rewrite keeps {len(text)} of {len(old)} characters"
    return text, ""


async def shown(trial: Trial, episode: int) -> list[Recalled]:
    return [Recalled(r) for r in await trial.board(CHEATSHEET, episode)]


async def learn(trial: Trial, attempts: list[Attempt], episode: int) -> None:
    if not isinstance(trial.actor, Distilling):
        return
    board = await trial.board(CHEATSHEET, episode)
    call = await trial.ask(
        trial.actor.distill(trial.task, CHEATSHEET, attempts[-1:], board), episode
    )
    text, refused = new_sheet(call.output, board[0].text if board else "")
    if refused:
        trial.note(episode, "unparsed", refused, {"kind": CHEATSHEET})
        return
    await trial.revise(CHEATSHEET, [BoardEdit("replace", None, text)], episode)


DESIGN = Design(CHEATSHEET, shown, learn)
run, with_reflexion = both(DESIGN)
