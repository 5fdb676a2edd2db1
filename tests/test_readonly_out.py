"""A run that may not write its output folder or its memory store stops before it starts: exit
code 2, one line on stderr that names the folder, no traceback, and nothing there changed.

The CLI runs in a child process that cannot override file permissions. As root, that is root
without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (dropped with setpriv), so the mode bits hold as
for anyone; not `nobody`, who may not reach our interpreter (a pyenv one under /root, mode 700).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reflexion.cli import main

RUN = ["run", "--env", "quadratic", "--episodes", "3", "--tasks", "2"]
FAST = ["--embedder", "hash-64", "--no-progress"]


def _unprivileged() -> list[str]:
    """A command prefix that runs a child without the right to write where the mode bits say
    no; skips the test where there is none."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root, and no setpriv to drop the capabilities that override file modes")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[list[str]]:
    """The command line that starts the CLI without rights over read-only files; a probe
    checks that it really cannot write into a read-only folder."""
    python = [*_unprivileged(), sys.executable]
    locked = tmp_path / "probe"
    locked.mkdir(mode=0o555)
    probe = f"try: open({str(locked / 'x')!r}, 'w')\nexcept PermissionError: print('refused')"
    proc = subprocess.run([*python, "-c", probe], capture_output=True, text=True, check=False)
    if proc.stdout != "refused\n":
        pytest.skip(f"cannot run a child that read-only modes hold: {proc.stderr.strip()}")
    yield [*python, "-m", "reflexion"]
    for path in [tmp_path, *tmp_path.rglob("*")]:  # let pytest remove it
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o700)


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under `folder` (its parent included) with its bytes; None for a folder."""
    return {
        str(p.relative_to(folder.parent)): None if p.is_dir() else p.read_bytes()
        for p in sorted(folder.parent.rglob("*"))
    }


def _refused(cli: list[str], argv: list[str], names: Path, cwd: Path) -> None:
    """The CLI refuses `argv` with exit code 2 and one line that names `names`, and changes
    nothing under `names`' parent folder."""
    before = _snapshot(names)
    proc = subprocess.run(
        [*cli, *argv], capture_output=True, text=True, cwd=cwd, timeout=120, check=False
    )
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("reflexion: error: ") and str(names) in proc.stderr
    assert _snapshot(names) == before


def _lock(path: Path) -> None:
    """chmod a-w, the folder and everything in it."""
    for p in [path, *path.rglob("*")]:
        p.chmod(p.stat().st_mode & ~0o222)


@pytest.mark.parametrize("strategy", ["single", "reflexion"])
def test_a_read_only_out_folder(cli: list[str], tmp_path: Path, strategy: str) -> None:
    out = tmp_path / "runs" / "out"
    out.mkdir(parents=True)
    out.chmod(0o555)
    _refused(cli, [*RUN, "--strategy", strategy, "--out", str(out), *FAST], out, tmp_path)


def test_a_run_folder_inside_a_read_only_one(cli: list[str], tmp_path: Path) -> None:
    parent = tmp_path / "runs"
    parent.mkdir(mode=0o555)
    out = parent / "new" / "out"
    _refused(cli, [*RUN, "--strategy", "reflexion", "--out", str(out), *FAST], parent, tmp_path)


def test_an_existing_run_folder_made_read_only(cli: list[str], tmp_path: Path) -> None:
    out = tmp_path / "runs" / "out"
    assert main([*RUN, "--strategy", "reflexion", "--out", str(out), *FAST]) == 0
    _lock(out)
    _refused(cli, [*RUN, "--strategy", "reflexion", "--out", str(out), *FAST], out, tmp_path)


def test_a_run_folder_whose_records_are_read_only(cli: list[str], tmp_path: Path) -> None:
    """The folder itself is writable, but the files a resume appends to are not."""
    out = tmp_path / "runs" / "out"
    assert main([*RUN, "--strategy", "single", "--out", str(out), *FAST]) == 0
    for name in ["config.json", "results.jsonl", "trace.jsonl"]:
        (out / name).chmod(0o444)
    argv = ["compare", *RUN[1:], "--strategies", "single,self-refine", "--out", str(out), *FAST]
    _refused(cli, argv, out, tmp_path)


def test_a_read_only_memory_store(cli: list[str], tmp_path: Path) -> None:
    store = tmp_path / "shared" / "memory"
    first = [*RUN, "--strategy", "reflexion", "--memory", str(store), *FAST]
    assert main([*first, "--out", str(tmp_path / "first")]) == 0
    assert (store / "chroma.sqlite3").is_file()
    _lock(store)
    second = tmp_path / "second"
    _refused(cli, [*first, "--out", str(second)], store, tmp_path)
    assert not second.exists()


def test_a_memory_store_whose_lock_cannot_be_taken(cli: list[str], tmp_path: Path) -> None:
    """The lock file lies beside the store: a read-only parent folder forbids making it."""
    store = tmp_path / "shared" / "memory"
    first = [*RUN, "--strategy", "reflexion", "--memory", str(store), *FAST]
    assert main([*first, "--out", str(tmp_path / "first")]) == 0
    (store.parent / ".memory.lock").unlink()
    _lock(store.parent)
    _refused(cli, [*first, "--out", str(tmp_path / "second")], store, tmp_path)


def test_a_run_folder_below_one_we_may_not_look_into(cli: list[str], tmp_path: Path) -> None:
    parent = tmp_path / "runs"
    parent.mkdir(mode=0o600)  # no x: what is inside cannot even be looked up
    out = parent / "inner" / "out"
    _refused(cli, [*RUN, "--strategy", "single", "--out", str(out), *FAST], out, tmp_path)
