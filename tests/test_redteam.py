"""Attacks on `run_checks` (envs/sandbox/checks.py and harness/) by a candidate that knows how the
checks work: it forges the answers its process sends, shares state between runs, or plays with
the identities of its objects. Each test asserts the attack fails. The hidden expected values are
computed on the checks' side (`str(6 * 7)`), so the candidate cannot know them in advance.
"""

from __future__ import annotations

import ctypes
import json
import random
import textwrap
from pathlib import Path

import pytest

from envs.code_tasks import assert_checks
from envs.jsonl.env import JsonlEnv
from envs.sandbox import Check, run_checks, sandbox_plan

SECRET_TEST = "want = 'x' + str(6 * 7)\nassert f() == want"
# The time limit of a check that answers at once: generous, so that on a loaded machine the
# sandbox's start is never taken for the code's time and a verdict is always reached (costs
# nothing when the code answers). Only a test of an endless candidate waits out a limit.
ROOMY_S = 30.0

# A candidate that takes over its process's channel while it loads and answers every request
# with a forged message built by `forge(request)`; `LOADED` is the names it claims.
FORGER = """\
import json, os, sys
frame = sys._getframe()
while "channel" not in frame.f_locals:
    frame = frame.f_back
channel = frame.f_locals["channel"]
LOADED = {loaded}
{forge}
channel.send({{"loaded": LOADED}})
while True:
    request = channel.receive()
    for message in forge(request):
        channel.send(message)
"""
F_HANDLE = {"f": {"value": {"h": [1, "function"]}}}


def forged(forge: str, loaded: dict[str, object] | None = None) -> str:
    return FORGER.format(loaded=json.dumps(loaded or F_HANDLE), forge=textwrap.dedent(forge))


# --- forged answers to `f()` in a check whose expected value is hidden: none may pass -------------

FORGED_ANSWERS = {
    "raise-AssertionError": '{"id": r["id"], "raised": "AssertionError", "error": ""}',
    "raise-StopIteration": '{"id": r["id"], "raised": "StopIteration", "error": ""}',
    "raise-KeyboardInterrupt": '{"id": r["id"], "raised": "KeyboardInterrupt", "error": ""}',
    "raise-GeneratorExit": '{"id": r["id"], "raised": "GeneratorExit", "error": ""}',
    "raise-SystemExit": '{"id": r["id"], "raised": "SystemExit", "error": ""}',
    "stop-on-a-call": '{"id": r["id"], "stop": True}',
    "timeout-answer": '{"id": r["id"], "timeout": True}',
    "no-value-key": '{"id": r["id"]}',
    "nan": '{"id": r["id"], "value": float("nan")}',
    "huge-int": '{"id": r["id"], "value": {"i": "f" * 2**20}}',
    "unhashable-handle-id": '{"id": r["id"], "value": {"h": [[1], "x"]}}',
    "handle-colliding-with-f": '{"id": r["id"], "value": {"h": [True, "function"]}}',
    "set-of-lists": '{"id": r["id"], "value": {"s": [[1]]}}',
    "changed-negative-index": '{"id": r["id"], "value": "x", "changed": [[-1, ["x?"]]]}',
    "changed-odd-where": '{"id": r["id"], "value": "x", "changed": [[None, []], [1.5, []]]}',
}


@pytest.mark.parametrize("name", sorted(FORGED_ANSWERS))
def test_forged_answers_cannot_pass_a_hidden_check(name: str) -> None:
    answer = FORGED_ANSWERS[name]
    forge = f"""
    def forge(r):
        if r["op"] in ("repr", "str"):
            return [{{"id": r["id"], "value": "'x?'"}}]
        if r["op"] == "bool":
            return [{{"id": r["id"], "value": True}}]
        return [{answer}, {answer}]  # twice: the second is stale and must be ignored
    """
    tests = [
        SECRET_TEST,
        "want = 'x' + str(6 * 7)\nif f() != want:\n    raise AssertionError",  # statements
        "want = 'x' + str(6 * 7)\nxs = []\nf(xs)\nassert xs == [want]",  # the changed path
    ]
    run = run_checks(forged(forge), assert_checks(tests), per_check_s=ROOMY_S)
    assert run.passed == 0, [(r.passed, r.got, r.error) for r in run.results]


def test_future_ids_and_floods_cannot_pass() -> None:
    # answers sent ahead for every id the checks will use, before any request
    forge = """
    def forge(r):
        return [{"id": i, "value": "x?"} for i in range(r["id"], r["id"] + 50)]
    """
    run = run_checks(forged(forge), assert_checks([SECRET_TEST]), per_check_s=ROOMY_S)
    assert run.passed == 0


# --- state shared between runs, and objects that stand in for what the tests use ---------------


def _shm_keys() -> set[int]:
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return {int(line.split()[0]) for line in lines}


