"""Memory in a prompt: each kind of lesson in its own block, under its design's header (one
plain sentence on how to use it: a 1.5B model ignores memory it is not told how to use; see
docs), at its design's place, bounded by --memory-tokens.

The designs' modules say where their lessons go (reflexion.strategies.LESSONS): the boards
(rules, the cheatsheet) are the same for every task, so they go in the system message, where
the runtime's prefix cache serves them again; exemplars and items come before the task; a
task's own reflections after it (as Reflexion's prompt has them). Blocks that share a place
come in the order of `Kind`. Each kind has its own share of the bound (`shares`): a long sheet
cannot crowd out the task's own reflection beside it (`reflexion+cheatsheet`).

    >>> from reflexion.core.lesson_records import Reflection
    >>> rule = Reflection("r1", "Check the sign.", "run", "insights", "e", "t", 0, 1, 0.0, 0.0,
    ...                   kind="rule", votes=2)
    >>> placed = place([rule, "Try a smaller step."], tokens=100)
    >>> placed.system.splitlines()[-1], placed.after_task.splitlines()[-1], placed.tokens
    ('1. Check the sign.', '- Try a smaller step.', 9)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from reflexion.core.lesson_records import Kind, Reflection
from reflexion.strategies import LESSONS

CHARS_PER_TOKEN = 4  # a count, not a tokenizer: the bound must not need the model
Lesson = str | Reflection  # a bare string is a reflection's text


@dataclass
class Placed:
    """Memory text by where it goes, and its size in (counted) tokens."""

    system: str = ""  # after the system prompt
    before_task: str = ""
    after_task: str = ""
    tokens: int = 0
    left_out: list[str] = field(default_factory=list)  # the ids of stored lessons over the bound
    by_kind: dict[str, list[str]] = field(default_factory=dict)


def place(lessons: Sequence[Lesson], tokens: int) -> Placed:
    """Group `lessons` by kind, in the order given (most relevant first), keeping as many of
    each kind as fit in its share of `tokens` (`shares`); a kind's first lesson too long for its
    share (a cheatsheet) is cut to fit.

    >>> sheet = Reflection("s", "x" * 400, "run", "cheatsheet", "e", "t", 0, 1, 0.0, 0.0,
    ...                    kind="cheatsheet")
    >>> placed = place([sheet, "Try a smaller step."], tokens=50)
    >>> len(placed.by_kind["cheatsheet"][0]), placed.by_kind["reflection"]
    (181, ['Try a smaller step.'])
    """
    texts = [_kind_and_text(lesson) for lesson in lessons]
    demands: dict[str, int] = {}
    for kind, text in texts:
        demands[kind] = demands.get(kind, 0) + len(text)
    placed, room = Placed(), shares(demands, tokens * CHARS_PER_TOKEN)
    for lesson, (kind, text) in zip(lessons, texts, strict=True):
        left = room[kind]
        if len(text) > left and not placed.by_kind.get(kind) and left > 0:
            text = text[:left]  # subtle: cut, not dropped, so a long sheet still says something
        if len(text) > left:  # not shown, so not credited (see Call.left_out)
            placed.left_out += [] if isinstance(lesson, str) else [lesson.id]
            continue
        room[kind] -= len(text)
        placed.tokens += -(-len(text) // CHARS_PER_TOKEN)
        placed.by_kind.setdefault(kind, []).append(text)
    _render(placed)
    return placed


def shares(demands: dict[str, int], room: int) -> dict[str, int]:
    """Each kind's share of `room` (characters), given how much its lessons would take: an equal
    share each, and what a kind needs less of goes to the others (max-min fairness). One kind
    alone gets all the room.

    >>> shares({"cheatsheet": 9000, "reflection": 300}, 3200)
    {'cheatsheet': 2900, 'reflection': 300}
    >>> shares({"rule": 5000, "exemplar": 5000}, 3200)
    {'rule': 1600, 'exemplar': 1600}
    """
    given, left = dict.fromkeys(demands, 0), room
    waiting = sorted(demands, key=lambda kind: demands[kind])  # the smallest needs first
    while waiting:
        fair = left // len(waiting)
        if demands[waiting[0]] > fair:  # every kind left needs more: an equal share each
            given |= dict.fromkeys(waiting, fair)
            break
        kind = waiting.pop(0)
        given[kind], left = demands[kind], left - demands[kind]
    return given


def _kind_and_text(lesson: Lesson) -> tuple[str, str]:
    return (Kind.REFLECTION, lesson) if isinstance(lesson, str) else (lesson.kind, lesson.text)


def _render(placed: Placed) -> None:
    """Each kind's block at its place; a kind no design defines (a store written by another
    version) is counted, not shown."""
    blocks: dict[str, list[str]] = {}
    for kind in Kind:
        texts, lessons = placed.by_kind.get(kind), LESSONS[kind]
        if texts:
            blocks.setdefault(lessons.place, []).append(f"{lessons.header}\n{lessons.body(texts)}")
    placed.system = "\n\n".join(blocks.get("system", []))
    placed.before_task = "\n\n".join(blocks.get("before_task", []))
    placed.after_task = "\n\n".join(blocks.get("after_task", []))
