"""HumanEval: the reference passes both signals, wrong code fails them, and the official tests never
reach a task or visible feedback."""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from envs.code_tasks import scoring
from envs.humaneval import env as humaneval
from envs.humaneval.env import HumanEvalEnv, Problem
from envs.humaneval.examples import parse_examples
from envs.humaneval.subsets import SUBSETS
from envs.registry import make_env
from envs.sandbox.checks import Check, CheckResult, CheckRun, run_checks
from envs.sandbox.process import SandboxResult
from reflexion.core.errors import UsageError
from reflexion.core.records import Score

SAMPLE = [0, 2, 10, 32, 38, 47, 81, 95, 115, 129]  # doctests, helpers, odd example styles, none


@pytest.fixture(scope="module")
def env() -> HumanEvalEnv:
    return HumanEvalEnv()


def problem(env: HumanEvalEnv, task_id: str) -> Problem:
    return env._problems[task_id]


def reference(env: HumanEvalEnv, task_id: str) -> str:
    p = problem(env, task_id)
    return p.prompt + p.canonical_solution


def wrong(env: HumanEvalEnv, task_id: str) -> str:
    return problem(env, task_id).prompt + "    return None\n"


@pytest.fixture(scope="module")
def visible(env: HumanEvalEnv) -> dict[str, tuple[Score, Score]]:
    """The visible score of the reference and of a wrong solution, for all 164 problems."""

    def both(task_id: str) -> tuple[Score, Score]:
        task = next(t for t in env.tasks() if t.id == task_id)
        return env.score(task, reference(env, task_id)), env.score(task, wrong(env, task_id))

    ids = [t.id for t in env.tasks()]
    with ThreadPoolExecutor(4) as pool:
        return dict(zip(ids, pool.map(both, ids)))


def test_all_164_problems_in_file_order(env: HumanEvalEnv) -> None:
    tasks = env.tasks()
    assert [t.id for t in tasks] == [f"HumanEval/{i}" for i in range(164)]
    first = tasks[0]
    prompt = problem(env, first.id).prompt
    assert first.spec == {
        "entry_point": "has_close_elements",
        "kind": "code",
        "answer_prefix": f"```python\n{prompt}",  # an answer repeats the prompt's code
    }
    assert prompt in first.prompt and "```python" in first.prompt


def test_spec_picks_the_first_n(env: HumanEvalEnv) -> None:
    assert [t.id for t in HumanEvalEnv.from_spec("3").tasks()] == [t.id for t in env.tasks()[:3]]
    assert len(make_env("humaneval:164").tasks()) == 164
    for bad in ["0", "165", "ten", "-1"]:
        with pytest.raises(UsageError, match="need N between 1 and 164"):
            HumanEvalEnv.from_spec(bad)


@pytest.mark.parametrize("index", SAMPLE)
def test_the_reference_passes_both_signals(env: HumanEvalEnv, index: int) -> None:
    task = env.tasks()[index]
    code = reference(env, task.id)
    score, held_out = env.score(task, code), env.evaluate(task, code)
    assert (score.value, score.solved) == (1.0, True), score.feedback
    assert (held_out.value, held_out.solved) == (1.0, True), held_out.feedback


@pytest.mark.slow
def test_every_reference_passes_the_official_tests(env: HumanEvalEnv) -> None:
    def passed(index: int) -> bool:
        task = env.tasks()[index]
        return env.evaluate(task, reference(env, task.id)).solved

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(passed, range(164)))


def test_every_reference_passes_its_visible_examples(
    visible: dict[str, tuple[Score, Score]],
) -> None:
    failing = {i: s.feedback for i, (s, _) in visible.items() if not s.solved or s.value != 1.0}
    assert failing == {}


def test_a_wrong_solution_fails_and_the_feedback_says_where(env: HumanEvalEnv) -> None:
    task = env.tasks()[0]
    score = env.score(task, wrong(env, task.id))
    assert (score.value, score.solved) == (0.0, False)
    assert score.feedback.startswith("0 of 2 examples passed.")
    assert "`has_close_elements([1.0, 2.0, 3.0], 0.5)` failed: expected False, got None" in (
        score.feedback
    )
    assert not env.evaluate(task, wrong(env, task.id)).solved


