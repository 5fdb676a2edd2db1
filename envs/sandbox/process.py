"""Run untrusted Python in a separate, locked-down process, never in ours.

    >>> from envs.sandbox.probe import sandbox_plan
    >>> with Sandboxed("print(6 * 7)", timeout_s=5, plan=sandbox_plan()) as child:
    ...     child.finish().stdout
    '42\\n'

What holds the child (see `sandbox_plan` for what this machine allows; a warning says what not):
- a wall-clock timeout, after which the whole process group is killed (SIGKILL);
- a PID namespace: when the run ends, every process it started ends with it, even one that
  left the process group;
- rlimits: address space (memory), CPU seconds, file size (also caps stdout/stderr), no core
  files, and, when the child runs unprivileged, a process count (a fork bomb stops there);
- an empty network namespace;
- a mount namespace where empty tmpfs cover every place our data can live (/tmp, /root,
  /home, /work, the venv, our cwd, ...): it sees the system, and its own directory only;
- when we are root: an unprivileged uid of its own (not even shared with other sandboxes), so it
  cannot write our files and RLIMIT_NPROC binds (the kernel exempts root from it);
- a throw-away working directory as HOME and cwd, removed afterwards (with the mount namespace,
  a small tmpfs: disk use is bounded in total, not only per file);
- an environment built from scratch (PATH, LANG, PYTHONHASHSEED, HOME): no API keys pass.

`Sandboxed` starts a child and lets the caller run two at once, joined by pipes (the checks do).
Safe to call from several threads at once: no preexec_fn (which may deadlock a forking
multi-threaded parent); a small launcher in the child mounts, sets the limits and drops
privileges.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from envs.sandbox.plan import (
    SANDBOX_UIDS,
    Limits,
    Plan,
    command,
    hidden_paths,
)

MAX_PROCESSES = 64  # per uid: each sandbox runs as a uid of its own where it can (SANDBOX_UIDS)
# where in SANDBOX_UIDS to start: two runs on one machine do not share their uids
_uids = itertools.count(secrets.randbelow(len(SANDBOX_UIDS)))
_uids_lock = threading.Lock()
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
    unprivileged: bool  # ran as an unprivileged uid (we were root)
    filesystem_isolated: bool = False  # saw only the system, not our files (mount namespace)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


class Sandboxed:
    """A sandboxed child started on `source`, for a caller that runs two at once and connects
    them: `pass_fds` are pipe ends the child gets under the same numbers. Use it as a context
    manager: leaving the block kills whatever is left and removes the working directory.

        >>> with Sandboxed("print(1)", timeout_s=5, plan=sandbox_plan()) as child:  # doctest: +SKIP
        ...     child.finish().stdout
        '1\\n'
    """

    def __init__(  # noqa: PLR0913
        self,
        source: str,
        *,
        timeout_s: float = 10,
        memory_mb: int = 512,
        cpu_s: int | None = None,
        stdin: str = "",
        hide: Sequence[str] = (),
        pass_fds: Sequence[int] = (),
        files: Mapping[str, str] | None = None,
        plan: Plan,
    ) -> None:
        """`plan`: how to hold it (this machine's: `sandbox_plan()`). `files`: more files to put
        beside main.py, by relative path (the harness package)."""
        if timeout_s <= 0 or memory_mb < 64:
            msg = f"bad sandbox limits: timeout_s={timeout_s} (> 0), memory_mb={memory_mb} (>= 64)"
            raise ValueError(msg)
        self.plan, self.timeout_s = plan, timeout_s
        if plan.uid == SANDBOX_UIDS.start:  # the probe ran as the first; this one gets its own
            plan = dataclasses.replace(plan, uid=_own_uid())
        cpu = cpu_s if cpu_s is not None else math.ceil(timeout_s) + 1
        limits = Limits(memory_mb * 2**20, cpu, MAX_FILE_BYTES, MAX_PROCESSES)
        hidden = hidden_paths([*self.plan.hidden, *hide]) if self.plan.isolates_files else ()
        # What to undo, last first: kill the child, close its files, remove its directory. If
        # starting fails half way, the `with` undoes what was done; otherwise we keep it all
        # until the caller leaves its own `with`.
        with contextlib.ExitStack() as undo:
            self._workdir = tempfile.mkdtemp(prefix="reflexion-sandbox-")
            undo.callback(shutil.rmtree, self._workdir, ignore_errors=True)
            _write_files(self._workdir, {**(files or {}), "main.py": source}, plan.uid)
            self._files = [
                undo.enter_context(tempfile.TemporaryFile())  # noqa: SIM115 (kept open)
                for _ in range(3)
            ]
            self._files[0].write(stdin.encode("utf-8"))
            self._files[0].seek(0)
            self._start = time.monotonic()
            self._proc, self._status = _start(
                plan, limits, hidden, self._workdir, self._files, pass_fds
            )
            undo.callback(os.close, self._status)
            undo.callback(self._kill)
            self._undo = undo.pop_all()

    def __enter__(self) -> Sandboxed:
        return self

    def __exit__(self, *exc: object) -> None:
        self._undo.close()

    def finish(self, *, within_s: float | None = None, max_output: int = 64_000) -> SandboxResult:
        """Wait until the child exits or its time is up (or `within_s` more seconds, if that is
        sooner), kill what is left, and say what it did."""
        left = self.timeout_s - (time.monotonic() - self._start)
        wait = left if within_s is None else min(left, within_s)
        exited = _wait_exit(self._proc.pid, wait)
        returncode = self._kill()
        reported = os.read(self._status, 32)
        if reported.isdigit():
            returncode = os.waitstatus_to_exitcode(int(reported))
        timed_out = not exited and wait >= left
        stderr = _read(self._files[2], max_output)
        duration = time.monotonic() - self._start
        return SandboxResult(
            returncode,
            _read(self._files[1], max_output),
            stderr,
            timed_out,
            duration,
            _reason(returncode, timed_out, exited, self.timeout_s, stderr),
            self.plan.isolates_network,
            self.plan.uid >= 0,
            self.plan.isolates_files,
        )

    def _kill(self) -> int:
        # subtle: the leader is not reaped yet (WNOWAIT), so its pid still names our process
        # group and cannot have been reused by an unrelated process.
        if self._proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)
        return self._proc.wait()


def _own_uid() -> int:
    with _uids_lock:
        return SANDBOX_UIDS[next(_uids) % len(SANDBOX_UIDS)]


def _write_files(workdir: str, files: Mapping[str, str], uid: int) -> None:
    for name, text in files.items():
        path = os.path.join(workdir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    if uid >= 0:
        # subtle: the child runs unprivileged; it may write only here (HOME and cwd).
        for folder, _, names in os.walk(workdir):
            os.chown(folder, uid, uid)
            for name in names:
                os.chown(os.path.join(folder, name), uid, uid)


def _start(  # noqa: PLR0913
    plan: Plan,
    limits: Limits,
    hidden: Sequence[str],
    workdir: str,
    files: Sequence[IO[bytes]],
    pass_fds: Sequence[int],
) -> tuple[subprocess.Popen[bytes], int]:
    """Start the child; returns it and the pipe where the launcher reports the code's wait
    status (with a PID namespace the launcher is the namespace's init, which cannot re-raise a
    signal on itself to pass it on)."""
    home = INSIDE if plan.isolates_files else workdir
    env = {"PATH": SAFE_PATH, "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "HOME": home}
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
            pass_fds=(status_w, *pass_fds),
        )
    except BaseException:
        os.close(status_r)
        raise
    finally:
        os.close(status_w)
    return proc, status_r


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


def _reason(returncode: int, timed_out: bool, exited: bool, timeout_s: float, stderr: str) -> str:
    if timed_out:
        return f"timed out after {timeout_s:g} s"
    if not exited:
        return "stopped: no longer needed"
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
