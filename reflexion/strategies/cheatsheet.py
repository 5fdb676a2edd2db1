"""`cheatsheet` (Dynamic Cheatsheet, Suzgun et al. 2025, its cumulative form): one sheet, kept
across tasks and read before every answer (in the system message, so the prefix cache keeps it;
where tasks share a long context, in the user message after that context), under a line on how
to use it in the words of DC's generator prompt: look through it for a strategy, example or
program that applies, and use it. Every version is kept in the sheet's history. The board is one
sheet: this run's, or where it has none yet, the newest one it inherits (a shared or frozen
store).

After each task the model updates the sheet from the task, its answer and the visible verdict:
- `--curation json` (the default), as ACE (Zhang et al. 2025) curates: the sheet is numbered
  bullets, and the reply is a JSON object held to a schema, a short reason and then at most 3
  delta operations (add a bullet, edit bullet n, remove bullet n), so the sheet is never
  rewritten whole and cannot collapse;
- `--curation text`, free text: the whole sheet rewritten between <sheet> and </sheet>;
  refused, and the sheet kept, when the reply holds no closed tag, is empty, or keeps less than
  half of a sheet longer than 200 characters (ACE calls that context collapse).

The sheet never grows past what a prompt shows of it (--memory-tokens, in characters): the
curator is told its room and what it holds, and an add or edit that would pass the room is
skipped and said (a rewrite refused), so nothing the curator writes is cut from the prompt
unseen. New bullets go at the end, so a sheet cut to fit would lose the newest first.

    >>> updated("[1] Try (a-b)*c.", '{"reason": "", "operations": [{"op": "add", '
    ...     '"text": "Write a solver."}]}')
    ('[1] Try (a-b)*c.\\n[2] Write a solver.', [])
    >>> updated("[1] a", '{"operations": [{"op": "add", "text": "   "}]}')[1]
    ["skipped add, no text: {'op': 'add', 'text': '   '}"]
    >>> new_sheet("no tags", "old")
    ('', 'no <sheet>...</sheet> in the reply')
"""

from __future__ import annotations

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
from reflexion.core.records import Attempt, Task
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

HEADER = (
    "Your cheatsheet, written while solving earlier tasks of this kind. Before you answer, look "
    "through it for a strategy, pattern, example or program that applies to this task, and use "
    "it where it fits:"
)
SYSTEM = (
    "You curate a cheatsheet: the methods, pitfalls and reusable code that help solve tasks of "
    "one kind, read before every new task."
)
GOAL = (
    "Update the cheatsheet with what this task teaches: a general method, a pitfall, or a "
    "reusable program for tasks of this kind. Keep what is useful; change only what this result "
    "shows to be wrong."
)
JSON_REQUEST = GOAL + (
    ' Reply with a JSON object: "reason", one or two sentences on what the result shows, then '
    '"operations", at most 3 of these:\n'
    '{"op": "add", "text": "<a new bullet>"}\n'
    '{"op": "edit", "bullet": <n>, "text": "<a better bullet n>"}\n'
    '{"op": "remove", "bullet": <n>}'
)
REQUEST = (
    "Rewrite the whole cheatsheet. Keep what is useful, correct what this result shows to be "
    "wrong, and add what this task teaches: a general method, a pitfall, or a reusable program "
    "for tasks of this kind. At most {words} words. Reply with the new cheatsheet between "
    "<sheet> and </sheet>."
)
WORDS = 300  # the length the free-text request asks for
SHEET = re.compile(r"<sheet>(.*?)</sheet>", re.DOTALL | re.IGNORECASE)
KEEP = 0.5  # a rewrite must keep at least this share of a long sheet's length
LONG = 200
BOARD = Board(one=True)  # one text: this run's sheet, or the newest inherited one
MAX_OPS = 3  # delta operations per reply, as ExpeL's and ACE's curators make a few at a time
MAX_BULLETS = 20  # an add beyond is skipped: the sheet must stay small enough for every prompt
BULLET_CHARS = 800  # room for a short program
NO_OPERATIONS = "no JSON object of operations in the reply"  # unparsed, not skipped
ROOM = (
    "Every prompt shows at most {room} characters of the cheatsheet, and it holds {used} now. "
    "A change that would make it longer is not made: to add when it is full, shorten or remove "
    "bullets."
)
BULLET = re.compile(r"^\[(\d+)\] ", re.MULTILINE)


