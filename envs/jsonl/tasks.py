"""Read and validate a JSONL task file; every problem is reported as `PATH:LINE: what is wrong`.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "t.jsonl"
>>> row = '{"id": "q1", "question": "2 + 2?", "answer": "4"}\\n'
>>> _ = path.write_text(row + row)
>>> load_tasks(path)  # doctest: +ELLIPSIS
Traceback (most recent call last):
reflexion.core.errors.UsageError: .../t.jsonl:2: duplicate id 'q1' (first on line 1)
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reflexion.core.errors import UsageError

CODE_FIELDS = {"id", "prompt", "entry_point", "visible_tests", "hidden_tests", "meta"}
QA_FIELDS = {"id", "question", "context", "answer", "meta"}


@dataclass(frozen=True)
class CodeTask:
    id: str
    prompt: str
    entry_point: str
    visible_tests: tuple[str, ...]
    hidden_tests: tuple[str, ...]


@dataclass(frozen=True)
class QaTask:
    id: str
    question: str
    context: str | None
    answers: tuple[str, ...]  # any of them counts as right


class _Bad(Exception):
    """What is wrong with one line; `load_tasks` adds the file and line number."""


def load_tasks(path: Path) -> list[CodeTask | QaTask]:
    """The tasks in `path`, in file order. Raises UsageError on the first bad line."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        msg = f"{path}: cannot read the task file ({exc.strerror or exc})"
        raise UsageError(msg) from exc
    tasks: list[CodeTask | QaTask] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            task = _parse_line(raw)
            if task.id in first_line:
                msg = f"duplicate id {task.id!r} (first on line {first_line[task.id]})"
                raise _Bad(msg)
        except _Bad as exc:
            msg = f"{path}:{number}: {exc}"
            raise UsageError(msg) from None
        first_line[task.id] = number
        tasks.append(task)
    if not tasks:
        msg = f"{path}: no tasks in the file (one JSON object per line)"
        raise UsageError(msg)
    return tasks


def _parse_line(raw: bytes) -> CodeTask | QaTask:
    try:
        row = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        msg = f"not UTF-8 text (byte {exc.start})"
        raise _Bad(msg) from None
    except json.JSONDecodeError as exc:
        msg = f"not valid JSON: {exc.msg} (column {exc.colno})"
        raise _Bad(msg) from None
    except RecursionError:
        msg = "not valid JSON: nested too deeply"
        raise _Bad(msg) from None
    if not isinstance(row, dict):
        msg = f"expected a JSON object, got {_json_type(row)}"
        raise _Bad(msg)
    if ("prompt" in row) == ("question" in row):
        msg = 'a task needs either "prompt" (a code task) or "question" (a question-answer task)'
        raise _Bad(msg)
    return _code_task(row) if "prompt" in row else _qa_task(row)


def _code_task(row: dict[str, Any]) -> CodeTask:
    _known_fields(row, CODE_FIELDS, "code task")
    entry_point = _text(row, "entry_point")
    if not entry_point.isidentifier():
        msg = f'"entry_point" must be a Python name, got {entry_point!r}'
        raise _Bad(msg)
    hidden = _tests(row, "hidden_tests")
    if not hidden:
        msg = '"hidden_tests" is empty: a code task needs tests that decide its result'
        raise _Bad(msg)
    visible = _tests(row, "visible_tests") if "visible_tests" in row else ()
    return CodeTask(_id(row), _text(row, "prompt"), entry_point, visible, hidden)


def _qa_task(row: dict[str, Any]) -> QaTask:
    _known_fields(row, QA_FIELDS, "question-answer task")
    context = _text(row, "context") if row.get("context") is not None else None
    answer = _required(row, "answer")
    answers = [answer] if isinstance(answer, str) else answer
    if not isinstance(answers, list) or not answers:
        msg = f'"answer" must be a string or a non-empty list of strings, got {_json_type(answer)}'
        raise _Bad(msg)
    if not all(isinstance(a, str) and a.strip() for a in answers):
        msg = '"answer" must hold only non-empty strings'
        raise _Bad(msg)
    return QaTask(_id(row), _text(row, "question"), context, tuple(answers))


def _known_fields(row: dict[str, Any], known: set[str], kind: str) -> None:
    unknown = sorted(set(row) - known)
    if unknown:
        msg = f"unknown field {unknown[0]!r} for a {kind} (known: {', '.join(sorted(known))})"
        raise _Bad(msg)


def _required(row: dict[str, Any], field: str) -> Any:
    if field not in row:
        msg = f'missing field "{field}"'
        raise _Bad(msg)
    return row[field]


def _text(row: dict[str, Any], field: str) -> str:
    value = _required(row, field)
    if not isinstance(value, str) or not value.strip():
        msg = f'"{field}" must be a non-empty string, got {_json_type(value)}'
        raise _Bad(msg)
    return value


def _id(row: dict[str, Any]) -> str:
    value = _required(row, "id")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        msg = f'"id" must be a non-empty string or an integer, got {_json_type(value)}'
        raise _Bad(msg)
    return value


def _tests(row: dict[str, Any], field: str) -> tuple[str, ...]:
    """A list of code snippets, or one string of code; each must parse as Python."""
    value = _required(row, field)
    tests = [value] if isinstance(value, str) else value
    if not isinstance(tests, list) or not all(isinstance(t, str) and t.strip() for t in tests):
        msg = f'"{field}" must be a list of non-empty strings of Python code, or one string'
        raise _Bad(msg)
    for index, test in enumerate(tests):
        try:
            ast.parse(test)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            detail = exc.msg if isinstance(exc, SyntaxError) else type(exc).__name__
            msg = f'"{field}"[{index}] is not valid Python: {detail}'
            raise _Bad(msg) from None
    return tuple(tests)


def _json_type(value: object) -> str:
    """What a user finds in the field, in JSON's words ("an empty string", not "a string", when
    emptiness is the fault)."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if isinstance(value, str) and not value.strip():
        return "a blank string" if value else "an empty string"
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)
