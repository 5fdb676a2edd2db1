"""How the sandbox holds a child on this machine: the namespaces, the user, the interpreter, and
the command that starts the small launcher (envs/sandbox/launcher.py) that applies them.

With a mount namespace, the child's working directory is a fresh tmpfs of `Limits.disk_bytes`
(64 MiB by default), which bounds its disk use in total; the tmpfs lives in memory (not counted
in RLIMIT_AS) and is freed when the namespace's last process exits. Without one, disk use is
bounded per file only (RLIMIT_FSIZE).

    >>> hidden_paths(["/work/a", "/work", "/"]) == (["/work"] if os.path.isdir("/work") else [])
    True
"""

from __future__ import annotations

import functools
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib.resources import files

NOBODY = 65534  # uid and gid of nobody / nogroup
# Unprivileged uids, one per sandbox so a fork bomb in one cannot take the process count of
# another (RLIMIT_NPROC is per uid); no account on a normal system uses them. A machine that
# maps fewer uids (a container's user namespace) gets nobody instead.
SANDBOX_UIDS = range(2_000_000, 2_000_000 + 65_536)
# Where our data can live; each is covered by an empty tmpfs in the child's mount namespace.
DATA_DIRS = (
    "/tmp",
    "/var/tmp",
    "/dev/shm",
    "/run",
    "/root",
    "/home",
    "/work",
    "/opt",
    "/srv",
    "/media",
    "/mnt",
)
# Never hidden, nor anything that holds them: the child's interpreter needs them.
SYSTEM_DIRS = (
    "/usr",
    "/bin",
    "/lib",
    "/lib64",
    "/etc",
    "/proc",
    "/dev",
    "/sys",
    "/nix",
    "/gnu",
    "/snap",
)
# -i: its own System V IPC, so shared memory it makes neither outlives it nor reaches another run
NAMESPACES = ("-n", "-m", "-i", "-p", "-f", "--kill-child", "--mount-proc")
DISK_BYTES = 64 * 2**20  # all the code may write, with a mount namespace (a tmpfs of this size)


@dataclass(frozen=True)
class Limits:
    address_space: int  # bytes
    cpu_s: int
    file_bytes: int
    processes: int  # per uid (each sandbox has its own, where the machine maps enough uids)
    disk_bytes: int = DISK_BYTES  # its working directory's size; only with a mount namespace

    def __post_init__(self) -> None:
        if self.disk_bytes < 2**16:  # and 0 would mean no limit to tmpfs
            msg = f"bad sandbox limits: disk_bytes={self.disk_bytes} (>= 65536)"
            raise ValueError(msg)


@dataclass(frozen=True)
class Plan:
    """How to hold a child: `unshare` options (or none), its interpreter, the user it runs as
    (-1: our own), and the directories it must not see (when it has a mount namespace)."""

    prefix: tuple[str, ...]
    python: str
    uid: int
    hidden: tuple[str, ...] = ()

    @property
    def isolates_network(self) -> bool:
        return "-n" in self.prefix

    @property
    def isolates_files(self) -> bool:
        return "-m" in self.prefix

    def missing(self) -> str:
        """What this plan lacks, for a warning; empty when nothing is."""
        gaps = []
        if self.uid < 0 and os.geteuid() == 0:
            gaps.append("runs untrusted code as root (no interpreter that nobody can run)")
        if not self.isolates_network:
            gaps.append("no network isolation (unshare -n unavailable)")
        if not self.isolates_files:
            gaps.append(
                "no filesystem isolation: the code can read our files, and fill the disk with"
                " files under the size limit (no unshare -m)"
            )
        return "; ".join(gaps)


@functools.cache
def launcher_source() -> str:
    """The launcher's program (envs/sandbox/launcher.py), run in the child before the code."""
    return files("envs.sandbox").joinpath("launcher.py").read_text(encoding="utf-8")


def command(
    plan: Plan, limits: Limits, hidden: Sequence[str], status_fd: int, inside: str
) -> list[str]:
    numbers = [limits.address_space, limits.cpu_s, limits.file_bytes, limits.processes]
    numbers += [limits.disk_bytes, plan.uid]
    mounts = json.dumps([list(hidden), inside if plan.isolates_files else ""])
    # `-I -S` for the launcher: it needs only the standard library, as fast as it can start.
    # `-s` alone for the code: `-I` would drop PYTHONHASHSEED, and `-P` needs Python 3.11.
    return [
        *plan.prefix,
        *(sys.executable, "-I", "-S", "-c", launcher_source()),
        *(*map(str, [*numbers, status_fd]), mounts),
        *(plan.python, "-s", "-B", "main.py"),  # -B: no __pycache__ in its small tmpfs
    ]


def candidate_plans() -> Iterator[Plan]:
    """Every plan worth probing, strongest first: drop to an unprivileged uid of its own (or to
    nobody, where the machine maps too few uids) when we are root, all the
    namespaces, then the network one alone, then none."""
    root = os.geteuid() == 0
    places = [*DATA_DIRS, *_top_level_dirs(), tempfile.gettempdir(), sys.prefix, os.getcwd()]
    hidden = tuple(hidden_paths(places))
    if root:
        prefixes = [("unshare", *NAMESPACES), ("unshare", "-n"), ()]
    else:  # a user namespace, keeping its capabilities for the launcher's mounts only
        prefixes = [("unshare", "-c", "--keep-caps", *NAMESPACES), ("unshare", "-rn"), ()]
    for uid in [SANDBOX_UIDS.start, NOBODY, -1] if root else [-1]:
        for prefix in prefixes:
            for python in _pythons():
                yield Plan(prefix, python, uid, hidden if "-m" in prefix else ())


def hidden_paths(paths: Sequence[str]) -> list[str]:
    """The existing directories among `paths`, resolved, without those another one covers, and
    without any that holds a system directory."""
    found = sorted({os.path.realpath(p) for p in paths if p and os.path.isdir(p)})
    kept: list[str] = []
    for path in found:
        holds_system = any(_within(system, path) for system in SYSTEM_DIRS)
        if not holds_system and not any(_within(path, k) for k in kept):
            kept.append(path)
    return kept


def _top_level_dirs() -> list[str]:
    """Every real directory at / that is not a system one (`/farm`, `/old_root`, `/var`, ...):
    a machine may keep data anywhere, so all of them are hidden, not only the usual places."""
    try:
        entries = list(os.scandir("/"))
    except OSError:
        return []
    found = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
    return [path for path in found if path not in SYSTEM_DIRS]


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _pythons() -> list[str]:
    """Our interpreter, then the real files behind it, then the system's: a venv or a Python
    under /root (pyenv's) may be out of the child's reach."""
    found = [sys.executable, getattr(sys, "_base_executable", ""), "/usr/bin/python3"]
    found[2:2] = [os.path.realpath(p) for p in found[:2] if p]
    return list(dict.fromkeys(p for p in found if p and os.path.exists(p)))
