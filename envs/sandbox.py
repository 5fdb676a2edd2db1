"""Run untrusted Python in a separate, locked-down process, never in ours.

    >>> result = run_python("print(6 * 7)", timeout_s=5)
    >>> result.returncode, result.stdout
    (0, '42\\n')

What holds the child (see `sandbox_plan` for what this machine allows; a warning says what not):
- a wall-clock timeout, after which the whole process group is killed (SIGKILL);
- a PID namespace: when the run ends, every process it started ends with it, even one that
  left the process group;
- rlimits: address space (memory), CPU seconds, file size (also caps stdout/stderr), no core
  files, and, when the child runs unprivileged, a process count (a fork bomb stops there);
- an empty network namespace;
- a mount namespace where empty tmpfs cover every place our data can live (/tmp, /root,
  /home, /work, the venv, our cwd, ...): it sees the system, and its own directory only;
- when we are root: the user `nobody`, so it cannot write our files and RLIMIT_NPROC binds
  (the kernel exempts root from it);
- a throw-away working directory as HOME and cwd, removed afterwards;
- an environment built from scratch (PATH, LANG, PYTHONHASHSEED, HOME): no API keys pass.

Safe to call from several threads at once: no preexec_fn (which may deadlock a forking
multi-threaded parent); a small launcher in the child mounts, sets the limits and drops
privileges.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from envs.sandbox_plan import Limits, Plan, candidate_plans, command, hidden_paths

MAX_PROCESSES = 64  # per uid, so shared by concurrent sandboxes
MAX_FILE_BYTES = 16 * 2**20  # also bounds what the child can write to stdout and stderr
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
INSIDE = "/tmp/sandbox"  # the child's working directory, when it has a mount namespace


@dataclass(frozen=True)
class SandboxResult:
    """What a sandboxed run did. `reason` says why it ended, in a few words."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float
    reason: str
    network_isolated: bool  # ran in an empty network namespace
    unprivileged: bool  # ran as nobody (we were root)
    filesystem_isolated: bool = False  # saw only the system, not our files (mount namespace)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def run_python(
    source: str,
    *,
    timeout_s: float = 10,
    memory_mb: int = 512,
    cpu_s: int | None = None,
    max_output: int = 64_000,
    stdin: str = "",
    hide: Sequence[str] = (),
) -> SandboxResult:
    """Run `source` as a script in a sandboxed child process and collect what it did.

    `cpu_s` (CPU seconds) defaults to the timeout rounded up plus one. stdout and stderr are
    each cut to `max_output` characters, keeping the start and the end (where a traceback is).
    `stdin` is what the child reads on its standard input; `hide` names more directories
    (a task file's, say) to hide from it, besides our home, data and working directories.

        >>> run_python("while True: pass", timeout_s=1).reason
        'timed out after 1 s'
    """
    if timeout_s <= 0 or memory_mb < 64 or max_output < 100:
        msg = (
            f"bad sandbox limits: timeout_s={timeout_s} (> 0), memory_mb={memory_mb} (>= 64), "
            f"max_output={max_output} (>= 100)"
        )
        raise ValueError(msg)
    plan = sandbox_plan()
    cpu = cpu_s if cpu_s is not None else math.ceil(timeout_s) + 1
    limits = Limits(memory_mb * 2**20, cpu, MAX_FILE_BYTES, MAX_PROCESSES)
    hidden = hidden_paths([*plan.hidden, *hide]) if plan.isolates_files else ()
    start = time.monotonic()
    run = _execute(plan, limits, hidden, source, stdin, timeout_s, max_output)
    returncode, timed_out, stdout, stderr = run
    duration = time.monotonic() - start
    reason = _reason(returncode, timed_out, timeout_s, stderr)
    return SandboxResult(
        returncode, stdout, stderr, timed_out, duration, reason,
        plan.isolates_network, plan.uid >= 0, plan.isolates_files,
    )  # fmt: skip


