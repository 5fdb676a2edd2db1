"""Memory in a prompt: each kind of lesson under its own header, with one plain sentence on how
to use it (a 1.5B model ignores memory it is not told how to use; see docs), bounded by
--memory-tokens.

Where each kind goes: the boards (rules, the cheatsheet) are the same for every task, so they go
in the system message, where the runtime's prefix cache serves them again; exemplars and items
come before the task; a task's own reflections after it (as Reflexion's prompt has them).

    >>> from reflexion.core.records import Reflection
    >>> rule = Reflection("r1", "Check the sign.", "run", "insights", "e", "t", 0, 1, 0.0, 0.0,
    ...                   kind="rule", votes=2)
    >>> placed = place([rule, "Try a smaller step."], tokens=100)
    >>> placed.system.splitlines()[-1], placed.after_task.splitlines()[-1], placed.tokens
    ('1. Check the sign.', '- Try a smaller step.', 9)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from reflexion.core.records import CHEATSHEET, EXEMPLAR, ITEM, REFLECTION, RULE, Reflection

CHARS_PER_TOKEN = 4  # a count, not a tokenizer: the bound must not need the model
HEADERS = {
    RULE: "Rules learned from earlier tasks. Apply the ones that fit this task:",
    CHEATSHEET: "Your cheatsheet, written while solving earlier tasks. If it holds a method or a "
    "program for this kind of task, use it:",
    EXEMPLAR: "Solved examples of similar tasks. Reuse their approach where it fits:",
    ITEM: "Notes from similar earlier tasks. Use the ones that apply:",
    REFLECTION: "Lessons from your earlier attempts at similar tasks:",
}
Lesson = str | Reflection  # a bare string is a reflection's text


@dataclass
class Placed:
    """Memory text by where it goes, and its size in (counted) tokens."""

    system: str = ""  # after the system prompt
    before_task: str = ""
    after_task: str = ""
    tokens: int = 0
    left_out: int = 0  # lessons over the bound
    by_kind: dict[str, list[str]] = field(default_factory=dict)


def place(lessons: Sequence[Lesson], tokens: int) -> Placed:
    """Group `lessons` by kind, in the order given (most relevant first), keeping as many as
    fit in `tokens`; a first lesson too long for the bound (a cheatsheet) is cut to fit."""
    placed, room = Placed(), tokens * CHARS_PER_TOKEN
    for lesson in lessons:
        kind, text = (REFLECTION, lesson) if isinstance(lesson, str) else (lesson.kind, lesson.text)
        if len(text) > room and not placed.by_kind.get(kind) and room > 0:
            text = text[:room]  # subtle: cut, not dropped, so a long sheet still says something
        if len(text) > room:
            placed.left_out += 1
            continue
        room -= len(text)
        placed.tokens += -(-len(text) // CHARS_PER_TOKEN)
        placed.by_kind.setdefault(kind, []).append(text)
    _render(placed)
    return placed


def _render(placed: Placed) -> None:
    blocks = {kind: _block(kind, texts) for kind, texts in placed.by_kind.items()}
    placed.system = "\n\n".join(blocks[k] for k in (RULE, CHEATSHEET) if k in blocks)
    placed.before_task = "\n\n".join(blocks[k] for k in (EXEMPLAR, ITEM) if k in blocks)
    placed.after_task = blocks.get(REFLECTION, "")


def _block(kind: str, texts: list[str]) -> str:
    if kind == RULE:
        body = "\n".join(f"{n}. {t}" for n, t in enumerate(texts, 1))
    elif kind == CHEATSHEET:
        body = texts[0]
    elif kind == EXEMPLAR:
        body = "\n\n".join(f"Example {n}:\n{t}" for n, t in enumerate(texts, 1))
    else:
        body = "\n".join(f"- {t}" for t in texts)
    return f"{HEADERS.get(kind, HEADERS[ITEM])}\n{body}"
