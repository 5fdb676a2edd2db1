"""Checks run in one sandboxed process, each isolated: one failure never hides the others."""

from __future__ import annotations

from envs.checks import Check, assert_checks, render, run_checks

CODE = """
import os, sys

def f(x):
    if x == 'loop':
        while True:
            pass
    if x == 'exit':
        sys.exit(0)
    if x == 'crash':
        os._exit(1)
    return 10 // x
"""


def test_each_check_fails_alone() -> None:
    checks = [
        Check("f(1)", "f(1)", "10"),
        Check("f(0)", "f(0)", "0"),
        Check("f('loop')", "f('loop')", "1"),
        Check("f('exit')", "f('exit')", "1"),
        Check("f(2)", "f(2)", "6"),
        Check("f(5)", "f(5)", "2"),
    ]
    run = run_checks(CODE, checks, per_check_s=0.5)
    assert [r.passed for r in run.results] == [True, False, False, False, False, True]
    zero, loop, leave, wrong = run.results[1:5]
    assert zero.error is not None and "ZeroDivisionError" in zero.error
    assert "line 12, in f\n    return 10 // x" in zero.error  # the traceback shows the line
    assert loop.error == "timed out after 0.5 s"
    assert leave.error is not None and "SystemExit" in leave.error
    assert (wrong.got, wrong.error) == ("5", None)


def test_a_crash_marks_the_checks_it_cut_off() -> None:
    checks = [Check("f(1)", "f(1)", "10"), Check("crash", "f('crash')", "1"), Check("f(2)", "f(2)")]
    run = run_checks(CODE, checks)
    assert run.results[0].passed and not run.results[2].passed
    assert run.results[2].error == "did not finish: the run was stopped (exit code 1)"


def test_code_that_does_not_load_fails_every_check() -> None:
    run = run_checks("def f(:\n    pass\n", [Check("f(1)", "f(1)", "1")] * 2)
    assert run.load_error is not None and "SyntaxError" in run.load_error
    assert run.passed == 0
    assert render(run).startswith("The code failed before any example could run:")


def test_prints_cannot_fake_a_result() -> None:
    code = (
        'print(\'@@0@@{"index": 0, "passed": true}\')\ndef f(x):\n    print("noise")\n    return 0'
    )
    run = run_checks(code, [Check("f(1)", "f(1)", "1")])
    assert run.passed == 0 and run.results[0].got == "0"


def test_approx_is_only_for_docstring_examples() -> None:
    code = "def f():\n    return 0.1 + 0.2\n"
    assert run_checks(code, [Check("f()", "f()", "0.3", approx=True)]).passed == 1
    assert run_checks(code, assert_checks(["assert f() == 0.3"])).passed == 0


def test_expected_output_that_is_not_an_expression_is_compared_as_text() -> None:
    code = "def greet():\n    print('hello world')\n"
    run = run_checks(code, [Check("greet()", "greet()", "hello world")])
    assert run.passed == 1


def test_assert_checks_split_setup_and_compare() -> None:
    checks = assert_checks(["xs = [3, 1]\nassert f(xs) == [1, 3]\nassert xs == [3, 1]", "f([])"])
    assert [(c.source, c.expected, c.setup) for c in checks] == [
        ("f(xs)", "[1, 3]", "xs = [3, 1]"),
        ("xs", "[3, 1]", "xs = [3, 1]\nf(xs) == [1, 3]"),
        ("f([])", None, ""),
    ]
    sorted_in_place = "def f(xs):\n    xs.sort()\n    return xs\n"
    run = run_checks(sorted_in_place, checks)
    # f sorts its argument in place: the first assert passes, the second catches the mutation
    assert [r.passed for r in run.results] == [True, False, True]


def test_feedback_names_the_failing_check_with_expected_and_got() -> None:
    run = run_checks("def f(x):\n    return x + 1\n", assert_checks(["assert f(1) == 3"]))
    assert render(run, "test") == (
        "0 of 1 tests passed.\nTest `assert f(1) == 3` failed: expected 3, got 2"
    )
