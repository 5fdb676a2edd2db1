"""Fixtures (a pytest plugin of conftest's): a real quadratic run holding a Chroma store
(`reflexion`) and a window (`reflexion-window`), made once a session, with a private copy for each
test (`q`); a constrained run, whose task ids carry the env's prefix; and how `memory list` shows
their lessons. For the tests of the `reflexion memory` commands and the web memory page."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from commands import FAST, cli
from conftest import scripted

from reflexion import RunConfig, run
from reflexion.cli import main

LESSON = re.compile(r"^([0-9a-f]{16})\s")


@pytest.fixture(scope="session")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("curation") / "q"
    argv = ["compare", "--env", "quadratic", "--episodes", "5"]
    argv += ["--strategies", "reflexion,reflexion-window", "--out", str(out), *FAST]
    assert main(argv) == 0
    return out


@pytest.fixture
def q(made: Path, tmp_path: Path) -> Path:
    """A private copy of the run: a test may change its stores."""
    return Path(shutil.copytree(made, tmp_path / "q"))


def listed(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """`memory list`'s lessons: id -> its line."""
    code, out, _ = cli(capsys, "memory", "list", str(run_dir))
    assert code == 0
    return {m[1]: line for line in out.splitlines() if (m := LESSON.match(line))}


def of_strategy(lines: dict[str, str], strategy: str) -> list[str]:
    return [rid for rid, line in lines.items() if f"  {strategy} seed " in line]


def credit_of(line: str) -> int:
    """How many recalls a credit text counts: "never recalled" is 0."""
    if "never recalled" in line:
        return 0
    found = re.search(r"recalled (\d+)", line)
    assert found, line
    return int(found[1])


def window_lesson(q: Path, capsys: pytest.CaptureFixture[str]) -> str:
    return of_strategy(listed(q, capsys), "reflexion-window")[0]


@pytest.fixture(scope="session")
def constrained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("constrained") / "c"
    model = scripted(["a dog", "I left out the concepts cat and run.", "a dog runs"] * 8)
    config = RunConfig(
        env="constrained:1",
        strategies=("reflexion",),
        episodes=2,
        out=str(out),
        embedder="hash-64",
        concurrency=1,
    )
    run(config, model=model)
    return out
