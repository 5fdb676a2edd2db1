"""`cheatsheet` (Dynamic Cheatsheet, Suzgun et al. 2025, its cumulative form): one text that the
model rewrites after each task, from the task, its answer and the visible verdict; the current
sheet goes into every prompt (the system message, so the prefix cache keeps it). Every version
is kept in the sheet's history. The board is one sheet: this run's, or where it has none yet,
the newest one it inherits (a shared or frozen store).

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
from collections.abc import Sequence

from reflexion.core.protocols import Distilling, Trial
from reflexion.core.records import Attempt, BoardEdit, Kind, Recalled, Reflection, Task
from reflexion.strategies.learning import Board, Design, Distill, Lessons, both

HEADER = (
    "Your cheatsheet, written while solving earlier tasks. If it holds a method or a program "
    "for this kind of task, use it:"
)
SYSTEM = (
    "You curate a cheatsheet: the methods, pitfalls and reusable code that help solve tasks of "
    "one kind, read before every new task."
)
REQUEST = (
    "Rewrite the whole cheatsheet. Keep what is useful, correct what this result shows to be "
    "wrong, and add what this task teaches: a general method, a pitfall, or a reusable program "
    "for tasks of this kind. At most {words} words. Reply with the new cheatsheet between "
    "<sheet> and </sheet>."
)
WORDS = 300  # the length the request asks for
SHEET = re.compile(r"<sheet>(.*?)</sheet>", re.DOTALL | re.IGNORECASE)
KEEP = 0.5  # a rewrite must keep at least this share of a long sheet's length
LONG = 200


def the_sheet(texts: Sequence[str]) -> str:
    return texts[0]


def request(
    task: Task, shown: str, attempts: Sequence[Attempt], board: Sequence[Reflection]
) -> str:
    sheet = board[0].text if board else "(empty)"
    text = f"Current cheatsheet:\n{sheet}\n\nTask just done:\n{task.prompt}\n\n{shown}\n\n"
    return text + REQUEST.format(words=WORDS)


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
    return [Recalled(r) for r in await trial.board(Kind.CHEATSHEET, episode)]


async def learn(trial: Trial, attempts: list[Attempt], episode: int) -> None:
    if not isinstance(trial.actor, Distilling):
        return
    board = await trial.board(Kind.CHEATSHEET, episode)
    call = await trial.ask(
        trial.actor.distill(trial.task, Kind.CHEATSHEET, attempts[-1:], board), episode
    )
    text, refused = new_sheet(call.output, board[0].text if board else "")
    if refused:
        trial.note(episode, "unparsed", refused, {"kind": Kind.CHEATSHEET})
        return
    await trial.revise(Kind.CHEATSHEET, [BoardEdit("replace", None, text)], episode)


SHEETS = Lessons(
    Kind.CHEATSHEET,
    HEADER,
    place="system",
    body=the_sheet,
    distill=Distill(SYSTEM, request),
    board=Board(one=True),
)
DESIGN = Design(SHEETS, shown, learn)
run, with_reflexion = both(DESIGN)