def schema(board: Sequence[Reflection]) -> dict[str, Any]:
    """The reply's schema for this sheet: an add while it has room, and edits and removals only
    of its bullets, so every operation the grammar lets through can be applied."""
    n = len(bullets(board[0].text)) if board else 0
    ops = [operation("add", "bullet", 0, BULLET_CHARS)] if n < MAX_BULLETS else []
    if n:
        ops += [operation("edit", "bullet", n, BULLET_CHARS), operation("remove", "bullet", n, 0)]
    return reason_and("operations", ops, MAX_OPS)


def the_sheet(texts: Sequence[str]) -> str:
    return texts[0]


def asking(words: str) -> Request:
    def request(
        task: Task, shown: str, attempts: Sequence[Attempt], board: Sequence[Reflection]
    ) -> str:
        sheet = board[0].text if board else "(empty)"
        text = f"Current cheatsheet:\n{sheet}\n\nTask just done:\n{task.prompt}\n\n{shown}\n\n"
        return text + words

    return request


def bullets(sheet: str) -> list[str]:
    """A sheet's bullets ("[n] text" blocks); a sheet written whole (--curation text) is one.

    >>> bullets("[1] a\\n[2] b\\nc"), bullets("free text"), bullets("")
    (['a', 'b\\nc'], ['free text'], [])
    """
    if not sheet.strip():
        return []
    parts = BULLET.split(sheet)
    if len(parts) == 1:
        return [sheet.strip()]
    return [text.strip() for text in parts[2::2]]


def rendered(texts: Sequence[str]) -> str:
    return "\n".join(f"[{n}] {t}" for n, t in enumerate(texts, 1))


def room_line(board: Sequence[Reflection], room: int) -> str:
    """What the curator is told of the sheet's room (`room` characters: what a prompt shows).

    >>> room_line([], 3200)[:60]
    'Every prompt shows at most 3200 characters of the cheatsheet'
    """
    return ROOM.format(room=room, used=len(board[0].text) if board else 0)


def updated(sheet: str, reply: str, room: int | None = None) -> tuple[str, list[str]]:
    """The sheet after a JSON reply's delta operations, and one line for each operation skipped.

    Bullets are named by the numbers the model saw: a removed bullet keeps its number until the
    whole reply is applied, and a later edit or removal of a bullet replaces an earlier edit of
    it (which is then skipped, and said). No operation may leave a copy of a bullet on the
    sheet: edits and removals are applied first (`_apply`), then an edit whose text another
    bullet holds is undone (`_undo_copies`), then the adds go at the end, each skipped if the
    sheet already holds its text (`_append_adds`). A reply that would leave no bullet leaves the
    sheet as it was, and says so. With a `room` (characters: what a prompt shows of the sheet),
    the edits that lengthen a bullet are undone while the sheet is longer than that
    (`_undo_growth`), and an add that would make it so is skipped.

    >>> sheet, [why] = updated("[1] a", '{"operations": [{"op": "add", "text": "bcd"}]}', room=10)
    >>> sheet, why.split(":")[0]
    ('[1] a', 'skipped add, the sheet would pass the 10 characters a prompt shows')
    """
    data = json_object(reply)
    ops = data.get("operations") if data is not None else None
    if not isinstance(ops, list):
        return sheet, [NO_OPERATIONS]
    texts: list[str | None] = list(bullets(sheet))
    before = list(texts)
    adds, edits, skipped = _apply(ops[:MAX_OPS], texts)
    skipped += [
        f"skipped, beyond the {MAX_OPS} operations of a reply: {op}"[:200] for op in ops[MAX_OPS:]
    ]
    skipped += _undo_copies(texts, before, edits)
    if room is not None:
        skipped += _undo_growth(texts, before, edits, room)
    kept = [t for t in texts if t is not None]
    skipped += _append_adds(kept, adds, room)
    if not kept and sheet.strip():  # a sheet is never emptied: it stays, and the trace says so
        return sheet, [*skipped, "skipped the reply's edits: they would leave the sheet empty"]
    return rendered(kept), skipped


