"""The docs' worked examples, rerun: the numbers they quote must be what the commands print."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reflexion.cli import main

MEMORY_PAGE = Path(__file__).resolve().parents[1] / "docs" / "memory.md"


@pytest.mark.slow  # the real sentence-transformers embedder: its similarities are quoted
def test_the_memory_why_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "q")
    argv = ["compare", "--env", "quadratic", "--episodes", "5", "--k", "1", "--scope", "global"]
    argv += ["--order", "stream", "--strategies", "reflexion", "--out", out, "--no-progress"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["memory", "why", out, "q2", "2"]) == 0
    printed = capsys.readouterr().out
    recalled = re.search(r"similarity (\S+)\s+score (\S+)\s+from this task", printed)
    assert recalled is not None, printed
    cut = re.findall(r"similarity (\S+)\s+q\d\s+ranked (\d)", printed)
    assert sorted(rank for _, rank in cut) == ["2", "3", "4"], printed
    assert "after -13.28: rose" in printed and "scored -2.125" in printed
    text = " ".join(MEMORY_PAGE.read_text(encoding="utf-8").split())
    quoted = f"(similarity {recalled[1]}, ranking score {recalled[2]})"
    assert quoted in text, f"docs/memory.md no longer quotes {quoted}"
    similarities = sorted((s for s, _ in cut), reverse=True)
    assert f"(similarities {similarities[0]}, {similarities[1]} and {similarities[2]})" in text
