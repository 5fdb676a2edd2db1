"""scripts/choose_subset.py: problems chosen by the first answer's visible verdict only."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from test_report_stats import trial

from reflexion.core.records import TaskResult
from reflexion.core.runfolder import RunFolder

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "choose_subset.py"


def first(number: int, solved: bool, passed: bool, signal: str = "visible") -> TaskResult:
    """HumanEval/<number>: a one-attempt `single` trial, visibly solved or not, and held-out
    passed or not (the script must ignore the latter)."""
    result = trial(f"HumanEval/{number}", [(passed, 100)], strategy="single")
    point = replace(result.curve[0], solved=solved, score=1.0 if solved else 0.5, signal=signal)
    return replace(result, curve=(point,))


def choose(
    tmp_path: Path, results: list[TaskResult], *args: str
) -> subprocess.CompletedProcess[str]:
    folder = RunFolder(tmp_path)
    for r in results:
        folder.write_result(r)
    folder.close()
    command = [sys.executable, str(SCRIPT), str(tmp_path), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_chooses_visible_misses_whatever_the_held_out_verdict(tmp_path: Path) -> None:
    # 3 passes the hidden tests but failed its examples; 5 failed the hidden tests but looked solved
    results = [
        first(1, True, True),
        first(3, False, True),
        first(5, True, False),
        first(8, False, False),
    ]
    done = choose(tmp_path, results)
    assert done.returncode == 0, done.stderr
    assert "2 of 4 problems" in done.stdout
    assert done.stdout.splitlines()[-1] == "--env humaneval:ids=3,8"


def test_count_keeps_an_even_spread_of_the_misses(tmp_path: Path) -> None:
    results = [first(i, False, False) for i in range(10)]
    done = choose(tmp_path, results, "--count", "5")
    assert done.stdout.splitlines()[-1] == "--env humaneval:ids=0,2,4,6,8"


def test_a_run_scored_by_self_tests_is_refused_in_one_line(tmp_path: Path) -> None:
    done = choose(tmp_path, [first(1, False, False, signal="self-tests")])
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "--signal visible" in done.stderr
    assert "Traceback" not in done.stderr


def test_nothing_to_choose_is_an_error_not_an_empty_list(tmp_path: Path) -> None:
    done = choose(tmp_path, [first(1, True, True)])
    assert done.returncode == 2 and "failed its visible examples" in done.stderr
    (tmp_path / "more").mkdir()
    again = choose(tmp_path / "more", [first(2, False, False)], "--count", "0")
    assert again.returncode == 2 and "--count must be at least 1" in again.stderr
