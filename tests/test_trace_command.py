"""tests/tools/trace_command.py: the steps and files a real command enters, counted from outside
as a reviewer runs it; --within on a function never called counts nothing; --within follows a
coroutine across its awaits and into the threads it hands work to, not into tasks beside it; a bad
command line is one line and exit 2."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "tools" / "trace_command.py"
MAIN = "reflexion/cli/main.py"  # the entry point `reflexion.cli:main` lives here


def trace(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small run of the quadratic drill (no model), with lessons in a window memory."""
    out = tmp_path_factory.mktemp("trace") / "run"
    made = subprocess.run(
        [sys.executable, "-m", "reflexion", "compare", "--env", "quadratic", "--strategies",
         "reflexion-window", "--episodes", "2", "--tasks", "1", "--no-progress", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return out


def counted(run: Path, *options: str) -> dict[str, Any]:
    done = trace(*options, "--json", "--", "reflexion", "memory", "list", str(run))
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


@pytest.fixture(scope="module")
def whole(run_folder: Path) -> dict[str, Any]:
    """What `reflexion memory list RUN` enters, all of it."""
    return counted(run_folder)


def test_a_command_enters_steps_of_ours_in_files_of_ours(
    run_folder: Path, whole: dict[str, Any]
) -> None:
    found = whole
    assert found["code"]["reflexion"] == str((ROOT / "reflexion").resolve())
    assert found["command"] == ["reflexion", "memory", "list", str(run_folder)]
    assert 0 < found["files"] < found["steps"] < 5000
    assert found["steps"] == sum(len(names) for names in found["by_file"].values())
    assert "main" in found["by_file"][MAIN]
    assert all(f.split("/")[0] in ("reflexion", "memory", "envs") for f in found["by_file"])
    assert not any("<module>" in names or "<listcomp>" in names for names in found["by_file"])


def test_list_names_each_file_with_its_steps(run_folder: Path) -> None:
    done = trace("--list", "--", "reflexion", "memory", "list", str(run_folder))
    assert done.returncode == 0, done.stderr
    first, where, *files = done.stdout.splitlines()
    head = re.fullmatch(r"(\d+) steps in (\d+) files", first)
    assert head is not None, first
    steps, count = int(head[1]), int(head[2])
    assert where.startswith(f"code in {ROOT.resolve()}; reflexion memory list ")
    assert where.endswith("exited 0")
    assert len(files) == count and files == sorted(files, key=lambda line: line.split()[1])
    assert sum(int(line.split()[0]) for line in files) == steps
    assert any(line.split()[1] == MAIN for line in files)


def test_within_a_function_never_called_counts_nothing(
    run_folder: Path, whole: dict[str, Any]
) -> None:
    found = counted(run_folder, "--within", "no_such_function_anywhere")
    assert (found["steps"], found["files"], found["within_calls"]) == (0, 0, 0)
    assert found["exit"] == 0
    inside_main = counted(run_folder, "--within", "main")
    assert inside_main["within_calls"] >= 1
    assert 0 < inside_main["steps"] <= whole["steps"]


def test_memory_forget_of_a_chroma_lesson_enters_at_most_15_files(tmp_path: Path) -> None:
    out = tmp_path / "run"
    made = subprocess.run(
        [sys.executable, "-m", "reflexion", "compare", "--env", "quadratic", "--strategies",
         "reflexion", "--episodes", "3", "--tasks", "2", "--embedder", "hash-64", "--no-progress",
         "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    listing = subprocess.run(
        [sys.executable, "-m", "reflexion", "memory", "list", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    ids = [line.split()[0] for line in listing.stdout.splitlines()[1:]]
    assert len(ids) >= 2, listing.stdout
    done = trace("--json", "--", "reflexion", "memory", "forget", str(out), ids[0])
    assert done.returncode == 0, done.stderr
    assert "forgot 1 reflection" in done.stderr  # the command's own output goes to stderr
    found = json.loads(done.stdout)
    assert found["files"] <= 15, sorted(found["by_file"])
    left = subprocess.run(
        [sys.executable, "-m", "reflexion", "memory", "list", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ids[0] not in left.stdout and ids[1] in left.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["reflexion", "memory", "list", "RUN"],  # no `--`
        ["--list", "--", "python", "-c", "1"],  # not a reflexion command
        ["--", ],
        ["--depth", "3", "--", "reflexion", "--version"],  # no such option here
        ["--within", "", "--", "reflexion", "--version"],
    ],
)  # fmt: skip
def test_a_bad_command_line_is_one_line_and_exit_2(argv: list[str]) -> None:
    done = trace(*argv)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("trace_command: error: ")
    assert "Traceback" not in done.stderr


def test_the_exit_status_is_the_commands(tmp_path: Path) -> None:
    done = trace("--", "reflexion", "report", str(tmp_path / "no-such-run"))
    assert done.returncode == 2
    assert done.stdout.splitlines()[1].endswith("exited 2")
    assert "reflexion: error:" in done.stderr


WORK = """
import asyncio

async def trial():
    await asyncio.sleep(0)
    inner()
    await asyncio.to_thread(in_thread)
    await asyncio.sleep(0)
    after_resume()

async def beside():
    for _ in range(4):
        await asyncio.sleep(0)
        outside()

async def both():
    await asyncio.gather(trial(), beside())  # two tasks, interleaving
    await trial()  # in this task: once it returns, what follows is outside it again
    later()

def inner(): pass
def in_thread(): pass
def after_resume(): pass
def outside(): pass
def later(): pass
"""


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("trace_command", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["trace_command"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_within_follows_a_coroutine_not_the_tasks_beside_it(tmp_path: Path) -> None:
    (tmp_path / "ours").mkdir()
    (tmp_path / "ours" / "work.py").write_text(WORK)
    spec = importlib.util.spec_from_file_location("ours_work", tmp_path / "ours" / "work.py")
    assert spec is not None and spec.loader is not None
    work = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(work)
    script = load_script()
    roots = {"ours": str((tmp_path / "ours").resolve())}

    everything = script.Tracer(roots)
    script.traced(everything, lambda: asyncio.run(work.both()))
    assert everything.steps["ours/work.py"] >= {"both", "trial", "beside", "outside", "later"}

    within = script.Tracer(roots, "trial")
    script.traced(within, lambda: asyncio.run(work.both()))
    assert within.within_calls == 2
    assert within.steps == {"ours/work.py": {"trial", "inner", "in_thread", "after_resume"}}
