"""The sandbox's limits hold: timeout (whole process group), memory, CPU, no network, no secrets,
a throw-away working directory, no writes to our files, bounded output, bounded processes."""

from __future__ import annotations

import socket
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from envs.sandbox import run_python


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper does not count)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def _wait_dead(pid: int, seconds: float = 2.0) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not _alive(pid)


def test_runs_code_and_collects_output() -> None:
    result = run_python("import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)")
    assert (result.returncode, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert result.reason == "exit code 3" and not result.timed_out


def test_timeout_kills_the_process_group_including_a_child() -> None:
    code = textwrap.dedent(
        """
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print(child.pid, flush=True)
        time.sleep(60)
        """
    )
    start = time.monotonic()
    result = run_python(code, timeout_s=1.5)
    assert result.timed_out and result.reason == "timed out after 1.5 s"
    assert time.monotonic() - start < 5
    assert _wait_dead(int(result.stdout.split()[0]))


def test_a_child_left_behind_after_a_normal_exit_is_killed_too() -> None:
    code = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(child.pid)\n"
    )
    start = time.monotonic()
    result = run_python(code, timeout_s=20)
    assert result.ok and time.monotonic() - start < 5  # no wait for the child's 60 s
    assert _wait_dead(int(result.stdout.split()[0]))


def test_memory_limit() -> None:
    result = run_python("block = bytearray(2 * 1024**3)\nprint('allocated')", memory_mb=256)
    assert result.returncode != 0 and "allocated" not in result.stdout
    assert result.reason == "memory limit"


def test_cpu_limit() -> None:
    result = run_python("while True:\n    pass", timeout_s=20, cpu_s=1)
    assert not result.timed_out and result.reason == "CPU time limit"
    assert result.duration_s < 10


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


def test_working_directory_is_home_and_is_removed() -> None:
    code = "import os\nopen('scratch.txt', 'w').write('x')\nprint(os.getcwd(), os.environ['HOME'])"
    result = run_python(code)
    assert result.ok, result.stderr
    cwd, home = result.stdout.split()
    assert cwd == home and not Path(cwd).exists()


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
    assert result.stdout.count("refused PermissionError") == 2
    assert target.read_text() == "original" and not (tmp_path / "new.txt").exists()


def test_large_output_is_cut_without_hanging() -> None:
    start = time.monotonic()
    result = run_python("import sys\nsys.stdout.write('x' * 5_000_000 + 'END')", max_output=10_000)
    assert result.ok and time.monotonic() - start < 10
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
