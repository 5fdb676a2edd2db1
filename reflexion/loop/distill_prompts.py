"""The `distill` role's prompts: turning a task's attempts into experience for OTHER tasks.

One prompt per kind of lesson, each asking for a reply in a fixed, line-based form that a small
model can keep (the strategies parse it; a reply that does not parse changes nothing). Every
prompt sees VISIBLE information only: the task, the attempts and what their check showed.

    >>> from reflexion.core.records import Attempt, Score, Task
    >>> failed = Attempt(1, "x = 1", Score(0.0, False, "expected 2"))
    >>> msgs = distill_messages(Task("t", "Set x to 2."), "rule", [failed], [])
    >>> "ADD:" in msgs[-1].content and "(none yet)" in msgs[-1].content
    True
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from reflexion.core.records import CHEATSHEET, ITEM, RULE, Attempt, Reflection, Task

ANSWER_CHARS = 1500  # an attempt as a distill prompt shows it (its start and end): what it did
SHEET_WORDS = 300

RULES_SYSTEM = "You keep a short list of general rules that help solve tasks of one kind."
RULES_REQUEST = (
    "Compare the attempts above. Change the rules so that an attempt at a DIFFERENT task of "
    "this kind avoids what went wrong (or repeats what worked). Reply with at most 3 lines, "
    "each one of these forms:\n"
    "ADD: <a new general rule, in one sentence>\n"
    "EDIT <n>: <a better wording of rule n>\n"
    "UPVOTE <n>\n"
    "DOWNVOTE <n>\n"
    "A rule must be general: no names or numbers from this task. Reply with the lines only."
)
SHEET_SYSTEM = (
    "You curate a cheatsheet: the methods, pitfalls and reusable code that help solve tasks of "
    "one kind, read before every new task."
)
SHEET_REQUEST = (
    "Rewrite the whole cheatsheet. Keep what is useful, correct what this result shows to be "
    "wrong, and add what this task teaches: a general method, a pitfall, or a reusable program "
    "for tasks of this kind. At most {words} words. Reply with the new cheatsheet between "
    "<sheet> and </sheet>."
)
ITEMS_SYSTEM = "You distill lessons from attempts at tasks, for use on other tasks."
ITEMS_REQUEST = (
    "{why} Write at most 2 notes that would help with OTHER tasks of this kind. Each note is "
    "three lines:\nTITLE: <a few words>\nWHEN: <when it applies>\n"
    "DO: <what to do, in one or two sentences>\nReply with the notes only."
)


def distill_messages(
    task: Task, kind: str, attempts: Sequence[Attempt], board: Sequence[Reflection]
) -> list[BaseMessage]:
    """The distill prompt for `kind` (rule, cheatsheet or item)."""
    shown = "\n\n".join(_attempt(a, n) for n, a in enumerate(attempts, 1))
    if kind == RULE:
        rules = "\n".join(f"{n}. {r.text}" for n, r in enumerate(board, 1)) or "(none yet)"
        text = f"Current rules:\n{rules}\n\nTask:\n{task.prompt}\n\n{shown}\n\n{RULES_REQUEST}"
        return [SystemMessage(RULES_SYSTEM), HumanMessage(text)]
    if kind == CHEATSHEET:
        sheet = board[0].text if board else "(empty)"
        request = SHEET_REQUEST.format(words=SHEET_WORDS)
        text = f"Current cheatsheet:\n{sheet}\n\nTask just done:\n{task.prompt}\n\n{shown}\n\n"
        return [SystemMessage(SHEET_SYSTEM), HumanMessage(text + request)]
    if kind == ITEM:
        worked = bool(attempts) and attempts[-1].score.solved
        why = "Say why the answer worked." if worked else "Say what went wrong, and what to do."
        text = f"Task:\n{task.prompt}\n\n{shown}\n\n{ITEMS_REQUEST.format(why=why)}"
        return [SystemMessage(ITEMS_SYSTEM), HumanMessage(text)]
    msg = f"no distill prompt for lessons of kind {kind!r}"
    raise ValueError(msg)


def _attempt(attempt: Attempt, n: int) -> str:
    verdict = "passed the check" if attempt.score.solved else "failed the check"
    said = f": {attempt.score.feedback}" if attempt.score.feedback else ""
    return f"Attempt {n} ({verdict}{said}):\n{ends(attempt.candidate, ANSWER_CHARS)}"


def ends(text: str, chars: int) -> str:
    """`text`, or, when it is longer than `chars`, its start and its end: how a long game play
    began, and how it ended.

    >>> ends("abcdefghij", 6)
    'ab\\n[...]\\nghij'
    """
    if len(text) <= chars:
        return text
    head = chars // 3
    return f"{text[:head]}\n[...]\n{text[head - chars :]}"
