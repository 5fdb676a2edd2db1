"""`skills` on the envs whose answer is itself code: HumanEval and JSONL code tasks. A solved
answer's program is checked on its own, kept, and shown to the next task as code to call or
adapt; a failed one is not kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from running import skills_stream

from envs.humaneval.env import HumanEvalEnv
from envs.jsonl.env import JsonlEnv
from reflexion.strategies.skills import program_of

DOUBLE = {
    "id": "double",
    "prompt": "def double(x):\n    '''Twice x.'''\n",
    "entry_point": "double",
    "visible_tests": ["assert double(2) == 4"],
    "hidden_tests": ["assert double(-3) == -6"],
}
TRIPLE = {
    "id": "triple",
    "prompt": "def triple(x):\n    '''Three times x.'''\n",
    "entry_point": "triple",
    "visible_tests": ["assert triple(2) == 6"],
    "hidden_tests": ["assert triple(-3) == -9"],
}


def code_tasks(tmp_path: Path) -> JsonlEnv:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in (DOUBLE, TRIPLE)), encoding="utf-8")
    return JsonlEnv(str(path))


def prompts_of(steps: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(s["prompt"]) for s in steps if s["kind"] == "generate"]


def test_a_solved_humaneval_answer_is_kept_and_shown_to_the_next_problem(tmp_path: Path) -> None:
    env = HumanEvalEnv.from_spec("2")
    first = env._problems["HumanEval/0"]
    solution = f"```python\n{first.prompt}{first.canonical_solution}```"
    results, steps = skills_stream(tmp_path, env, [solution, "```python\npass\n```"])
    assert [r.final_passed for r in results] == [True, False]
    [verified] = [s for s in steps if s["kind"] == "verify"]
    assert verified["data"]["solved"] is True
    [kept] = [s for s in steps if s["kind"] == "remember"]
    assert "def has_close_elements" in kept["output"]
    second = prompts_of(steps)[1]
    assert "Programs that solved similar tasks" in second and "has_close_elements" in second
    # the failed second answer left no skill, and the shown skill lost its vote
    revised = [s["output"] for s in steps if s["kind"] == "revise"]
    assert revised == [f"downvote {kept['data']['id']}: 1 votes"]


def test_a_code_task_answered_in_a_bare_fence_becomes_a_skill(tmp_path: Path) -> None:
    """The code envs score a program in a fence that names no language, so `skills` keeps it
    too (before, only ```python blocks were programs: this answer passed and left no skill)."""
    bare = "Here it is:\n```\ndef double(x):\n    return 2 * x\n```"
    results, steps = skills_stream(tmp_path, code_tasks(tmp_path), [bare, "```\npass\n```"])
    assert [r.final_passed for r in results] == [True, False]
    [kept] = [s for s in steps if s["kind"] == "remember"]
    assert "return 2 * x" in kept["output"] and "```python" in kept["output"]
    assert "return 2 * x" in prompts_of(steps)[1]


def test_a_code_task_answer_that_fails_its_check_is_not_kept(tmp_path: Path) -> None:
    wrong = "```python\ndef double(x):\n    return x + 1\n```"
    results, steps = skills_stream(tmp_path, code_tasks(tmp_path), [wrong, wrong])
    assert not any(r.final_passed for r in results)
    assert not [s for s in steps if s["kind"] in ("remember", "verify")]
    assert "Programs that solved" not in prompts_of(steps)[1]


def test_a_query_or_prose_in_a_bare_fence_is_not_a_program() -> None:
    """The SQL env's check also reads a query in a bare fence; such a query is not Python, so
    `skills` takes no program from it (on SQL it keeps nothing), nor from prose."""
    assert program_of("```\nSELECT COUNT(*) FROM orders WHERE store_id = 2\n```") is None
    assert program_of("```\nFirst add, then multiply by the rest.\n```") is None
    assert program_of("```\nprint(4 * 6)\n```") == "print(4 * 6)"
    # an empty block and a quoted number or expression parse, but are no program
    assert program_of("```\n```") is None
    assert program_of("```\n24\n```\n```\n(4 + 4) * 3\n```") is None
    # a reply written with Windows line ends keeps none of them in its program
    assert program_of("```python\r\ndef f(x):\r\n    return 2 * x\r\n```") == (
        "def f(x):\n    return 2 * x"
    )


def test_an_answer_cut_off_before_its_fence_closed_is_kept_as_the_check_ran_it(
    tmp_path: Path,
) -> None:
    """An answer that hit its token limit inside its block has no closing fence. The check
    reads the block to the reply's end and passes it, so `skills` keeps that same program
    (before, `skills` read only closed fences: this answer passed and left no skill)."""
    cut = "```python\ndef double(x):\n    return 2 * x\n"
    results, steps = skills_stream(tmp_path, code_tasks(tmp_path), [cut, "```\npass\n```"])
    assert [r.final_passed for r in results] == [True, False]
    [kept] = [s for s in steps if s["kind"] == "remember"]
    assert "return 2 * x" in kept["output"]
    assert program_of("Two blocks:\n```python\nx = 4\n```\nthen\n```py\nprint(x)") == (
        "x = 4\n\nprint(x)"
    )


def test_a_function_in_a_bare_fence_called_from_a_python_block_is_kept_whole(
    tmp_path: Path,
) -> None:
    """The check reads every block that defines the function; a ```python block that only
    calls it is no program alone, so the skill kept is both blocks, as the check ran them."""
    split = "```\ndef double(x):\n    return 2 * x\n```\nUse:\n```python\nprint(double(2))\n```"
    results, steps = skills_stream(tmp_path, code_tasks(tmp_path), [split, "```\npass\n```"])
    assert results[0].final_passed
    [kept] = [s for s in steps if s["kind"] == "remember"]
    assert "return 2 * x" in kept["output"] and "print(double(2))" in kept["output"]
