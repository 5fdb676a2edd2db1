"""The snippets of README.md and docs/*.md (the Python snippet, the How-to-extend recipes), run
exactly as printed: each `<!-- recipe: NAME.py -->` block is saved as NAME.py, and each
`<!-- recipe: run -->` block is run with bash in that folder, with the venv's `reflexion` and
`python` first on the PATH."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"<!-- recipe: (\S+) -->\n```\w*\n(.*?)```", re.DOTALL)


def recipes() -> list[tuple[str, str]]:
    """Every (name, text) recipe block of the README and docs/, in page order."""
    return [found for page in PAGES for found in BLOCK.findall(page.read_text(encoding="utf-8"))]


def commands() -> dict[str, str]:
    """Each command by the run folder it writes (its --out, or the folder it lists)."""
    found = {}
    for name, text in recipes():
        if name == "run":
            out = re.search(r"--out (\S+)", text) or re.search(r"memory list (\S+)", text)
            assert out is not None, text
            found[out.group(1)] = text.strip()
    return found


def run_recipe(out: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    for name, text in recipes():
        if name.endswith(".py"):
            (tmp_path / name).write_text(text)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", "-c", commands()[out]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def results(tmp_path: Path, out: str) -> list[dict[str, object]]:
    lines = (tmp_path / out / "results.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_the_pages_have_every_recipe() -> None:
    names = [n for n, _ in recipes()]
    assert {"api.py", "retry.py", "shout.py", "words.py"} <= set(names)
    assert set(commands()) == {"runs/hello", "runs/shout", "runs/retry", "runs/words"}
    assert "api.py" in dict(BLOCK.findall(PAGES[0].read_text(encoding="utf-8")))  # the README's


def test_recipe_names_are_unique() -> None:
    """Every module is saved into one folder, so two recipes of one name would overwrite."""
    modules = [n for n, _ in recipes() if n != "run"]
    assert sorted(modules) == sorted(set(modules))
    runs = [text for n, text in recipes() if n == "run"]
    assert len(commands()) == len(runs)  # no two commands write the same run folder


@pytest.mark.slow
def test_the_python_snippet(tmp_path: Path) -> None:
    done = run_recipe("runs/hello", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "True 2"
    assert "1 reflections in" in done.stdout and "Write it in capitals." in done.stdout


def test_a_new_strategy(tmp_path: Path) -> None:
    done = run_recipe("runs/retry", tmp_path)
    assert done.returncode == 0, done.stderr
    rows = results(tmp_path, "runs/retry")
    assert sorted({str(r["strategy"]) for r in rows}) == ["retry-with-feedback", "single"]
    retried = [r for r in rows if r["strategy"] == "retry-with-feedback"]
    assert len(retried) == 8 and all(r["attempts"] == 2 for r in retried)  # none solved at once
    assert "retry-with-feedback" in done.stdout  # in the printed table


@pytest.mark.slow
def test_a_new_env(tmp_path: Path) -> None:
    done = run_recipe("runs/shout", tmp_path)  # with the small real model
    assert done.returncode == 0, done.stderr
    rows = results(tmp_path, "runs/shout")
    assert {(r["strategy"], r["task_id"]) for r in rows} == {
        (s, t) for s in ("single", "reflexion") for t in ("w0", "w1")
    }


def test_a_new_memory_backend(tmp_path: Path) -> None:
    done = run_recipe("runs/words", tmp_path)
    assert done.returncode == 0, done.stderr
    rows = results(tmp_path, "runs/words")
    assert len(rows) == 8 and any(r["final_passed"] for r in rows)
    config = json.loads((tmp_path / "runs/words/config.json").read_text())
    assert config["memory_backend"] == "words"
