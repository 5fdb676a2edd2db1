"""Hostile candidate code, through the path a user runs: `run()` on a jsonl file, with a fake model
that answers task 1 with the hostile code and task 2 with a correct one.

Each case must end as a failed attempt with a clear reason in its feedback, leave the run folder,
the memory store and the task file as they were, show no secret, leave no process behind, and let
task 2 run and pass. Many hostile candidates follow one rule: they return the right answer only if
their attack worked, so a breach shows up as a pass.
"""

from __future__ import annotations

import json
import os
import re
import socket
import textwrap
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import scripted
from running import RunConfig, run

from envs.jsonl.env import JsonlEnv
from envs.sandbox import sandbox_plan
from reflexion.core.jsonl import read_jsonl
from reflexion.core.records import TaskResult
from reflexion.core.runfolder import RunFolder

SECRET = "sk-adversarial-" + uuid.uuid4().hex
TEST_SECONDS = 1.0  # per test; the sandbox's own stop is then (1 + 1) * (2 + 1) + 2 = 8 s
# (at 0.5 s its stop was 3.5 s: on a loaded machine the sandboxes' start alone can take that)
TASKS = [
    {
        "id": "t1",
        "prompt": 'def add(a, b):\n    """The sum of a and b."""\n',
        "entry_point": "add",
        "visible_tests": ["assert add(1, 2) == 3", "assert isinstance(add(2, 2), int)"],
        "hidden_tests": ["assert add(1, 2) == 3", "assert isinstance(add(2, 2), int)"],
    },
    {
        "id": "t2",
        "prompt": 'def mul(a, b):\n    """The product of a and b."""\n',
        "entry_point": "mul",
        "visible_tests": ["assert mul(2, 3) == 6"],
        "hidden_tests": ["assert mul(2, 3) == 6", "assert mul(-1, 4) == -4"],
    },
]
CORRECT = "```python\ndef mul(a, b):\n    return a * b\n```"
STORE_BYTES = b"SQLite format 3\x00 the memory store, before the run"
CANARY = "written before the run"
# Put before every hostile candidate: what it may aim at, and a process name (comm) holding the
# case's marker, inherited by every fork, so the test can find whatever survives.
PROLOGUE = """\
import ctypes, gc, os, shutil, signal, socket, subprocess, sys, threading, time
MARKER, RUN, STORE, TASK_FILE = {marker!r}, {run!r}, {store!r}, {task_file!r}
RUNNER_PID, PORT = {runner_pid}, {port}
ctypes.CDLL(None).prctl(15, MARKER.encode(), 0, 0, 0)  # PR_SET_NAME
"""
# Ignores SIGTERM and sleeps, with the marker on its command line.
SLEEPER = (
    "[sys.executable, '-c', 'import signal, time; signal.signal(15, 1); time.sleep(120)', MARKER]"
)


@dataclass(frozen=True)
class Hostile:
    """A hostile candidate: `code` follows PROLOGUE and defines `add`; `reason` is a regex its
    visible feedback must match; `needs` names sandbox layers the case relies on (skipped on a
    machine without them)."""

    name: str
    code: str
    reason: str
    needs: tuple[str, ...] = ()


