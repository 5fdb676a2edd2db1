"""`--env constrained:N` (Self-Refine's CommonGen-Hard): concept coverage by word forms, the
held-out length check, fixed concept sets, and Self-Refine adding what was missing."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import scripted
from running import RunConfig, run

from envs.constrained import ConstrainedEnv
from envs.constrained.env import MAX_WORDS
from envs.constrained.forms import forms, used
from reflexion.cli import main


@pytest.mark.parametrize(
    ("concept", "text"),
    [
        ("dog", "Two dogs barked."),
        ("run", "She ran home."),
        ("run", "He is running."),
        ("swim", "They had swum."),
        ("fly", "A bird flies."),
        ("tie", "tying a knot"),
        ("leaf", "the leaves fell"),
        ("child", "children played"),
        ("dance", "we danced"),
        ("box", "three boxes"),
        ("open", "the opening"),
    ],
)
def test_any_form_of_a_concept_counts(concept: str, text: str) -> None:
    assert used([concept], text) == [concept]


@pytest.mark.parametrize(
    ("concept", "text"), [("dog", "dogma"), ("run", "rune"), ("cat", "cattle")]
)
def test_a_word_that_merely_contains_it_does_not(concept: str, text: str) -> None:
    assert used([concept], text) == []


def test_open_is_not_doubled() -> None:
    assert "opening" in forms("open") and "openning" not in forms("open")


def test_the_tasks_are_fixed_and_within_the_concept_range() -> None:
    a, b = ConstrainedEnv.from_spec("5").tasks(), ConstrainedEnv.from_spec("5").tasks()
    assert [t.spec for t in a] == [t.spec for t in b]
    assert ConstrainedEnv.from_spec("2").tasks() == a[:2]  # a prefix of the same stream
    assert all(20 <= len(t.spec["concepts"]) <= 30 for t in a)
    assert all(len(set(t.spec["concepts"])) == len(t.spec["concepts"]) for t in a)


def test_visible_coverage_names_the_missing_and_held_out_adds_the_length() -> None:
    env = ConstrainedEnv.from_spec("1")
    task = env.tasks()[0]
    concepts = task.spec["concepts"]
    half = " ".join(concepts[: len(concepts) // 2])
    score = env.score(task, half)
    assert not score.solved and score.value == pytest.approx((len(concepts) // 2) / len(concepts))
    assert f"Missing: {', '.join(concepts[len(concepts) // 2 :])}." in score.feedback
    full = " ".join(concepts)
    assert env.score(task, full).solved and env.evaluate(task, full).solved
    padded = full + " filler" * MAX_WORDS
    assert env.score(task, padded).solved  # the visible check does not look at length
    assert not env.evaluate(task, padded).solved  # the held-out one does
    assert "words" not in env.score(task, padded).feedback


def test_self_refine_adds_what_the_feedback_says_is_missing(tmp_path: Path) -> None:
    env = ConstrainedEnv.from_spec("1")
    concepts = env.tasks()[0].spec["concepts"]
    first = " ".join(concepts[:-3])
    model = scripted([first, "Add the missing ones.", " ".join(concepts)])
    config = RunConfig(env="constrained:1", strategies=("self-refine",), out=str(tmp_path / "r"))
    [result] = run(config, model=model, env=env)
    assert result.final_passed and result.attempts == 2
    refine = "\n".join(str(m.content) for m in model.prompts[2])
    assert all(c in refine for c in concepts[-3:])  # the missing concepts were named


@pytest.mark.parametrize("arg", ["0", "x", "1001"])
def test_a_bad_count_is_one_line_and_exit_2(tmp_path: Path, capsys, arg: str) -> None:
    argv = ["run", "--env", f"constrained:{arg}", "--strategy", "single"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "constrained:N needs N between 1 and 1000" in err and len(err.strip().splitlines()) == 1
