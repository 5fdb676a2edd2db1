"""docs/own-agent.md, run as printed: every block on the page, in page order, in one folder (the
Python blocks in this process, the shell block with bash), and what each prints is what the page
says. With the real embedder, as a reader runs them."""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "own-agent.md"
BLOCK = re.compile(r"<!-- recipe: (\S+) -->\n```(\w*)\n(.*?)```", re.DOTALL)


def blocks() -> list[tuple[str, str, str]]:
    """(name, language, text) of each block on the page."""
    return BLOCK.findall(PAGE.read_text(encoding="utf-8"))


def test_every_code_block_on_the_page_is_run_by_this_file() -> None:
    fences = PAGE.read_text(encoding="utf-8").count("```") // 2
    assert len(blocks()) == fences  # a block without its recipe name would go untested
    assert [name for name, _, _ in blocks()] == [
        "agent_loop.py",
        "agent-memory-commands",
        "agent_chain.py",
        "agent_curate.py",
        "agent_graph.py",
        "agent_compare.py",
    ]


@pytest.mark.slow  # the real sentence-transformers embedder, as the page uses it
def test_the_page_runs_as_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("langgraph")  # the `agent` extra; setup.sh installs it
    monkeypatch.chdir(tmp_path)
    printed = {name: run_block(name, language, text, capsys) for name, language, text in blocks()}
    assert printed["agent_loop.py"].splitlines() == [
        "1 No. None",
        "2 Yes: the forecast says rain. helped",
    ]
    listing, why = printed["agent-memory-commands"].split("my-agent seed 0, task", 1)
    assert "[recalled 1: helped 1, hurt 0, same 0]" in listing
    assert "check the Oslo forecast (rain) first" in listing
    assert "episode 2" in why and "then: the attempt scored 1, after 0: rose" in why
    chain = printed["agent_chain.py"].splitlines()
    assert chain[0] == "Yes, pack an umbrella."
    assert "oslo-trip Check the Oslo forecast before answering about an umbrella." in chain[1:]
    assert printed["agent_curate.py"].splitlines() == [
        "Apply the loyalty discount before tax on the invoice. alice 1",
        "['edit', 'forget']",
        "Apply the loyalty discount after tax.",
        "[]",
    ]
    assert printed["agent_graph.py"].splitlines() == [
        "1 No. None",
        "2 Yes: heavy rain in Oslo. helped",
    ]
    table = printed["agent_compare.py"]
    assert re.search(r"^single\s+2\s", table, re.MULTILINE), table
    assert re.search(r"^reflexion\s+2\s", table, re.MULTILINE), table


def run_block(name: str, language: str, text: str, capsys: pytest.CaptureFixture[str]) -> str:
    """What the block prints: a Python block run here, a shell block with bash."""
    Path(name).write_text(text)
    if language == "python":
        capsys.readouterr()
        runpy.run_path(name, run_name="__main__")
        return capsys.readouterr().out
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-e", name], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