def test_an_error_shows_the_last_lines_of_its_traceback(env: HumanEvalEnv) -> None:
    task = env.tasks()[2]  # truncate_number
    answer = "```python\ndef truncate_number(number):\n    return number % int(number - 3.5)\n```"
    score = env.score(task, answer)
    assert not score.solved
    assert 'File "solution.py", line 2, in truncate_number' in score.feedback
    assert "ZeroDivisionError" in score.feedback


def test_visible_examples_found_for_at_least_150_problems(
    env: HumanEvalEnv, visible: dict[str, tuple[Score, Score]]
) -> None:
    parsed = sum(bool(parse_examples(p.prompt, p.entry_point)) for p in env._problems.values())
    vetted = sum(bool(env.examples(t)) for t in env.tasks())  # those the reference passes
    print(f"docstring examples: parsed for {parsed}, kept for {vetted} of 164 problems")
    assert parsed >= vetted >= 150


def test_a_problem_without_examples_only_needs_code_that_loads(env: HumanEvalEnv) -> None:
    task = env.tasks()[41]  # car_race_collision: no examples in its docstring
    assert env.examples(task) == []
    score = env.score(task, reference(env, task.id))
    assert score.solved and "no examples" in score.feedback
    broken = env.score(task, "def car_race_collision(n):\n    return n\n\nraise SystemExit(1)\n")
    assert not broken.solved


def test_the_official_tests_never_reach_a_task_or_visible_feedback(
    env: HumanEvalEnv, visible: dict[str, tuple[Score, Score]]
) -> None:
    checked = 0
    for task in env.tasks():
        asserts = [ln.strip() for ln in problem(env, task.id).test.splitlines() if "assert" in ln]
        shown = [task.prompt, json.dumps(task.spec), *(s.feedback for s in visible[task.id])]
        for line in asserts:
            checked += 1
            assert not any(line in text for text in shown), (task.id, line)
    assert checked > 1000  # every problem's assert lines were looked for


@pytest.mark.parametrize("answer", ["", "I could not solve this one.", "```python\ndef (:\n```"])
def test_an_unparseable_answer_is_a_failed_attempt_with_a_reason(
    env: HumanEvalEnv, answer: str
) -> None:
    task = env.tasks()[0]
    score, held_out = env.score(task, answer), env.evaluate(task, answer)
    assert (score.value, score.solved, held_out.solved) == (0.0, False, False)
    assert score.feedback.startswith("No usable code in the answer:")


def test_spread_subset_is_evenly_spaced_and_bounded() -> None:
    ids = [t.id for t in HumanEvalEnv.from_spec("spread-4").tasks()]
    assert ids == ["HumanEval/0", "HumanEval/41", "HumanEval/82", "HumanEval/123"]
    with pytest.raises(UsageError, match="spread-N"):
        HumanEvalEnv.from_spec("spread-0")


def test_ids_name_problems_by_number_and_bad_ones_are_refused() -> None:
    ids = [t.id for t in HumanEvalEnv.from_spec("ids=12,3,3").tasks()]
    assert ids == ["HumanEval/3", "HumanEval/12"]
    for bad in ("ids=", "ids=1,x", "ids=164", "ids=-1"):
        with pytest.raises(UsageError, match="ids=I,J"):
            HumanEvalEnv.from_spec(bad)


def test_named_subsets_are_sorted_in_range_and_say_how_they_were_chosen() -> None:
    for name, subset in SUBSETS.items():
        assert subset.how and list(subset.ids) == sorted(set(subset.ids))
        tasks = HumanEvalEnv.from_spec(name).tasks()
        assert [t.id for t in tasks] == [f"HumanEval/{i}" for i in subset.ids]


