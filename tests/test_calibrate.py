"""scripts/calibrate.py: the package's paired statistics, fed simulated comparisons with a known
effect, see a real effect and invent none: the 95% interval of B - A holds the true difference
in about 95% of runs, McNemar's test at 0.05 fires in at most about 5% of runs with no effect,
and nearly always with a large one; and the checks themselves catch a miscalibrated interval or
p-value."""

from __future__ import annotations

import doctest
import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from reflexion.report.paired import mcnemar_p
from reflexion.report.stats import bootstrap_rows

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "calibrate.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("calibrate", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["calibrate"] = module  # dataclasses and enums look their module up by name
    spec.loader.exec_module(module)
    return module


calibrate = load()
SEED = 3
TASKS = 100


@pytest.mark.parametrize("effect", [0.0, 0.10])
def test_the_interval_holds_the_true_difference_about_95_percent_of_the_time(
    effect: float,
) -> None:
    # 4,000 runs: the share's standard error is about 0.35 points, so the bounds are ~3 errors
    # from what a long run gives here (95.5% with no effect, 94.3% at +10 points)
    share = calibrate.coverage(TASKS, base=0.5, effect=effect, runs=4000, seed=SEED)
    assert 0.93 <= share <= 0.97


def test_mcnemar_fires_at_most_6_percent_of_the_time_with_no_effect() -> None:
    assert calibrate.false_positive_rate(TASKS, runs=2000, seed=SEED) <= 0.06


def test_mcnemar_nearly_always_finds_a_large_effect_and_at_no_effect_only_its_false_positives() -> (
    None
):
    assert calibrate.power(TASKS, 0.30, runs=1000, seed=SEED) > 0.90
    at_zero = calibrate.power(TASKS, 0.0, runs=2000, seed=SEED)
    assert at_zero == calibrate.false_positive_rate(TASKS, runs=2000, seed=SEED)
    assert at_zero < calibrate.power(TASKS, 0.10, runs=2000, seed=SEED)


def test_the_interval_criterion_also_finds_a_large_effect() -> None:
    interval = calibrate.Criterion.INTERVAL
    assert calibrate.power(TASKS, 0.30, runs=1000, seed=SEED, criterion=interval) > 0.90
    assert calibrate.power(TASKS, 0.0, runs=2000, seed=SEED, criterion=interval) <= 0.06


def test_the_batched_numbers_are_those_pair_reports() -> None:
    calibrate.check_against_pair(runs=8, seed=SEED)  # raises on the first run that differs


def test_the_true_difference_is_the_simulations_own() -> None:
    # a huge simulation of the same model lands on the closed form (clipping included)
    rng = np.random.default_rng(SEED)
    for base, effect in [(0.3, 0.1), (0.7, 0.3)]:
        q = rng.beta(base, 1 - base, size=2_000_000)  # concentration 1, the script's default
        simulated = float(np.mean(np.minimum(q + effect, 1.0) - q))
        assert calibrate.true_difference(base, effect) == pytest.approx(simulated, abs=1e-3)
    assert calibrate.true_difference(0.7, 0.3) < 0.3 - 0.1  # most easy tasks cannot gain it all


def test_a_too_narrow_interval_fails_the_coverage_check(monkeypatch: pytest.MonkeyPatch) -> None:
    narrow = functools.partial(bootstrap_rows, level=0.80)
    monkeypatch.setattr(calibrate, "bootstrap_rows", narrow)
    assert calibrate.coverage(TASKS, base=0.5, effect=0.10, runs=1000, seed=SEED) < 0.90


def test_an_overeager_p_value_fails_the_false_positive_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def one_sided(won: int, lost: int) -> float:  # half the two-sided p, as if one-sided
        return mcnemar_p(won, lost) / 2

    calibrate._mcnemar.cache_clear()
    monkeypatch.setattr(calibrate, "mcnemar_p", one_sided)
    try:
        assert calibrate.false_positive_rate(TASKS, runs=2000, seed=SEED) > 0.06
    finally:
        calibrate._mcnemar.cache_clear()  # the cache holds the halved values


def test_the_docstring_examples_hold() -> None:
    assert doctest.testmod(calibrate).failed == 0


def test_quick_run_prints_the_tables(capsys: pytest.CaptureFixture[str]) -> None:
    calibrate.main(["--quick"])
    out = capsys.readouterr().out
    assert "200 runs per cell" in out
    assert "command: .venv/bin/python scripts/calibrate.py --quick" in out
    for title in ("1. Coverage", "2. McNemar false positives", "3. Power", "4. Power"):
        assert title in out
    overall = next(line for line in out.splitlines() if line.startswith("  all"))
    assert 0.90 <= float(overall.split()[-1].rstrip("%")) / 100 <= 0.99