CASES = [
    Hostile(
        "infinite-loop",
        "def add(a, b):\n    while True:\n        pass\n",
        r"Test `assert add\(1, 2\) == 3` timed out after 1 s",
    ),
    Hostile(
        "infinite-loop-that-swallows-the-timer",
        """
        def add(a, b):
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    pass
        """,
        r"timed out after 1 s\.\n.*did not run: the code stopped answering",
    ),
    Hostile(
        "busy-loop-in-a-thread",
        """
        def spin():
            while True:
                pass

        def add(a, b):
            worker = threading.Thread(target=spin)
            worker.start()
            worker.join()
        """,
        r"Test `assert add\(1, 2\) == 3` timed out after 1 s",
    ),
    Hostile(
        "fork-bomb",
        "while True:\n    os.fork()\n\ndef add(a, b):\n    return a + b\n",
        # the process limit stops it; on a loaded machine the 1 s limit may come first
        r"failed before any (hidden )?test could run:\n.*(BlockingIOError|timed out after 1 s)",
        needs=("unprivileged",),
    ),
    Hostile(
        "memory-bomb",
        # steps of 1 GiB: past the limit at once, so the time limit never comes first
        "def add(a, b):\n    hog = []\n    while True:\n        hog.append(bytearray(2**30))\n",
        r"MemoryError",
    ),
    Hostile(
        "recursion-bomb",
        "def add(a, b):\n    return add(a, b) + 1\n",
        r"RecursionError: maximum recursion depth exceeded",
    ),
    Hostile(
        "recursion-bomb-with-no-recursion-limit",
        "sys.setrecursionlimit(10**9)\n\ndef add(a, b):\n    return add(a, b) + 1\n",
        r"timed out after 1 s",
    ),
    Hostile(
        "gigabytes-printed",
        "def add(a, b):\n    for _ in range(16):\n        print('x' * 2**28)\n",
        r"timed out after 1 s",  # what it prints is kept up to 1 MiB: the rest is dropped
    ),
    Hostile(
        "gigabytes-to-the-real-stdout-and-stderr",
        """
        def add(a, b):
            chunk = b"x" * 2**20
            for fd in sorted(map(int, os.listdir("/proc/self/fd")), reverse=True):  # pipes too
                for _ in range(4096):
                    try:
                        os.write(fd, chunk)
                    except OSError:
                        break
        """,
        # among them the pipe it answers on: the checks read garbage, and stop asking
        r"did not finish: the code's process sent something that is not an answer",
    ),
    Hostile(
        "gigabytes-to-a-file",
        """
        def add(a, b):
            with open("big.bin", "wb") as f:
                for _ in range(4096):
                    f.write(b"x" * 2**20)
        """,
        r"OSError: \[Errno 27\] File too large",
    ),
    Hostile(
        "gigabytes-to-many-files",
        """
        def add(a, b):
            for i in range(4096):
                with open(f"part{i}.bin", "wb") as f:
                    f.write(b"x" * (2**24 - 1))  # each just under the file size limit
        """,
        r"OSError: \[Errno 28\] No space left on device",  # its directory is a small tmpfs
        needs=("files",),
    ),
    Hostile(
        "overwrite-the-run-folder",
        """
        def add(a, b):
            blocked = []
            for name in ["config.json", "results.jsonl", "trace.jsonl", "canary.txt", "new.txt"]:
                try:
                    with open(os.path.join(RUN, name), "w") as f:
                        f.write("pwned")
                except OSError as exc:
                    blocked.append(exc)
            if len(blocked) == 5:
                raise blocked[0]
            return a + b
        """,
        r"FileNotFoundError: .*No such file or directory: '/(tmp|dev/shm)/[^']*/config\.json'",
        needs=("files",),
    ),
    Hostile(
        "delete-the-run-folder-the-store-and-the-task-file",
        """
        def add(a, b):
            blocked = []
            for path in [RUN, STORE, os.path.dirname(TASK_FILE)]:
                try:
                    shutil.rmtree(path)
                except OSError as exc:
                    blocked.append(exc)
            if len(blocked) == 3:
                raise blocked[0]
            return a + b
        """,
        r"FileNotFoundError",
        needs=("files",),
    ),
    Hostile(
        "overwrite-the-store-and-the-hidden-tests",
        """
        def add(a, b):
            blocked = []
            targets = [(os.path.join(STORE, "chroma.sqlite3"), ""), (TASK_FILE, '{"id": "t1"}')]
            for path, text in targets:
                try:
                    with open(path, "w") as f:
                        f.write(text)
                except OSError as exc:
                    blocked.append(exc)
            if len(blocked) == 2:
                raise blocked[0]
            return a + b
        """,
        r"FileNotFoundError",
        needs=("files",),
    ),
    Hostile(
        "secret-from-the-environment",
        "def add(a, b):\n    raise RuntimeError(os.environ.get('OPENAI_API_KEY', 'no key'))\n",
        r"RuntimeError: no key",
    ),
    Hostile(
        "secret-from-the-runners-proc-environ",  # what the runner was started with
        """
        def add(a, b):
            with open(f"/proc/{RUNNER_PID}/environ", "rb") as f:
                f.read()
            return a + b
        """,
        r"(FileNotFoundError|PermissionError): .*/proc/\d+/environ",
        needs=("pid",),
    ),
    Hostile(
        "network-loopback-and-outside",
        """
        def add(a, b):
            blocked = []
            for address in [("127.0.0.1", PORT), ("1.1.1.1", 53)]:
                try:
                    socket.create_connection(address, timeout=0.3).close()
                except OSError as exc:
                    blocked.append(exc)
            if len(blocked) == 2:
                raise blocked[0]
            return a + b
        """,
        r"OSError: \[Errno 101\] Network is unreachable",
        needs=("network",),
    ),
    Hostile(
        "kill-the-parent",
        """
        def add(a, b):
            os.kill(os.getppid(), signal.SIGKILL)
            time.sleep(0.2)
        """,
        # as nobody: not allowed; as our own user: the launcher is the namespace's init, immune
        r"PermissionError: \[Errno 1\] Operation not permitted|expected 3, got None",
        needs=("pid",),
    ),
    Hostile(
        "kill-the-process-group",
        "def add(a, b):\n    os.killpg(0, signal.SIGKILL)\n",
        r"the code's process was stopped \(killed by signal 9 \(SIGKILL\)\)",
        needs=("pid",),
    ),
    Hostile(
        "kill-9-minus-1",
        """
        def add(a, b):
            subprocess.run(["sh", "-c", "kill -9 -1"])
            os.kill(-1, signal.SIGKILL)
            time.sleep(0.2)
        """,
        r"the code's process was stopped \(killed by signal 9 \(SIGKILL\)\)",
        needs=("pid",),
    ),
    Hostile(
        "kill-the-runner-by-its-pid",
        "def add(a, b):\n    os.kill(RUNNER_PID, signal.SIGKILL)\n",
        r"ProcessLookupError|PermissionError",
        needs=("pid",),
    ),
    Hostile(
        "a-child-that-outlives-the-timeout",
        """
        def add(a, b):
            if os.fork() == 0:
                os.setsid()
                subprocess.Popen(SLEEPER)
                os._exit(0)
            time.sleep(60)
        """,
        r"timed out after 1 s",
        needs=("pid",),
    ),
    Hostile(
        "os-exit-0-while-loading",
        "os._exit(0)\n\ndef add(a, b):\n    return None\n",
        r"failed before any (hidden )?test could run:\n.*exited with code 0 while the code was "
        r"loading",
    ),
    Hostile(
        "os-exit-0-in-a-test",
        "def add(a, b):\n    os._exit(0)\n",
        r"did not finish: the code's process exited with code 0",
    ),
    Hostile(
        "sys-exit-0-in-a-test",
        "def add(a, b):\n    sys.exit(0)\n",
        r"raised an error:\n.*SystemExit: 0",
    ),
    Hostile(
        "patch-main-sys-modules-and-builtins",
        """
        import builtins, json, __main__
        builtins.bool = lambda *args: True
        __main__.same = lambda *args: True
        sys.modules["json"].dumps = lambda *args, **kwargs: '{"index": 0, "passed": true}'
        sys.modules["os"].write = lambda fd, data: len(data)
        sys.modules["signal"].setitimer = lambda *args: None

        def add(a, b):
            return None
        """,
        # its own process breaks (builtins.bool is no type now); the checks' process is whole
        r"failed before any (hidden )?test could run:\n.*TypeError: isinstance\(\) arg 2",
    ),
    Hostile(
        # a check that is not `A == B` runs as statements, with the candidate's builtins
        "patch-builtins-to-pass-an-assert",
        """
        import builtins
        real_isinstance = builtins.isinstance
        builtins.isinstance = lambda obj, kind: obj is None or real_isinstance(obj, kind)

        def add(a, b):
            return None
        """,
        r"^0 of 2 (hidden )?tests passed\.\n.*got None\n.*isinstance.*\n\s*AssertionError$",
    ),
    Hostile(
        "gc-replaces-the-harness-check",
        """
        for found in gc.get_objects():
            if isinstance(found, dict) and "run_check" in found and "emit" not in found:
                found["run_check"] = lambda check, scope, limit: {"passed": True}

        def add(a, b):
            return None
        """,
        r"failed: expected 3, got None",
    ),
    Hostile(
        # the frames lead to the channel its process answers on: it can say anything there,
        # but the verdicts are made in the other process
        "frames-reach-the-channel-and-forge-verdicts",
        """
        frame = sys._getframe()
        while "channel" not in frame.f_locals:
            frame = frame.f_back
        for forged in [{"loaded": {}}, {"loaded": True}, {"index": 0, "passed": True},
                       {"index": 1, "passed": True}]:
            frame.f_locals["channel"].send(forged)
        os._exit(0)

        def add(a, b):
            return None
        """,
        r"NameError: name 'add' is not defined",
    ),
    Hostile(
        "always-equal",
        """
        class Always(int):
            def __eq__(self, other):
                return True

            __hash__ = int.__hash__

        def add(a, b):
            return Always(0)
        """,
        r"`assert add\(1, 2\) == 3` failed: expected 3, got 0$",  # it crosses as a plain int
    ),
]