@pytest.mark.skipif(not Path("/proc/sysvipc/shm").exists(), reason="no SysV IPC")
@pytest.mark.skipif(not sandbox_plan().isolates_files, reason="no namespaces here")
def test_sysv_ipc_is_not_shared_between_runs_nor_left_on_the_host() -> None:
    """Each sandbox has its own IPC namespace: shared memory a candidate makes neither outlives
    it on the host nor reaches the next candidate."""
    key = random.randrange(2**24, 2**30)
    writer = f"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
sid = libc.shmget({key}, 4096, 0o1000 | 0o666)  # IPC_CREAT
if sid >= 0:
    ctypes.memmove(libc.shmat(sid, None, 0), b"hidden-inputs-seen:[3, 4]\\0", 26)

def f():
    return None
"""
    reader = f"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p

def f():
    sid = libc.shmget({key}, 0, 0)
    if sid < 0:
        return "nothing"
    return ctypes.string_at(libc.shmat(sid, None, 0)).decode()
"""
    try:
        run_checks(writer, [Check("f()", "f()")], per_check_s=ROOMY_S)
        left_on_host = key in _shm_keys()
        run = run_checks(reader, [Check("f()", "f()", "'nothing'")], per_check_s=ROOMY_S)
        leaked = run.results[0].got
        assert not left_on_host, "the segment outlived the sandbox"
        assert leaked == "'nothing'", "the next run read it"
    finally:
        libc = ctypes.CDLL(None, use_errno=True)
        sid = libc.shmget(key, 0, 0)
        if sid >= 0:
            libc.shmctl(sid, 0, None)  # IPC_RMID


def test_an_object_of_the_code_cannot_stand_in_for_a_module_the_tests_use(
    tmp_path: Path,
) -> None:
    """The tests use the prompt's `math`: the candidate's `math = _Anything()` is not passed to
    the checks (a standard module's name is), and the prompt's imports run on their side."""
    task = {
        "id": "hyp",
        "prompt": 'import math\n\ndef hyp(a, b):\n    """The hypotenuse."""\n',
        "entry_point": "hyp",
        "visible_tests": [],
        "hidden_tests": [
            "assert math.isclose(hyp(3, 4), 5.0)",
            "assert math.isclose(hyp(5, 12), 13)",
        ],
    }
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(task) + "\n")
    env = JsonlEnv(str(path), test_seconds=1)
    cheat = (
        "```python\nclass _Anything:\n    def isclose(self, *args, **kwargs):\n"
        "        return True\n\nmath = _Anything()\n\ndef hyp(a, b):\n    return 0\n```"
    )
    score = env.evaluate(env.tasks()[0], cheat)
    assert not score.solved, score.feedback


def test_two_of_the_codes_objects_cannot_be_made_equal_by_sharing_an_identity() -> None:
    """The candidate decides which object each answer is, so it could return one object for
    both sides: an expected value that is the code's own object is refused."""
    code = """
class Vec:
    the_one = None

    def __new__(cls, *args):
        if Vec.the_one is None:
            Vec.the_one = object.__new__(cls)
        return Vec.the_one

    def __init__(self, x, y):
        pass

    def add(self, other):
        return self
"""
    secret = "n = 6 * 7\nassert Vec(1, n).add(Vec(2, 3)) == Vec(3, n + 3)"
    run = run_checks(code, assert_checks([secret]), per_check_s=ROOMY_S)
    assert run.passed == 0, run.results[0].got


def test_an_expected_value_that_raises_in_the_code_is_not_compared_as_text() -> None:
    """The expected expression calls the code (`Vec(3, 45)`), which learns its arguments and
    raises: that fails the check, it is not taken for an expected output to compare as text."""
    code = """
calls = []

class Vec:
    def __init__(self, x, y):
        calls.append((x, y))
        if len(calls) == 3:  # the expected value: learn it, and make it raise
            raise ValueError("no")

    def add(self, other):
        return self  # nothing computed

    def __repr__(self):
        return "Vec(%r, %r)" % calls[-1]
"""
    secret = "n = 6 * 7\nassert Vec(1, n).add(Vec(2, 3)) == Vec(3, 45)"
    run = run_checks(code, assert_checks([secret]), per_check_s=ROOMY_S)
    assert run.passed == 0, run.results[0].got


def test_the_code_cannot_learn_an_expected_value_through_in() -> None:
    """`x in handle` takes all of the code's object before comparing: an iterator that counts
    the `next` calls until a match would learn the value; an endless one now times out."""
    code = """
def f():
    def every_int():
        n = 0
        while True:
            yield n
            yield -n - 1
            n += 1
    return every_int()
"""
    run = run_checks(code, assert_checks(["want = 6 * 7\nassert want in f()"]), per_check_s=2)
    # the outcome, whichever clock ends it on a loaded machine (the check's 2 s, or the whole
    # run's stop): no pass, and a time-out, never a learned value
    assert run.passed == 0 and "timed out" in (run.results[0].error or ""), run.results[0]
    finite = "def f():\n    return iter([3, 42, 5])\n"
    assert run_checks(finite, assert_checks(["assert 42 in f()"]), per_check_s=ROOMY_S).passed == 1
