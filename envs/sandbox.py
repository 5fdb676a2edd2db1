"""Run untrusted Python in a separate, locked-down process, never in ours.

    >>> result = run_python("print(6 * 7)", timeout_s=5)
    >>> result.returncode, result.stdout
    (0, '42\\n')

What holds the child:
- a wall-clock timeout, after which the whole process group is killed (SIGKILL);
- rlimits: address space (memory), CPU seconds, file size (also caps stdout/stderr), no core
  files, and, when the child runs unprivileged, a process count (a fork bomb stops there);
- an empty network namespace (`unshare -n`) where the machine allows it;
- when we are root: the user `nobody`, so it cannot write our files and RLIMIT_NPROC binds
  (the kernel exempts root from it);
- a throw-away working directory as HOME and cwd, removed afterwards;
- an environment built from scratch (PATH, LANG, PYTHONHASHSEED, HOME): no API keys pass.

Safe to call from several threads at once: no preexec_fn (which may deadlock a forking
multi-threaded parent); a small launcher in the child sets the limits and drops privileges.
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
from dataclasses import dataclass
from typing import IO

NOBODY = 65534  # uid and gid of nobody / nogroup
MAX_PROCESSES = 64  # per uid, so shared by concurrent sandboxes
MAX_FILE_BYTES = 16 * 2**20  # also bounds what the child can write to stdout and stderr
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"

# Runs in the child as whoever started it (root inside the network namespace): set the limits,
# drop to nobody, then exec the real interpreter on the code file.
LAUNCHER = """\
import os, resource, sys
mem, cpu, fsize, nproc, uid = (int(a) for a in sys.argv[1:6])
for which, value in ((resource.RLIMIT_AS, mem), (resource.RLIMIT_FSIZE, fsize),
                     (resource.RLIMIT_CORE, 0)):
    resource.setrlimit(which, (value, value))
# SIGXCPU at the soft limit says why it ended; SIGKILL a second later if it is ignored
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
if uid >= 0:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
os.execv(sys.argv[6], sys.argv[6:])
"""


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

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


@dataclass(frozen=True)
class _Plan:
    """How this machine can hold a child; probed once per process."""

    prefix: tuple[str, ...]  # ("unshare", "-n") or ()
    python: str  # the interpreter the code runs under
    uid: int  # -1: keep our own user


def run_python(
    source: str,
    *,
    timeout_s: float = 10,
    memory_mb: int = 512,
    cpu_s: int | None = None,
    max_output: int = 64_000,
) -> SandboxResult:
    """Run `source` as a script in a sandboxed child process and collect what it did.

    `cpu_s` (CPU seconds) defaults to the timeout rounded up plus one. stdout and stderr are
    each cut to `max_output` characters, keeping the start and the end (where a traceback is).

        >>> run_python("while True: pass", timeout_s=1).reason
        'timed out after 1 s'
    """
    if timeout_s <= 0 or memory_mb < 64 or max_output < 100:
        msg = (
            f"bad sandbox limits: timeout_s={timeout_s} (> 0), memory_mb={memory_mb} (>= 64), "
            f"max_output={max_output} (>= 100)"
        )
        raise ValueError(msg)
    plan = _plan()
    cpu = cpu_s if cpu_s is not None else math.ceil(timeout_s) + 1
    workdir = tempfile.mkdtemp(prefix="reflexion-sandbox-")
    try:
        _write_code(workdir, source, plan.uid)
        command = _command(plan, memory_mb, cpu)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            start = time.monotonic()
            returncode, timed_out = _run(command, workdir, out, err, timeout_s)
            duration = time.monotonic() - start
            stdout, stderr = _read(out, max_output), _read(err, max_output)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    reason = _reason(returncode, timed_out, timeout_s, stderr)
    isolated = bool(plan.prefix)
    return SandboxResult(
        returncode, stdout, stderr, timed_out, duration, reason, isolated, plan.uid >= 0
    )


def _command(plan: _Plan, memory_mb: int, cpu_s: int) -> list[str]:
    limits = [memory_mb * 2**20, cpu_s, MAX_FILE_BYTES, MAX_PROCESSES, plan.uid]
    # `-s -P` is `-I` (isolated mode) without `-E`: the environment is already built from
    # scratch, and `-E` would drop the PYTHONHASHSEED that makes set order reproducible.
    return [
        *plan.prefix,
        *(sys.executable, "-s", "-P", "-c", LAUNCHER, *map(str, limits)),
        *(plan.python, "-s", "-P", "main.py"),
    ]


def _write_code(workdir: str, source: str, uid: int) -> None:
    path = os.path.join(workdir, "main.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    if uid >= 0:
        # subtle: the child runs as nobody; it may write only here (HOME and cwd).
        os.chown(workdir, uid, uid)
        os.chown(path, uid, uid)


def _run(
    command: list[str], workdir: str, out: IO[bytes], err: IO[bytes], timeout_s: float
) -> tuple[int, bool]:
    """Run to exit or timeout, then kill whatever is left of the process group."""
    env = {"PATH": SAFE_PATH, "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "HOME": workdir}
    # Output goes to unlinked files, not pipes: no reader thread, no deadlock on a full pipe,
    # and a background child that keeps the handle open cannot make us wait.
    proc = subprocess.Popen(
        command,
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=err,
        start_new_session=True,
    )
    try:
        timed_out = not _wait_exit(proc.pid, timeout_s)
    finally:
        # subtle: the leader is not reaped yet (WNOWAIT), so its pid still names our process
        # group and cannot have been reused by an unrelated process.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        returncode = proc.wait()
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
def _plan() -> _Plan:
    prefix = _network_prefix()
    if os.geteuid() != 0:
        return _Plan(prefix, sys.executable, -1)
    python = _python_for_nobody()
    # No interpreter that nobody may run: stay root rather than not run at all.
    return _Plan(prefix, python or sys.executable, NOBODY if python else -1)


def _network_prefix() -> tuple[str, ...]:
    """`unshare -n` as root, `unshare -rn` (a user namespace) where unprivileged ones work."""
    if shutil.which("unshare") is None:
        return ()
    for prefix in (("unshare", "-n"), ("unshare", "-rn")):
        if _succeeds([*prefix, "true"]):
            return prefix
    return ()


def _python_for_nobody() -> str | None:
    """Our interpreter, or failing that a system one, that nobody can run (a Python under
    /root, such as pyenv's, is out of nobody's reach)."""
    probe = "import json, linecache, resource, signal"
    seen: list[str] = []
    for python in (sys.executable, getattr(sys, "_base_executable", ""), "/usr/bin/python3"):
        if python and python not in seen:
            seen.append(python)
            if _succeeds([python, "-s", "-P", "-c", probe], user=NOBODY):
                return python
    return None


def _succeeds(command: list[str], user: int | None = None) -> bool:
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            timeout=10,
            cwd="/",
            user=user,
            group=user,
            extra_groups=[] if user is not None else None,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0
