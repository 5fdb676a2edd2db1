"""A window's lessons (the `reflexion-window` store, window.jsonl) through the `reflexion memory`
commands, on a real quadratic run that holds a Chroma store beside it: `audit` samples them,
`why` ranks nothing of the Chroma store for a window's recall, and `show`, `edit`, `history` and
`forget` work or say in one line that the window cannot."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from commands import cli, declined
from memory_run import listed, of_strategy, window_lesson


def test_1_audit_samples_window_lessons_instead_of_skipping_them(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "memory", "audit", str(q), "--sample", "8")
    assert code == 0, err
    assert "no longer there" not in out + err  # window lessons are in window.jsonl
    assert re.search(r"audited 8 of \d+", out), out


def test_3_why_for_a_window_recall_ranks_nothing_from_the_chroma_store(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = listed(q, capsys)
    chroma, window = of_strategy(lines, "reflexion"), of_strategy(lines, "reflexion-window")
    code, out, err = cli(
        capsys, "memory", "why", str(q), "q2", "2", "--strategy", "reflexion-window"
    )
    assert code == 0, err
    assert any(rid in out for rid in window), out  # what the window recalled is still shown
    leaked = [rid for rid in chroma if rid in out]
    assert not leaked, f"Chroma lessons listed for a window recall: {leaked}\n{out}"
    assert not re.search(r"similarity \d", out), out  # the window does not rank by similarity


def test_6_a_window_lesson_can_be_shown(q: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rid = window_lesson(q, capsys)
    code, out, err = cli(capsys, "memory", "show", str(q), rid)
    assert code == 0 and rid in out and "reflexion-window" in out, err


def test_6_editing_a_window_lesson_works_or_says_the_window_cannot(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = window_lesson(q, capsys)
    code, _, err = cli(capsys, "memory", "edit", str(q), rid, "--text", "Try x = [1].")
    if not declined(code, err, "edit"):
        assert "Try x = [1]." in cli(capsys, "memory", "show", str(q), rid)[1]


def test_6_a_window_lessons_history_does_not_call_it_not_stored(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = window_lesson(q, capsys)
    code, out, err = cli(capsys, "memory", "history", str(q), rid)
    if not declined(code, err, "history"):
        assert "(not stored)" not in out, out  # it is stored, in window.jsonl


def test_6_forgetting_a_window_lesson_works_or_says_the_window_cannot(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = window_lesson(q, capsys)
    code, out, err = cli(capsys, "memory", "forget", str(q), rid)
    if not declined(code, err, "forget"):
        assert "forgot 1 reflection" in out, out
        assert rid not in listed(q, capsys)
