"""Checks run in one sandboxed process, each isolated: one failure never hides the others."""

from __future__ import annotations

from envs.code_tasks import assert_checks, task_helpers
from envs.sandbox import Check, render, run_checks
from envs.sandbox.checks import GRACE_S

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
    # 2 s: the checks that answer must answer within it on a loaded machine too
    run = run_checks(CODE, checks, per_check_s=2)
    assert [r.passed for r in run.results] == [True, False, False, False, False, True]
    zero, loop, leave, wrong = run.results[1:5]
    assert zero.error is not None and "ZeroDivisionError" in zero.error
    assert "line 12, in f\n    return 10 // x" in zero.error  # the traceback shows the line
    assert loop.error == "timed out after 2 s"
    assert leave.error is not None and "SystemExit" in leave.error
    assert (wrong.got, wrong.error) == ("5", None)


def test_a_crash_marks_the_checks_it_cut_off() -> None:
    checks = [Check("f(1)", "f(1)", "10"), Check("crash", "f('crash')", "1"), Check("f(2)", "f(2)")]
    run = run_checks(CODE, checks)
    assert run.results[0].passed and not run.results[2].passed
    assert run.results[2].error == "did not finish: the code's process exited with code 1"


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


# The code runs in one process, the checks in another (envs/sandbox/harness/): what crosses between
# them, and what cannot.


def test_plain_values_cross_exactly_with_their_types() -> None:
    code = (
        "def f():\n"
        "    return (1, [2.5, None, True], {'k': b'x'}, {3}, frozenset({4}), 2**100, -2**70,\n"
        "            1 + 2j, float('inf'), 'é')\n"
    )
    want = "(1, [2.5, None, True], {'k': b'x'}, {3}, frozenset({4}), 2**100, -2**70, 1+2j, "
    want += "float('inf'), 'é')"
    types = "['int', 'list', 'dict', 'set', 'frozenset', 'int', 'int', 'complex', 'float', 'str']"
    checks = [Check("f()", "f()", want), Check("types", "[type(v).__name__ for v in f()]", types)]
    checks.append(Check("true is not 1", "f()[1][2] is True", "True"))
    run = run_checks(code, checks)
    assert [r.passed for r in run.results] == [True, True, True], render(run)


def test_an_always_equal_int_crosses_as_a_plain_int() -> None:
    code = (
        "class Always(int):\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = int.__hash__\n\n"
        "def f(x):\n    return Always(0)\n"
    )
    run = run_checks(code, assert_checks(["assert f(1) == 3", "assert f(1) in [3]"]))
    assert run.passed == 0
    assert run.results[0].got == "0"


def test_the_code_cannot_find_the_expected_values() -> None:
    # the hidden value is nowhere in the code's process: not in its memory, stdin or files
    code = """
import gc, os, sys

def f():
    seen = [v for o in gc.get_objects() if isinstance(o, dict) for v in list(o.values())]
    frame = sys._getframe()
    while frame is not None:
        seen += list(frame.f_globals.values()) + list(frame.f_locals.values())
        frame = frame.f_back
    found = [v for v in seen if isinstance(v, str) and v.startswith("hidden-")]
    found += [line for line in sys.stdin if "hidden-" in line]
    for root, _, files in os.walk("/tmp"):
        for name in files:
            with open(os.path.join(root, name), errors="replace") as file:
                found += [line for line in file if "hidden-" in line]
    return found[0] if found else "nothing found"
"""
    run = run_checks(code, assert_checks(["want = 'hidden-7f3a'\nassert f() == want"]))
    assert run.passed == 0 and run.results[0].got == "'nothing found'"