def _apply(
    ops: list[object], texts: list[str | None]
) -> tuple[list[tuple[str, object]], dict[int, object], list[str]]:
    """Apply the edits and removals to `texts` (None for a removed bullet), and return the adds
    (text, operation), the edits that hold (bullet index -> operation, for a skip line if one is
    undone) and a line for each operation skipped."""
    adds: list[tuple[str, object]] = []
    edits: dict[int, object] = {}
    skipped: list[str] = []
    for op in ops:
        name = op.get("op") if isinstance(op, dict) else None
        n = op.get("bullet") if isinstance(op, dict) else None
        text = _one_bullet(str(op.get("text") or "")) if isinstance(op, dict) else ""
        known = isinstance(n, int) and 0 < n <= len(texts) and texts[n - 1] is not None
        change = known and (name == "remove" or (name == "edit" and bool(text)))
        if name == "add" and text:
            adds.append((text, op))
        elif change and isinstance(n, int):
            if n - 1 in edits:  # an earlier edit of this bullet had no effect: say so
                skipped.append(f"skipped edit, replaced by a later one: {edits.pop(n - 1)}"[:200])
            texts[n - 1] = text if name == "edit" else None
            if name == "edit":
                edits[n - 1] = op
        else:
            seen = isinstance(n, int) and 0 < n <= len(texts)  # on the sheet the model saw
            skipped.append(f"skipped {name}, {_why(name, text, seen)}: {op}"[:200])
    return adds, edits, skipped


def _one_bullet(text: str) -> str:
    """A bullet's text, cut to its length, in which no later line reads back as a bullet of its
    own: a program may hold a line starting "[n] ", which gets a space before it.

    >>> bullets(rendered([_one_bullet("x = 1\\n[2] * 3")]))
    ['x = 1\\n [2] * 3']
    """
    head, newline, rest = text.strip()[:BULLET_CHARS].partition("\n")
    return head + newline + BULLET.sub(lambda found: " " + found.group(0), rest)


def _undo_copies(
    texts: list[str | None], before: list[str | None], edits: dict[int, object]
) -> list[str]:
    """Undo, in `texts`, each edit whose text another bullet holds, and return one line for
    each. Of two bullets edited to one text, the lower-numbered keeps its edit. An undone edit
    brings back the bullet as the model saw it, which may make another edit a copy, so this
    repeats until no edit is a copy (at most once per edit)."""
    undone: list[str] = []
    while True:
        copies = [
            i
            for i in edits
            if texts[i] not in (None, before[i]) and texts[i] in texts[:i] + texts[i + 1 :]
        ]
        if not copies:
            return undone
        i = max(copies)
        texts[i] = before[i]
        undone.append(f"skipped edit, a bullet already there: {edits[i]}"[:200])


def _undo_growth(
    texts: list[str | None], before: list[str | None], edits: dict[int, object], room: int
) -> list[str]:
    """Undo, in `texts`, the edits that lengthened a bullet, the highest-numbered first, while
    the sheet is longer than `room`, and return one line for each."""
    undone: list[str] = []
    longer = [i for i in edits if len(texts[i] or "") > len(before[i] or "")]
    while longer and len(rendered([t for t in texts if t is not None])) > room:
        i = longer.pop()
        texts[i] = before[i]
        undone.append(f"skipped edit, {_over(room)}: {edits[i]}"[:200])
    return undone


