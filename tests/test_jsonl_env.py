"""Your own tasks from JSONL: the example file loads, every kind of bad line is reported with its
line number, code tasks run their tests in the sandbox, questions are scored by EM and F1."""

from __future__ import annotations

import json
import tempfile
from importlib.resources import files
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envs.jsonl.env import JsonlEnv
from envs.jsonl.qa import exact_match, final_answer, normalize_answer, token_f1
from envs.registry import make_env
from reflexion.core.errors import UsageError

EXAMPLE = Path(str(files("envs") / "examples" / "tasks.jsonl"))
QA = {"id": "q", "question": "Capital of France?", "answer": "Paris"}
CODE = {
    "id": "c",
    "prompt": "def double(x):\n    '''Twice x.'''\n",
    "entry_point": "double",
    "visible_tests": ["assert double(2) == 4"],
    "hidden_tests": ["assert double(-3) == -6", "assert double(0) == 0"],
}


def write(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "tasks.jsonl"
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_example_file_ships_and_loads() -> None:
    env = make_env(f"jsonl:{EXAMPLE}")
    kinds = [t.spec["kind"] for t in env.tasks()]
    assert (
        env.name.startswith("jsonl:tasks-") and kinds.count("code") == 4 and kinds.count("qa") == 4
    )


def test_two_task_files_never_share_an_env_name(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "tasks.jsonl").write_text('{"id": "q", "question": "1+1?", "answer": "2"}\n')
    (b / "tasks.jsonl").write_text('{"id": "q", "question": "2+2?", "answer": "4"}\n')
    assert (
        make_env(f"jsonl:{a / 'tasks.jsonl'}").name != make_env(f"jsonl:{b / 'tasks.jsonl'}").name
    )


def test_the_example_tasks_have_answers_that_pass() -> None:
    env = JsonlEnv(str(EXAMPLE))
    task = next(t for t in env.tasks() if t.id == "code/rle")
    solution = (
        "```python\nfrom itertools import groupby\n\ndef run_length(s):\n"
        "    return [(k, len(list(g))) for k, g in groupby(s)]\n```"
    )
    assert env.score(task, solution).solved and env.evaluate(task, solution).solved
    question = next(t for t in env.tasks() if t.id == "qa/keeper")
    assert env.evaluate(question, "The log names her.\nAnswer: Agnes Moir.").solved


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        ([QA, '{"id": "x", "question": "?"'], 2, "not valid JSON"),
        ([QA, "[1, 2]"], 2, "expected a JSON object, got a list"),
        (["", QA, '"text"'], 3, "expected a JSON object, got a string"),
        ([{"id": "x", "answer": "a"}], 1, 'either "prompt"'),
        ([{**QA, **CODE}], 1, 'either "prompt"'),
        ([{k: v for k, v in QA.items() if k != "answer"}], 1, 'missing field "answer"'),
        ([{k: v for k, v in CODE.items() if k != "hidden_tests"}], 1, '"hidden_tests"'),
        ([{**CODE, "entry_point": 3}], 1, '"entry_point" must be a non-empty string, got a num'),
        ([{**CODE, "entry_point": "two words"}], 1, "must be a Python name"),
        ([{**CODE, "hidden_tests": []}], 1, '"hidden_tests" is empty'),
        ([{**CODE, "hidden_tests": ["assert double(2) =="]}], 1, "is not valid Python"),
        ([{**CODE, "visible_tests": [1, 2]}], 1, "must be a list of non-empty strings"),
        ([{**QA, "answer": []}], 1, '"answer" must be a string or a non-empty list'),
        ([{**QA, "answer": ["ok", 3]}], 1, '"answer" must hold only non-empty strings'),
        ([{**QA, "id": None}], 1, '"id" must be'),
        ([{**QA, "id": " "}], 1, '"id" must be a non-empty string or an integer, got a blank s'),
        ([{**QA, "question": ""}], 1, '"question" must be a non-empty string, got an empty st'),
        ([{**QA, "hint": "x"}], 1, "unknown field 'hint'"),
        ([QA, CODE, {**QA, "question": "again?"}], 3, "duplicate id 'q' (first on line 1)"),
    ],
)
def test_a_bad_line_is_reported_with_its_number(
    tmp_path: Path, lines: list[object], line: int, message: str
) -> None:
    path = write(tmp_path, *lines)
    with pytest.raises(UsageError) as caught:
        JsonlEnv(str(path))
    text = str(caught.value)
    assert text.startswith(f"{path}:{line}: ") and message in text and "\n" not in text


def test_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(json.dumps(QA).encode() + b'\n{"id": "\xff"}\n')
    with pytest.raises(UsageError, match=r"t\.jsonl:2: not UTF-8"):
        JsonlEnv(str(path))