def test_objects_of_the_codes_own_classes_work_through_handles() -> None:
    code = """
class Stack:
    def __init__(self):
        self.items = []
    def push(self, item):
        self.items.append(item)
    def pop(self):
        return self.items.pop()
    def __len__(self):
        return len(self.items)
    def __str__(self):
        return "Stack%s" % self.items

def evens(n):
    return (i for i in range(n) if i % 2 == 0)
"""
    tests = [
        "s = Stack()\ns.push(1)\ns.push(2)\nassert len(s) == 2\nassert s.pop() == 2",
        "s = Stack()\ns.push(5)\nassert str(s) == 'Stack[5]'\nassert s.items == [5]",
        "assert list(evens(5)) == [0, 2, 4]\nassert 2 in evens(5)",
        "assert Stack() == Stack()",  # an expected value of the code's own is refused
    ]
    run = run_checks(code, assert_checks(tests))
    assert [r.passed for r in run.results] == [True, True, True, True, True, True, False]
    assert run.results[-1].error == (
        "TypeError: the expected value is an object of the code (Stack), which it could make "
        "equal to anything: compare plain values instead"
    )


def test_exceptions_cross_as_pythons_own_types() -> None:
    code = (
        "class Oops(Exception):\n    pass\n\n"
        "def f(x):\n    if x < 0:\n        raise ValueError('negative')\n    raise Oops('mine')\n"
    )
    tests = [
        "try:\n    f(-1)\nexcept ValueError as exc:\n    assert 'negative' in str(exc)",
        "try:\n    f(1)\nexcept Exception:\n    pass",
        "f(1)",
    ]
    run = run_checks(code, assert_checks(tests))
    assert [r.passed for r in run.results] == [True, True, False]
    assert run.results[2].error is not None
    assert "line 7, in f" in run.results[2].error and "Oops: mine" in run.results[2].error


def test_the_tasks_helpers_win_over_the_codes() -> None:
    helpers = "def poly(x):\n    return x * x - 4\n"
    cheat = "def poly(x):\n    return 0\n\ndef root():\n    return 12345\n"
    honest = "def root():\n    return 2\n"
    checks = assert_checks(["assert poly(root()) == 0"])
    assert run_checks(cheat, checks, helpers=helpers).passed == 0
    assert run_checks(cheat, checks).passed == 1  # without them, the code's poly is used
    assert run_checks(honest, checks, helpers=helpers).passed == 1


def test_code_that_stops_answering_fails_the_checks_after_it_at_once() -> None:
    code = (
        "def f(x):\n    while True:\n        try:\n            while True:\n"
        "                pass\n        except BaseException:\n            pass\n"
    )
    limit = 2.0
    run = run_checks(code, [Check(f"f({i})", f"f({i})", "1") for i in range(5)], per_check_s=limit)
    assert run.results[0].error == "timed out after 2 s"
    for result in run.results[1:]:
        assert result.error == (
            "did not run: the code stopped answering after an earlier check timed out"
        )
    five_timeouts = 5 * (limit + GRACE_S)  # what waiting out each check would have taken
    assert run.sandbox.duration_s < five_timeouts
    assert run.code_process is not None and run.code_process.duration_s < five_timeouts


def test_garbage_on_the_answer_pipe_fails_the_checks() -> None:
    code = (
        "import os\n\ndef f():\n    for fd in map(int, os.listdir('/proc/self/fd')):\n"
        "        try:\n            os.write(fd, b'{not json\\n')\n        except OSError:\n"
        "            pass\n    return 1\n"
    )
    run = run_checks(code, [Check("f()", "f()", "1"), Check("f()", "f()", "1")])
    assert run.passed == 0
    assert run.results[1].error == (
        "did not finish: the code's process sent something that is not an answer"
    )


def test_the_codes_names_cannot_stand_in_for_what_the_tests_use() -> None:
    # each would pass its test in a single process, where the tests share the code's globals
    cheats = [
        (
            "def isinstance(*args):\n    return True\n\ndef f():\n    return None\n",
            "assert isinstance(f(), int)",
        ),
        ("import cmath as math\n\ndef f():\n    return -4\n", "assert math.sqrt(f()) == 2j"),
        ("def f(x):\n    raise StopIteration\n", "assert all(map(f, [1, 2]))"),
    ]
    for code, test in cheats:
        run = run_checks(code, assert_checks([test]))
        assert run.passed == 0, (code, render(run))


