"""The questions, written by hand, with their gold queries: data in questions.json. A gold
query is held out: the env keeps it, and no prompt, spec or visible feedback shows it.

    >>> first = load_questions()[0]
    >>> first.id, first.difficulty in DIFFICULTIES
    ('sql/001', True)
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

DIFFICULTIES = ("easy", "medium", "hard")
# What a question needs: the schema's conventions (coded values, money in cents, rows kept
# after a delete, the fiscal year, the product-category link table) and the SQL it takes.
NEEDS = (
    "status_codes",
    "cents",
    "soft_delete",
    "fiscal_year",
    "link_table",
    "join",
    "aggregate",
    "date",
    "nulls",
    "subquery",
    "window",
)
FILE = Path(__file__).with_name("questions.json")


@dataclass(frozen=True)
class Question:
    """One question; `ordered` when it asks for an order (then the rows' order counts)."""

    id: str
    question: str
    gold: str
    difficulty: str
    needs: tuple[str, ...]
    ordered: bool


@functools.cache
def load_questions() -> tuple[Question, ...]:
    """Every question in the file's order; a malformed entry is our bug and raises."""
    entries = json.loads(FILE.read_text(encoding="utf-8"))
    questions = tuple(_question(entry) for entry in entries)
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        msg = "questions.json repeats an id"
        raise ValueError(msg)
    return questions


def _question(entry: dict[str, object]) -> Question:
    needs = tuple(str(n) for n in entry["needs"])  # type: ignore[attr-defined]
    question = Question(
        str(entry["id"]),
        str(entry["question"]),
        str(entry["gold"]),
        str(entry["difficulty"]),
        needs,
        bool(entry["ordered"]),
    )
    if question.difficulty not in DIFFICULTIES or not set(needs) <= set(NEEDS):
        msg = f"{question.id}: bad difficulty {question.difficulty!r} or needs {needs}"
        raise ValueError(msg)
    return question