def _execute(  # noqa: PLR0913
    plan: Plan,
    limits: Limits,
    hidden: Sequence[str],
    source: str,
    stdin: str,
    timeout_s: float,
    max_output: int,
) -> tuple[int, bool, str, str]:
    """Write the code to a throw-away directory, run it there, and remove the directory."""
    workdir = tempfile.mkdtemp(prefix="reflexion-sandbox-")
    try:
        _write_code(workdir, source, plan.uid)
        home = INSIDE if plan.isolates_files else workdir
        env = {"PATH": SAFE_PATH, "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "HOME": home}
        with contextlib.ExitStack() as stack:
            inp, out, err = (stack.enter_context(tempfile.TemporaryFile()) for _ in range(3))
            inp.write(stdin.encode("utf-8"))
            inp.seek(0)
            files = (inp, out, err)
            returncode, timed_out = _run(plan, limits, hidden, workdir, env, files, timeout_s)
            return returncode, timed_out, _read(out, max_output), _read(err, max_output)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _write_code(workdir: str, source: str, uid: int) -> None:
    path = os.path.join(workdir, "main.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    if uid >= 0:
        # subtle: the child runs as nobody; it may write only here (HOME and cwd).
        os.chown(workdir, uid, uid)
        os.chown(path, uid, uid)


def _run(
    plan: Plan,
    limits: Limits,
    hidden: Sequence[str],
    workdir: str,
    env: dict[str, str],
    files: tuple[IO[bytes], IO[bytes], IO[bytes]],
    timeout_s: float,
) -> tuple[int, bool]:
    """Run to exit or timeout, then kill whatever is left of the process group."""
    # the launcher reports the code's wait status here: with a PID namespace it is the
    # namespace's init, which cannot re-raise a signal on itself to pass it on
    status_r, status_w = os.pipe()
    try:
        # Output goes to unlinked files, not pipes: no reader thread, no deadlock on a full
        # pipe, and a background child that keeps the handle open cannot make us wait.
        proc = subprocess.Popen(
            command(plan, limits, hidden, status_w, INSIDE),
            cwd=workdir,
            env=env,
            stdin=files[0],
            stdout=files[1],
            stderr=files[2],
            start_new_session=True,
            pass_fds=(status_w,),
        )
        os.close(status_w)
        status_w = -1
        try:
            timed_out = not _wait_exit(proc.pid, timeout_s)
        finally:
            # subtle: the leader is not reaped yet (WNOWAIT), so its pid still names our
            # process group and cannot have been reused by an unrelated process.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            returncode = proc.wait()
        reported = os.read(status_r, 32)
    finally:
        for fd in (status_r, status_w):
            if fd >= 0:
                os.close(fd)
    if reported.isdigit():
        returncode = os.waitstatus_to_exitcode(int(reported))
    return returncode, timed_out


def _wait_exit(pid: int, timeout_s: float) -> bool:
    """Wait until `pid` exits, without reaping it; False on timeout."""
    deadline = time.monotonic() + timeout_s
    delay = 0.0005
    while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, 0.01)
    return True


def _read(f: IO[bytes], limit: int) -> str:
    """The file's text, cut to about `limit` characters, keeping its start and end."""
    size = f.seek(0, os.SEEK_END)
    f.seek(0)
    if size <= limit:
        return f.read().decode("utf-8", errors="replace")
    half = limit // 2
    head = f.read(half).decode("utf-8", errors="replace")
    f.seek(size - half)
    tail = f.read(half).decode("utf-8", errors="replace")
    return f"{head}\n[... {size - 2 * half} bytes cut ...]\n{tail}"


def _reason(returncode: int, timed_out: bool, timeout_s: float, stderr: str) -> str:
    if timed_out:
        return f"timed out after {timeout_s:g} s"
    if returncode == 0:
        return "ok"
    if returncode < 0:
        sig = -returncode
        if sig == signal.SIGXCPU:
            return "CPU time limit"
        if sig == signal.SIGXFSZ:
            return "file size limit"
        try:
            return f"killed by signal {sig} ({signal.Signals(sig).name})"
        except ValueError:
            return f"killed by signal {sig}"
    if "MemoryError" in stderr[-2000:]:
        return "memory limit"
    return f"exit code {returncode}"


@functools.cache  # two threads racing here both probe; the answers are the same
def sandbox_plan() -> Plan:
    """The strongest way this machine can hold a child that still runs Python (probed once
    per process, by running a small program through each candidate plan in turn); one warning
    names what is missing."""
    fallback = Plan((), sys.executable, -1)
    for plan in candidate_plans():
        if _works(plan):
            break
    else:
        plan = fallback
    missing = plan.missing()
    if missing:
        warnings.warn(f"sandbox: {missing}", RuntimeWarning, stacklevel=2)
    return plan


def _works(plan: Plan) -> bool:
    probe = "import json, linecache, os, resource, signal\nprint(os.environ['HOME'] == os.getcwd())"
    limits = Limits(512 * 2**20, 10, MAX_FILE_BYTES, MAX_PROCESSES)
    hidden = hidden_paths(plan.hidden) if plan.isolates_files else ()
    try:
        returncode, _, stdout, _ = _execute(plan, limits, hidden, probe, "", 10, 1000)
    except OSError:
        return False
    return returncode == 0 and stdout == "True\n"