def test_a_function_cannot_be_passed_to_the_code() -> None:
    run = run_checks("def apply(g, x):\n    return g(x)\n", assert_checks(["apply(len, 'ab')"]))
    assert run.passed == 0
    assert run.results[0].error == (
        "TypeError: cannot pass a builtin_function_or_method to the code: only plain data and "
        "the code's own objects can cross"
    )


def test_subclasses_of_plain_types_cross_as_their_content() -> None:
    code = (
        "from collections import Counter, OrderedDict, namedtuple\n"
        "Point = namedtuple('Point', 'x y')\n\n"
        "def count(s):\n    return Counter(s)\n\n"
        "def point():\n    return Point(1, 2)\n\n"
        "def total(d):\n    return sum(d.values())\n"
    )
    tests = [
        "assert count('aab') == {'a': 2, 'b': 1}",
        "assert point() == (1, 2)",
        "from collections import Counter\nassert total(Counter('aab')) == 3",
    ]
    assert run_checks(code, assert_checks(tests)).passed == 3


def test_stop_iteration_from_a_call_is_an_error_not_none() -> None:
    run = run_checks(
        "def first(xs):\n    return next(iter(xs))\n",
        assert_checks(
            [
                "assert first([]) is None",
                "assert first([]) == None",
                "first([])",
            ]
        ),
    )
    assert run.passed == 0
    assert all("StopIteration" in (r.error or "") for r in run.results)


def test_an_entry_point_named_like_a_builtin_or_a_module_is_the_codes() -> None:
    code = "def sum(xs):\n    return 0\n\ndef bisect(xs, x):\n    return -1\n"
    checks = assert_checks(["assert sum([1, 2]) == 3", "assert bisect([1, 2], 2) == 1"])
    run = run_checks(code, checks, entry_points=["sum", "bisect"])
    assert [r.got for r in run.results] == ["0", "-1"]  # the code's, not Python's 3
    assert run_checks(code, checks).results[0].passed  # otherwise Python's own sum is used


def test_an_exception_that_needs_more_arguments_still_crosses_as_its_type() -> None:
    code = "def f():\n    return b'\\xff'.decode('utf-8')\n"
    test = "try:\n    f()\nexcept ValueError as exc:\n    assert 'utf-8' in str(exc)"
    assert run_checks(code, assert_checks([test])).passed == 1


def test_large_globals_and_answers_fail_with_a_clear_reason() -> None:
    code = "TABLE = [True] * 3_000_000\n\ndef f():\n    return list(range(3_000_000))\n"
    checks = [Check("len(TABLE)", "len(TABLE)", "3000000"), Check("f()", "f()", "[]")]
    checks.append(Check("f()", "f()", "[]"))
    # a generous clock: building 3 million items takes well under 3 s, but not on a loaded machine
    run = run_checks(code, checks, per_check_s=30.0)
    assert run.results[0].passed  # a large global stays in its process, as a handle
    assert run.results[1].error is not None
    assert "the answer is too large to check" in run.results[1].error
    assert run.results[2].error == run.results[1].error  # the code still answers


def test_a_prompts_classes_and_stubs_stay_the_codes() -> None:
    prompt = (
        "from typing import Optional\n\n"
        "class ListNode:\n    def __init__(self, val, next=None):\n"
        "        self.val, self.next = val, next\n\n"
        'def helper(node):\n    """Write me too."""\n\n'
        'def length(head: Optional[ListNode]) -> int:\n    """How many nodes."""\n'
    )
    assert task_helpers(prompt, "length") == "from typing import Optional"
    code = prompt + "\n\ndef helper(node):\n    return node.next\n\n"
    code += "def length(head):\n    return 0 if head is None else 1 + length(helper(head))\n"
    tests = ["assert length(ListNode(1, ListNode(2))) == 2", "assert length(None) == 0"]
    run = run_checks(code, assert_checks(tests), helpers=task_helpers(prompt, "length"))
    assert run.passed == 2, render(run)