def test_a_missing_or_empty_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read the task file"):
        JsonlEnv(str(tmp_path / "nope.jsonl"))
    with pytest.raises(UsageError, match="no tasks in the file"):
        JsonlEnv(str(write(tmp_path, "", "   ")))
    with pytest.raises(UsageError, match="jsonl:PATH"):
        make_env("jsonl")


def test_code_tasks_score_visible_tests_and_evaluate_hidden_ones(tmp_path: Path) -> None:
    env = JsonlEnv(str(write(tmp_path, CODE)))
    [task] = env.tasks()
    assert "hidden" not in json.dumps(task.spec) and "-6" not in task.prompt
    cheat = "def double(x):\n    return 4 if x == 2 else x\n"  # passes the visible test only
    score, held_out = env.score(task, cheat), env.evaluate(task, cheat)
    assert (score.value, score.solved) == (1.0, True)
    assert (held_out.value, held_out.solved) == (0.5, False)
    assert "double(-3) == -6" in held_out.feedback and "double(-3)" not in score.feedback
    failing = env.score(task, "def double(x):\n    return x + 1\n")
    assert "Test `assert double(2) == 4` failed: expected 4, got 3" in failing.feedback
    assert env.score(task, "no code here").feedback.startswith("No usable code")


def test_qa_visible_score_only_checks_an_answer_was_given(tmp_path: Path) -> None:
    env = JsonlEnv(str(write(tmp_path, {**QA, "context": "France's capital is Paris."})))
    [task] = env.tasks()
    assert "Paris" in task.prompt  # the context is shown; the gold answer is not a field of it
    assert "answer" not in task.spec
    assert task.lookup == QA["question"]  # memory is found by the question, not the context
    wrong = env.score(task, "Answer: Lyon")
    assert wrong.solved and "not checked against the gold answer" in wrong.feedback
    assert not env.score(task, "   ").solved
    assert env.evaluate(task, "Answer: Lyon").value == 0.0


@pytest.mark.parametrize(
    ("prediction", "gold", "em", "f1"),
    [
        ("Paris", "paris", True, 1.0),
        ("The Eiffel Tower!", "eiffel tower", True, 1.0),
        ("an apple", "apple", True, 1.0),
        ("Eiffel", "the Eiffel Tower", False, 2 / 3),
        ("New York City", "York", False, 0.5),
        ("London", "Paris", False, 0.0),
        ("", "Paris", False, 0.0),
    ],
)
def test_exact_match_and_token_f1(prediction: str, gold: str, em: bool, f1: float) -> None:
    assert exact_match(prediction, gold) is em
    assert token_f1(prediction, gold) == pytest.approx(f1)


def test_any_acceptable_answer_counts(tmp_path: Path) -> None:
    env = JsonlEnv(str(write(tmp_path, {**QA, "answer": ["Paris", "Paris, France"]})))
    [task] = env.tasks()
    result = env.evaluate(task, "It is in France.\nAnswer: Paris, France")
    assert (result.value, result.solved) == (1.0, True)


def test_the_answer_is_read_after_the_last_answer_mark() -> None:
    assert final_answer("Answer: maybe Lyon\nNo wait.\nANSWER:  Paris \nbecause...") == "Paris"
    assert final_answer("Let me think.\n\nParis\n") == "Paris"
    assert final_answer("Answer:") == ""
    assert normalize_answer("  A  man,  a PLAN. ") == "man plan"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
FIELDS = ["id", "prompt", "entry_point", "visible_tests", "hidden_tests", "question", "answer"]
ROWS = st.dictionaries(st.sampled_from([*FIELDS, "context", "meta", "x"]), JSON_VALUES)
LINES = st.lists(
    st.one_of(
        st.binary(max_size=40),
        ROWS.map(lambda row: json.dumps(row).encode()),
        st.just(json.dumps(QA).encode()),
        st.just(json.dumps(CODE).encode()),
    ),
    max_size=5,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LINES)
def test_any_file_loads_or_is_a_usage_error(lines: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.jsonl"
        path.write_bytes(b"\n".join(lines))
        try:
            env = JsonlEnv(str(path))
        except UsageError as exc:
            assert str(exc).startswith(str(path)) and "\n" not in str(exc)
        else:
            assert env.tasks()


def test_a_candidate_cannot_read_the_hidden_tests_from_the_task_file(tmp_path: Path) -> None:
    path = write(tmp_path / "", CODE)
    env = JsonlEnv(str(path))
    task = env.tasks()[0]
    thief = f"def double(x):\n    raise ValueError(open({str(path)!r}).read())\n"
    feedback = env.score(task, thief).feedback
    assert "double(-3)" not in feedback and "Error" in feedback