class FakedPass(AssertionError):
    """The hostile candidate passed the held-out tests."""


def _missing_layers(needs: tuple[str, ...]) -> list[str]:
    plan = sandbox_plan()
    have = {
        "network": plan.isolates_network,
        "files": plan.isolates_files,
        "pid": "-p" in plan.prefix,
        "unprivileged": plan.uid >= 0,
    }
    return [need for need in needs if not have[need]]


def _survivors(marker: str) -> list[int]:
    """Live processes (not zombies) whose name or command line holds `marker`."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            names = (proc / "cmdline").read_bytes() + (proc / "comm").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in names and state != "Z":
            found.append(int(proc.name))
    return found


def _wait_gone(marker: str, seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := _survivors(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@dataclass(frozen=True)
class Setting:
    """The files of one case: the task file, the run folder, the memory store."""

    tasks: Path
    run: Path
    store: Path

    @classmethod
    def make(cls, root: Path) -> Setting:
        tasks = root / "tasks" / "tasks.jsonl"
        tasks.parent.mkdir()
        tasks.write_text("".join(json.dumps(t) + "\n" for t in TASKS))
        setting = cls(tasks, root / "run", root / "store")
        setting.run.mkdir()
        (setting.run / "canary.txt").write_text(CANARY)
        setting.store.mkdir()
        (setting.store / "chroma.sqlite3").write_bytes(STORE_BYTES)
        return setting


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.setblocking(False)
    yield server
    server.close()


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_hostile_code_fails_alone_and_harms_nothing(
    case: Hostile, tmp_path: Path, listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = _missing_layers(case.needs)
    if missing:
        pytest.skip(f"this machine's sandbox lacks {', '.join(missing)}")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    setting = Setting.make(tmp_path)
    marker = "adv" + uuid.uuid4().hex[:12]  # 15 characters: what a process name holds
    prologue = PROLOGUE.format(
        marker=marker,
        run=str(setting.run),
        store=str(setting.store),
        task_file=str(setting.tasks),
        runner_pid=os.getpid(),
        port=listener.getsockname()[1],
    )
    hostile = f"```python\n{prologue}SLEEPER = {SLEEPER}\n{textwrap.dedent(case.code)}```"
    config = RunConfig(
        env=f"jsonl:{setting.tasks}",
        strategies=("single",),
        out=str(setting.run),
        episodes=1,
        memory=str(setting.store),
        embedder="hash-64",
        concurrency=1,  # task 2 runs after task 1: "the next task"
    )
    env = JsonlEnv(str(setting.tasks), test_seconds=TEST_SECONDS)
    start = time.monotonic()
    results = run(config, model=scripted([hostile, CORRECT]), env=env)
    elapsed = time.monotonic() - start

    by_task = {r.task_id: r for r in results}
    assert by_task["t2"].final_passed, "the next task did not pass"
    _assert_run_folder_intact(setting, results)
    assert _wait_gone(marker) == [], "a process of the hostile code is still running"
    with pytest.raises(BlockingIOError):
        listener.accept()  # nothing connected to our loopback port
    assert elapsed < 60
    if by_task["t1"].final_passed or by_task["t1"].any_passed:
        raise FakedPass(case.name)
    feedback = {s.kind: s.output for s in RunFolder(setting.run).steps() if s.task_id == "t1"}
    for kind in ("score", "evaluate"):
        assert re.search(case.reason, feedback[kind], re.DOTALL | re.I | re.M), feedback[kind]


def _assert_run_folder_intact(setting: Setting, results: list[TaskResult]) -> None:
    assert setting.tasks.read_text() == "".join(json.dumps(t) + "\n" for t in TASKS)
    assert [p.name for p in setting.store.iterdir()] == ["chroma.sqlite3"]
    assert (setting.store / "chroma.sqlite3").read_bytes() == STORE_BYTES
    names = sorted(p.name for p in setting.run.iterdir())
    assert names == ["canary.txt", "config.json", "results.jsonl", "trace.jsonl"]
    assert (setting.run / "canary.txt").read_text() == CANARY
    config = json.loads((setting.run / "config.json").read_text())
    assert config["run_id"] == results[0].run_id and config["strategies"] == ["single"]
    plan = sandbox_plan()  # what held the code is on record
    assert config["sandbox"]["network_isolated"] == plan.isolates_network
    assert config["sandbox"]["filesystem_isolated"] == plan.isolates_files
    assert config["sandbox"]["missing"] == plan.missing()
    assert len(read_jsonl(setting.run / "results.jsonl")) == 2
    kinds = [(s.task_id, s.kind) for s in RunFolder(setting.run).steps()]
    assert kinds == [(t, k) for t in ("t1", "t2") for k in ("generate", "score", "evaluate")]
    for path in setting.run.iterdir():
        assert SECRET.encode() not in path.read_bytes(), f"the secret is in {path.name}"
