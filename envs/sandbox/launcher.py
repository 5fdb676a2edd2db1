"""The small launcher that starts in each sandboxed child (run as `python -I -S -c SOURCE`).

It runs as whoever started it (root inside the namespaces, or the owner of a user namespace):
it hides our directories, makes INSIDE a fresh tmpfs of `disk` bytes holding a copy of the
files of the working directory (main.py and the harness), then forks the code, which sets the
limits, drops to `uid` and execs the interpreter. It waits for the code and writes its wait
status to `status_fd`. Standard library only; it does nothing when imported.

    >>> main  # doctest: +ELLIPSIS
    <function main at ...>
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import sys

MS_NOSUID, MS_NODEV = 2, 4
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4


def mount(libc: ctypes.CDLL, target: str, options: str) -> None:
    """A fresh tmpfs at `target`."""
    flags = MS_NOSUID | MS_NODEV
    if libc.mount(b"none", target.encode(), b"tmpfs", flags, options.encode()):
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), target)


def make_inside(libc: ctypes.CDLL, inside: str, disk: int, owner: int) -> None:
    """A tmpfs of `disk` bytes at `inside` with a copy of our working directory's files."""
    mount(libc, os.path.dirname(inside), "mode=755,size=64k")
    os.mkdir(inside)
    # the size bounds the disk the code can fill, nr_inodes the number of (empty) files
    mount(libc, inside, f"mode=700,uid={owner},gid={owner},size={disk},nr_inodes={disk // 4096}")
    # subtle: our cwd still is the real working directory, now hidden under a tmpfs
    for folder, _, names in os.walk("."):
        target = os.path.normpath(os.path.join(inside, folder))
        os.makedirs(target, exist_ok=True)
        os.chown(target, owner, owner)
        for name in names:
            with open(os.path.join(folder, name), "rb") as src:
                data = src.read()
            with open(os.path.join(target, name), "wb") as dst:
                dst.write(data)
            os.chown(os.path.join(target, name), owner, owner)
    os.chdir(inside)


def become_the_code(limits: list[int], uid: int, argv: list[str], libc: ctypes.CDLL) -> None:
    """In the forked child: set the limits, drop privileges, exec the interpreter."""
    mem, cpu, fsize, nproc = limits
    for which, value in (
        (resource.RLIMIT_AS, mem),
        (resource.RLIMIT_FSIZE, fsize),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(which, (value, value))
    # SIGXCPU at the soft limit says why it ended; SIGKILL a second later if it is ignored
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if uid >= 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # no capability survives exec
    os.execv(argv[0], argv)


def main() -> None:
    mem, cpu, fsize, nproc, disk, uid, status_fd = (int(a) for a in sys.argv[1:8])
    hidden, inside = json.loads(sys.argv[8])
    libc = ctypes.CDLL(None, use_errno=True)
    for path in hidden:
        mount(libc, path, "mode=755,size=64k")
    if inside:
        make_inside(libc, inside, disk, uid if uid >= 0 else os.getuid())
    child = os.fork()
    if child == 0:
        os.close(status_fd)
        become_the_code([mem, cpu, fsize, nproc], uid, sys.argv[9:], libc)
    while True:
        pid, status = os.wait()  # as a namespace's init, also reap orphans
        if pid == child:
            os.write(status_fd, str(status).encode())
            break


if __name__ == "__main__":
    main()
