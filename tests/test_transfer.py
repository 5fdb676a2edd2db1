"""scripts/transfer.py: what it prints from the two test runs, and its refusals."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest
from test_report_stats import trial

from reflexion.core.records import TaskResult

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "transfer.py"


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("transfer_script", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scored(task: str, score: float, passed: bool = False) -> TaskResult:
    """A one-attempt trial whose last attempt has this visible score."""
    result = trial(task, [(passed, 100)], strategy="reflexion")
    return replace(result, curve=(replace(result.curve[0], score=score),))


def test_paired_visible_score_counts_higher_and_lower(capsys: pytest.CaptureFixture[str]) -> None:
    empty = [scored("t0", 0.5), scored("t1", 0.75), scored("t2", 0.5)]
    learned = [scored("t0", 0.75), scored("t1", 0.5), scored("t2", 1.0)]
    script().print_scores(empty, learned)
    out = capsys.readouterr().out
    assert "empty 0.583, learned 0.750" in out
    assert "learned - empty +0.167" in out
    assert "higher on 2, lower on 1, same on 0" in out


def test_positions_are_quarters_of_the_stream(capsys: pytest.CaptureFixture[str]) -> None:
    order = [f"t{i}" for i in range(8)]
    learned = [scored(t, 0.0, passed=i >= 6) for i, t in enumerate(order)]
    module = script()
    module.print_positions(order, {"learned memory": learned}, "final success", module.final_passed)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[1].split() == ["memory", "Q1", "(2)", "Q2", "(2)", "Q3", "(2)", "Q4", "(2)"]
    assert lines[2].split() == ["learned", "memory", "0.00", "0.00", "0.00", "1.00"]


@pytest.mark.parametrize("learn", ["0", "99"])
def test_learn_outside_the_tasks_is_one_line_exit(learn: str, tmp_path: Path) -> None:
    command = [sys.executable, str(SCRIPT), "--env", "quadratic", "--learn", learn]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "t")], capture_output=True, text=True, check=False
    )
    assert done.returncode != 0
    assert done.stderr.strip().startswith("transfer: error: --learn must be between 1 and")
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "t").exists()
