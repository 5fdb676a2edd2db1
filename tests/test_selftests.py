"""Self-written tests as the visible signal (--signal self-tests / both): parsing what the model
wrote, scoring every candidate with it in the sandbox, the same tests for every strategy at the
same cost, the fallback when none is usable, and that no hidden test reaches the prompt."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import scripted
from running import RunConfig, run

from envs.code_tasks.selftests import parse_self_tests
from envs.humaneval.env import HumanEvalEnv
from reflexion.core.runfolder import RunFolder
from reflexion.report.folders import first_attempt
from reflexion.report.paired import all_pairs

FENCED = "```python\n{}\n```"


def test_asserts_that_parse_and_call_the_function_are_kept() -> None:
    answer = FENCED.format(
        "assert f(1) == 2\n"
        "assert f(1) == 2\n"  # a repeat
        "assert g(3) == 4\n"  # not a test of f
        "x = f(0)\n"  # not an assert
        "assert f(2) ==\n"  # does not parse
        "assert f(0) == 1"
    )
    found = parse_self_tests(answer, "f", limit=5)
    assert found.tests == ["assert f(1) == 2", "assert f(0) == 1"]
    assert found.dropped == [
        "does not parse: assert f(2) ==",
        "a repeat: assert f(1) == 2",
        "does not call f: assert g(3) == 4",
    ]


def test_the_limit_and_an_answer_without_a_fence() -> None:
    found = parse_self_tests("assert f(1)\nassert f(2)\nassert f(3)", "f", limit=2)
    assert found.tests == ["assert f(1)", "assert f(2)"]
    assert found.dropped == ["over the limit of 2: assert f(3)"]
    assert parse_self_tests("I cannot write tests.", "f").tests == []


TESTS = FENCED.format(
    "assert has_close_elements([1.0, 2.0], 0.5) == False\n"
    "assert has_close_elements([1.0, 1.1], 0.5) == True\n"
    "assert has_close_elements("
)
WRONG = FENCED.format("def has_close_elements(numbers, threshold):\n    return False")
RIGHT = FENCED.format(
    "def has_close_elements(numbers, threshold):\n"
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers)"
    " for b in numbers[i + 1:])"
)


def run_humaneval(
    tmp_path: Path, replies: list[str], signal: str, strategies: tuple[str, ...], out: str = "run"
):
    model = scripted(replies)
    config = RunConfig(
        env="humaneval:1",
        strategies=strategies,
        out=str(tmp_path / out),
        episodes=2,
        embedder="hash-64",
        signal=signal,
        concurrency=1,
    )
    results = run(config, model=model, env=HumanEvalEnv.from_spec("1"))
    return {r.strategy: r for r in results}, model, RunFolder(tmp_path / out).steps()


@pytest.mark.parametrize("signal", ["self-tests", "both"])
def test_self_tests_score_every_candidate_and_are_written_once(tmp_path: Path, signal: str) -> None:
    replies = [TESTS, WRONG, "LESSON: compare every pair.", RIGHT]
    results, model, steps = run_humaneval(tmp_path, replies, signal, ("single", "reflexion"))
    assert len(model.prompts) == 4  # the tests and the first answer were asked once
    written = [s for s in steps if s.kind == "self-tests"]
    assert len(written) == 2  # one per trial, the same tests
    assert all(s.data["tests"] == written[0].data["tests"] for s in written)
    assert len(written[0].data["tests"]) == 2
    assert written[0].data["dropped"] == ["does not parse: assert has_close_elements("]
    # the wrong answer passes one self-test of two; the feedback names the failing one
    first = [s for s in steps if s.kind == "score" and s.strategy == "reflexion"][0]
    assert first.data["signal"] == signal and first.data["value"] < 1.0
    assert "assert has_close_elements([1.0, 1.1], 0.5) == True" in first.output
    reflect = "\n".join(str(m.content) for m in model.prompts[2])
    assert "has_close_elements([1.0, 1.1], 0.5) == True" in reflect
    assert results["reflexion"].final_passed and not results["single"].final_passed
    assert [p.signal for p in results["reflexion"].curve] == [signal, signal]
    # each strategy pays for the tests: single's one answer costs two calls; whichever trial ran
    # second was answered the tests and the first answer from the run's cache
    assert results["single"].llm_calls == 2 and results["reflexion"].llm_calls == 4
    assert results["single"].reused_calls + results["reflexion"].reused_calls == 2


def test_no_usable_self_test_falls_back_to_the_visible_tests(tmp_path: Path) -> None:
    results, model, steps = run_humaneval(tmp_path, ["No tests.", WRONG], "self-tests", ("single",))
    [score] = [s for s in steps if s.kind == "score"]
    assert score.data["signal"] == "visible (no usable self-tests)"
    assert "examples passed" in score.output  # the docstring examples scored it
    assert results["single"].curve[0].signal == "visible (no usable self-tests)"


def test_no_hidden_test_or_reference_reaches_the_self_test_prompt(tmp_path: Path) -> None:
    env = HumanEvalEnv.from_spec("1")
    problem = env._problems["HumanEval/0"]
    _, model, _ = run_humaneval(tmp_path, [TESTS, RIGHT], "self-tests", ("single",))
    prompt = "\n".join(str(m.content) for m in model.prompts[0])
    assert "Do not write the function" in prompt and "has_close_elements" in prompt
    hidden = [line.strip() for line in problem.test.splitlines() if "assert" in line]
    assert hidden and not any(line in prompt for line in hidden)
    solution = [line.strip() for line in problem.canonical_solution.splitlines() if line.strip()]
    assert not any(line in prompt for line in solution)
    assert "def check" not in prompt and "METADATA" not in prompt


def test_the_report_counts_the_signals_false_positives_and_negatives(tmp_path: Path) -> None:
    import dataclasses
    import json

    from test_report_stats import trial

    from reflexion.report.build import write_report

    def attempts(task: str, verdicts: list[tuple[bool, bool]], signal: str):
        """(visible said solved, held-out passed) per attempt."""
        base = trial(task, [(passed, 10) for _, passed in verdicts])
        curve = tuple(
            dataclasses.replace(p, solved=said, signal=signal)
            for p, (said, _) in zip(base.curve, verdicts, strict=True)
        )
        return dataclasses.replace(base, curve=curve)

    results = [
        attempts("t0", [(True, False)], "self-tests"),  # a false positive
        attempts("t1", [(False, True)], "self-tests"),  # a false negative
        attempts("t2", [(False, False), (True, True)], "self-tests"),
        attempts("t3", [(True, True)], "visible (no usable self-tests)"),
        trial("t4", [(True, 10)]),  # a record from before: no visible verdict kept
    ]
    write_report(tmp_path, results, {"env": "e", "strategies": ["A"]}, resamples=50)
    rows = json.loads((tmp_path / "comparison.json").read_text())["signals"]
    own, fallback = rows
    assert (own["signal"], own["attempts"], own["said_solved"]) == ("self-tests", 4, 2)
    assert (own["false_positives"], own["false_negatives"]) == (1, 1)
    assert own["false_positive_rate"] == 0.25
    assert (fallback["attempts"], fallback["false_positives"]) == (1, 0)
    md = (tmp_path / "report.md").read_text()
    assert "## The visible signal against held-out" in md
    assert "| A | self-tests | 4 | 2 | 1 (25.0%) | 1 (25.0%) |" in md


def test_jsonl_self_test_prompts_hold_no_hidden_test_and_questions_fall_back(
    tmp_path: Path,
) -> None:
    from importlib.resources import files

    from envs.jsonl import JsonlEnv
    from envs.jsonl.tasks import CodeTask, load_tasks

    path = str(files("envs") / "examples" / "tasks.jsonl")
    env = JsonlEnv(path)
    tasks = load_tasks(env.path)
    replies = ["```python\nassert running_max([]) == []\n```", "no code"] * len(tasks)
    model = scripted(replies)
    config = RunConfig(
        env=f"jsonl:{path}",
        strategies=("single",),
        out=str(tmp_path / "run"),
        signal="self-tests",
        concurrency=1,
    )
    results = run(config, model=model, env=env)
    assert {r.task_id for r in results} == {t.id for t in tasks}
    hidden = [line for t in tasks if isinstance(t, CodeTask) for line in t.hidden_tests]
    steps = RunFolder(tmp_path / "run").steps()
    written = [s for s in steps if s.kind == "self-tests"]
    asked = [s for s in steps if s.kind == "tests"]  # the model calls that wrote the tests
    assert len(asked) == len(tasks) - len({t.id for t in tasks if not isinstance(t, CodeTask)})
    for step in asked:
        prompt = "\n".join(m.content for m in step.prompt)
        assert "Do not write the function" in prompt
        assert not any(h.strip() in prompt for h in hidden)
    every_prompt = "\n".join(str(m.content) for p in model.prompts for m in p)
    assert hidden and not any(h.strip() in every_prompt for h in hidden)
    assert "Do not write the function" in every_prompt
    # a question has no code to test: its trial writes none and the visible signal scores it
    questions = {t.id for t in tasks if not isinstance(t, CodeTask)}
    notes = {s.task_id: s.data.get("note") for s in written if s.task_id in questions}
    assert notes and all(n == "this task has no code to test" for n in notes.values())
    scored = [s for s in steps if s.kind == "score" and s.task_id in questions]
    assert scored and all(s.data["signal"] == "visible (no usable self-tests)" for s in scored)


def test_an_answer_too_deeply_nested_to_parse_is_dropped_not_a_crash() -> None:
    found = parse_self_tests("assert f(" + "-" * 5000 + "1) == 2", "f")
    assert found.tests == [] and found.dropped


def test_the_first_answer_arm_is_a_single_shot_without_the_tests_cost(tmp_path: Path) -> None:
    """benchmark_humaneval.py --no-main sets reflexion against its own first answers."""
    replies = [TESTS, WRONG, "LESSON: compare every pair.", RIGHT]
    results, _, steps = run_humaneval(tmp_path, replies, "self-tests", ("single", "reflexion"))
    [first] = first_attempt(tmp_path / "run", "reflexion", "first answer")
    single = results["single"]
    assert (first.strategy, first.final_passed, first.any_passed) == ("first answer", False, False)
    assert first.final_passed == single.final_passed and first.attempts == first.llm_calls == 1
    [tests_call] = [s for s in steps if s.kind == "tests" and s.strategy == "single"]
    paid = single.input_tokens + single.output_tokens
    assert first.input_tokens + first.output_tokens == paid - tests_call.input_tokens - (
        tests_call.output_tokens
    )
    [p] = all_pairs([first, results["reflexion"]], ["first answer", "reflexion"])
    assert (p.won, p.lost, p.tied) == (1, 0, 0)


BENCHMARK = Path(__file__).resolve().parents[1] / "scripts" / "benchmark_humaneval.py"


def test_the_benchmark_pairs_the_self_tests_with_what_the_first_folder_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_humaneval(
        tmp_path, [WRONG, "LESSON: compare every pair.", RIGHT], "visible", ("reflexion",), "b"
    )
    replies = [TESTS, WRONG, "LESSON: compare every pair.", WRONG]
    run_humaneval(tmp_path, replies, "self-tests", ("reflexion",), "b-self-tests")
    spec = importlib.util.spec_from_file_location("benchmark_humaneval", BENCHMARK)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.report_self_tests(str(tmp_path / "b"), "scripted")
    cells = [re.split(r"\s{2,}", line.strip()) for line in capsys.readouterr().out.splitlines()]
    won_lost_tied = {row[0]: row[3:6] for row in cells if " vs " in row[0] and row[0] != "B vs A"}
    # the first folder's reflexion fixed its answer; the self-tested one did not
    assert won_lost_tied == {
        "reflexion vs first answer": ["1", "0", "0"],
        "reflexion+self-tests vs first answer": ["0", "0", "1"],
        "reflexion+self-tests vs reflexion": ["0", "1", "0"],
    }


def test_the_benchmark_refuses_to_run_nothing(tmp_path: Path) -> None:
    argv = [sys.executable, str(BENCHMARK), "--no-main", "--no-self-tests", "--out", str(tmp_path)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "leaves nothing to run" in done.stderr
    assert "Traceback" not in done.stderr