def _append_adds(
    kept: list[str], adds: list[tuple[str, object]], room: int | None = None
) -> list[str]:
    """Append the adds to `kept`, in the reply's order, and return one line for each one skipped:
    its text already on the sheet, the sheet full, or (with a `room`) the sheet too long with it."""
    skipped = []
    for text, op in adds:
        if text in kept:
            skipped.append(f"skipped add, a bullet already there: {op}"[:200])
        elif len(kept) >= MAX_BULLETS:
            skipped.append(f"skipped add, the sheet holds {MAX_BULLETS} bullets: {op}"[:200])
        elif room is not None and len(rendered([*kept, text])) > room:
            skipped.append(f"skipped add, {_over(room)}: {op}"[:200])
        else:
            kept.append(text)
    return skipped


def _over(room: int) -> str:
    return f"the sheet would pass the {room} characters a prompt shows"


def _why(name: object, text: str, seen: bool) -> str:
    """Why an operation of a reply was skipped as it was read (`seen`: its bullet number was on
    the sheet the model saw, so a removal earlier in the reply took it)."""
    if name not in ("add", "edit", "remove"):
        return "not an operation"
    if name != "remove" and not text:
        return "no text"
    return "removed earlier in the reply" if seen else "no such bullet"


def new_sheet(reply: str, old: str, room: int | None = None) -> tuple[str, str]:
    """The new sheet from a free-text reply (--curation text), or "" and why it was refused
    (with a `room`: also a sheet longer than what a prompt shows of it)."""
    found = SHEET.findall(reply)
    if not found:
        return "", "no <sheet>...</sheet> in the reply"
    text = found[-1].strip()
    if not text:
        return "", "an empty sheet"
    if len(old) > LONG and len(text) < KEEP * len(old):
        return "", f"the rewrite keeps {len(text)} of {len(old)} characters"
    if room is not None and len(text) > room:
        return "", f"the rewrite holds {len(text)} characters, over the {room} a prompt shows"
    return text, ""


async def shown(trial: Trial, episode: int) -> list[Recalled]:
    return [Recalled(r) for r in await trial.board(Kind.CHEATSHEET, episode, BOARD)]


async def learn(trial: Trial, attempts: list[Attempt], episode: int) -> None:
    if not isinstance(trial.actor, Distilling) or cannot_learn(trial, Kind.CHEATSHEET, episode):
        return
    board = await trial.board(Kind.CHEATSHEET, episode, BOARD)
    call = await trial.ask(
        trial.actor.distill(trial.task, Kind.CHEATSHEET, attempts[-1:], board), episode
    )
    old, room = (board[0].text if board else ""), trial.actor.memory_chars
    skipped: list[str] = []
    if trial.actor.curation == Curation.JSON:
        text, skipped = updated(old, call.output, room)
        refused = skipped.pop() if skipped == [NO_OPERATIONS] else ""
    else:
        text, refused = new_sheet(call.output, old, room)
    if refused:
        trial.note(episode, "unparsed", refused, {"kind": Kind.CHEATSHEET})
    if skipped:  # a reply read, some of its operations not applied
        trial.note(episode, "skipped", "\n".join(skipped), {"kind": Kind.CHEATSHEET})
    if text and text != old:
        edits = [BoardEdit(EditOp.REPLACE, None, text)]
        await trial.revise(Kind.CHEATSHEET, edits, episode, rules=BOARD)


SHEETS = Lessons(
    Kind.CHEATSHEET,
    HEADER,
    place="system",
    body=the_sheet,
    distill=Distill(
        SYSTEM, asking(JSON_REQUEST), schema, asking(REQUEST.format(words=WORDS)), room_line
    ),
    board=BOARD,
)
DESIGN = Design(SHEETS, shown, learn)
run, with_reflexion = both(DESIGN)
