"""The `reflexion` command as the tests run it, in this process (`reflexion.cli.main`): what it
printed, one-line errors, a reflexion run of the quadratic drill with the hash embedder, and
what that run left in its folder (its lessons' ids, its trace's steps)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reflexion.cli import main

FAST = ["--embedder", "hash-64", "--no-progress"]


def said(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 0) -> str:
    """What the command printed: stdout when it succeeded, stderr when it failed."""
    capsys.readouterr()
    assert main(argv) == code
    out, err = capsys.readouterr()
    return out if code == 0 else err


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    got = capsys.readouterr()
    return code, got.out, got.err


def one_line_error(code: int, err: str) -> str:
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


def declined(code: int, err: str, verb: str) -> bool:
    """True where the backend said in one line that it cannot do `verb` (exit 2)."""
    if code == 0:
        return False
    line = one_line_error(code, err)
    assert "no reflection with id" not in line, line  # the lesson exists: say what cannot be done
    assert "cannot" in line and verb in line, line
    return True


def quadratic(out: Path, *more: str) -> Path:
    """A reflexion run of the quadratic drill (3 tasks) in `out`."""
    argv = ["run", "--env", "quadratic", "--strategy", "reflexion", "--tasks", "3", "--out"]
    assert main([*argv, str(out), *FAST, *more]) == 0
    return out


def ids(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The ids `memory list` prints for `run_dir`, in its order."""
    rows = said(["memory", "list", str(run_dir)], capsys).splitlines()[1:]
    return [line.split()[0] for line in rows]


def steps(folder: Path, kind: str) -> list[dict[str, Any]]:
    """The trace's steps of `kind`, in order."""
    lines = (folder / "trace.jsonl").read_text().splitlines()
    return [s for s in map(json.loads, lines) if s["kind"] == kind]
