"""A board's rules as one pure function (reflexion.trial.board.apply): the same lessons, edits
and rules give the same board, changes and notes, with nothing written; and a design's own
rules, passed to the trial, are the ones a run's board keeps."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import KeywordEnv, scripted
from running import RunConfig, run

from memory import ChromaMemory
from reflexion import Strategy
from reflexion.core.lesson_records import Board, BoardEdit, Kind, Reflection
from reflexion.core.records import Task
from reflexion.strategies import insights
from reflexion.trial.board import Author, apply

AUTHOR = Author("run", "insights", "keywords", Task("k1", "Use apple."), 0, 2, lambda: 5.0)


def rule(n: int, text: str, votes: int = 2, run_id: str = "run") -> Reflection:
    who = (run_id, "insights", "keywords", "k0", 0, 1, 0.0, 1.0, "", "rule")
    return Reflection(f"r{n}", text, *who, votes)


def test_the_same_edits_give_the_same_board_and_leave_their_input_as_it_was() -> None:
    lessons = [rule(1, "Check the sign."), rule(2, "Count the rows.", votes=1)]
    edits = [
        BoardEdit("downvote", "r2"),
        BoardEdit("add", None, "Name each column."),
        BoardEdit("add", None, "check the sign"),  # the same words as r1
        BoardEdit("edit", "r1", "Check the sign of every term."),
        BoardEdit("upvote", "r2"),  # dropped by the first edit
    ]
    before = list(lessons)
    first = apply(Kind.RULE, lessons, edits, insights.BOARD, AUTHOR)
    assert apply(Kind.RULE, lessons, edits, insights.BOARD, AUTHOR) == first
    assert lessons == before  # nothing changed in place
    after, changes, notes = first
    added = next(r for r in after if r.text == "Name each column.")
    assert notes == [
        "downvote r2: 0 votes, dropped",
        f"add {added.id}",
        "skipped add: the board holds this text already",
        "edit r1: 3 votes",
        "skipped upvote: no lesson 'r2' on the board",
    ]
    assert [(c.before and c.before.id, c.after and c.after.id) for c in changes] == [
        ("r2", None),
        (None, added.id),
        ("r1", "r1"),
    ]
    assert [(r.id, r.votes) for r in after] == [("r1", 3), (added.id, 2)]
    assert added.created == 5.0 and added.episode == 2 and added.task_id == "k1"
    assert after[0].edited_on == ("k1",)  # its new words were written on task k1


def test_another_runs_lesson_is_not_changed_and_a_full_board_takes_no_add() -> None:
    theirs = rule(1, "Check the sign.", run_id="other")
    _, changes, notes = apply(Kind.RULE, [theirs], [BoardEdit("upvote", "r1")], Board(), AUTHOR)
    assert notes == ["skipped upvote: r1 belongs to another run"] and changes == []
    full = [rule(1, "Check the sign.")]
    edits = [BoardEdit("add", None, "Count the rows.")]
    assert apply(Kind.RULE, full, edits, Board(most=1), AUTHOR)[2] == [
        "skipped add: the board holds 1 rules"
    ]


def test_a_strategy_of_your_own_keeps_a_board_under_rules_of_its_own(tmp_path: Path) -> None:
    """The rules are the design's to pass: a user's kind, unknown to the package, gets its own
    limit (one note on the board), and a second add is refused as that limit says."""
    mine = Board(most=1, new_votes=3)

    async def notes(trial) -> None:
        board = await trial.board("note", 1, mine)
        call = await trial.ask(trial.actor.generate(trial.task, (), sample=0), 1)
        await trial.attempt(call, 1)
        add = [BoardEdit("add", None, f"a note from {trial.task.id}")]
        await trial.revise("note", add, 1, rules=mine)
        trial.note(1, "seen", str(len(board)), {})

    strategy = Strategy("notes", notes, "chroma", help="a board of one note")
    config = RunConfig(
        env="keywords",
        strategies=("notes",),
        out=str(tmp_path / "run"),
        episodes=1,
        embedder="hash-64",
        order="stream",
    )
    run(config, model=scripted(["apple", "cloud"]), env=KeywordEnv(), strategies=(strategy,))
    with ChromaMemory.open(tmp_path / "run" / "memory") as memory:
        kept = [(r.kind, r.text, r.votes) for r in memory.reflections()]
    assert kept == [("note", "a note from k0", 3)]
    trace = [json.loads(x) for x in (tmp_path / "run" / "trace.jsonl").read_text().splitlines()]
    revised = [s["output"] for s in trace if s["kind"] == "revised"]
    assert revised[1] == "skipped add: the board holds 1 notes"