def _stopped_run(code: str, checks: Sequence[Check], **_: object) -> CheckRun:
    """What run_checks returns when the machine kills the run: no result at all."""
    sandbox = SandboxResult(-9, "", "", True, 9.0, "timed out after 9 s", True, True, True)
    missing = "did not finish: the checks were stopped (timed out after 9 s)"
    results = tuple(CheckResult(c, False, error=missing) for c in checks)
    loading = "the checks were stopped (timed out after 9 s) while the code was loading"
    return CheckRun(results, loading, sandbox)


def test_a_reference_run_the_machine_stopped_is_retried_once(
    env: HumanEvalEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = HumanEvalEnv(list(env._problems.values())[:1])
    task = fresh.tasks()[0]
    calls: list[float] = []

    def flaky(code: str, checks: Sequence[Check], **kwargs: Any) -> CheckRun:
        calls.append(kwargs["per_check_s"])
        return _stopped_run(code, checks) if len(calls) == 1 else run_checks(code, checks, **kwargs)

    monkeypatch.setattr(scoring, "run_checks", flaky)
    assert len(fresh.examples(task)) == 2
    assert calls == [humaneval.EXAMPLE_SECONDS, humaneval.VETTING_RETRY_SECONDS]


def test_a_reference_run_that_fails_twice_is_a_failed_score_not_cached(
    env: HumanEvalEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = HumanEvalEnv(list(env._problems.values())[:1])
    task = fresh.tasks()[0]
    monkeypatch.setattr(scoring, "run_checks", _stopped_run)
    with pytest.raises(humaneval.VettingError, match="timed out after 9 s"):
        fresh.examples(task)
    score = fresh.score(task, wrong(env, task.id))  # not "solved: no examples"
    assert (score.value, score.solved) == (0.0, False)
    assert "could not be run" in score.feedback
    monkeypatch.undo()
    assert len(fresh.examples(task)) == 2  # nothing was cached: it runs again and keeps both


@pytest.mark.parametrize(
    "cheat",
    [
        "import __main__\n__main__.run_check = lambda check, scope: {'passed': True}\n",
        "import json\njson.dumps = lambda f, dumps=json.dumps: dumps({**f, 'passed': True})\n",
        "import builtins\nbuiltins.bool = lambda value: True\n",
    ],
    ids=["main", "json", "builtins"],
)
def test_patching_the_harness_cannot_fake_a_pass(env: HumanEvalEnv, cheat: str) -> None:
    task = env.tasks()[0]
    assert not env.evaluate(task, cheat + wrong(env, task.id)).solved
    assert not env.score(task, cheat + wrong(env, task.id)).solved


def test_printing_a_result_and_leaving_cannot_fake_a_pass(env: HumanEvalEnv) -> None:
    task = env.tasks()[0]
    cheat = (
        "import __main__, os, sys\n"
        "nonce = getattr(__main__, 'NONCE', '@@0@@')\n"
        'for line in [\'{"loaded": true}\', \'{"index": 0, "passed": true}\']:\n'
        "    sys.__stdout__.write(nonce + line + '\\n')\n"
        "    os.write(1, (nonce + line + '\\n').encode())\n"
        "sys.__stdout__.flush()\n"
        "os._exit(0)\n"
    )
    held_out = env.evaluate(task, wrong(env, task.id) + cheat)
    assert not held_out.solved, held_out.feedback
    assert not env.score(task, wrong(env, task.id) + cheat).solved


def test_redefining_the_prompts_helper_cannot_fake_a_pass(env: HumanEvalEnv) -> None:
    # HumanEval/32's tests check find_zero's answer with the prompt's `poly`; a candidate that
    # redefines poly to return 0 would pass with any answer if its poly were the one used
    task = env.tasks()[32]
    cheat = "def poly(xs, x):\n    return 0\n\n\ndef find_zero(xs):\n    return 12345.0\n"
    assert not env.evaluate(task, cheat).solved
    assert env.evaluate(task, reference(env, task.id)).solved
    honest = "def find_zero(xs):\n    return 12345.0\n"
    assert env.score(task, cheat).feedback == env.score(task, honest).feedback
