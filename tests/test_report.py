"""The report files a user opens: PNG plots, report.md, a self-contained report.html, and
`reflexion report RUN` rebuilding them."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest
from test_report_stats import HAND, F, trial

from reflexion.cli import main
from reflexion.core.records import TaskResult
from reflexion.report.build import write_report

PNG = b"\x89PNG\r\n\x1a\n"
FILES = (
    "comparison.json",
    "success_by_episode.png",
    "success_by_tokens.png",
    "report.md",
    "report.html",
)
NASTY = 'a<b>&"c'  # a strategy name that must not become markup
CONFIG = {"env": "my<env>", "model": "m&m", "episodes": 3, "run_id": "r1", "strategies": ["A"]}


def renamed(results: list[TaskResult], strategy: str) -> list[TaskResult]:
    return [TaskResult.from_dict(r.to_dict() | {"strategy": strategy}) for r in results]


def coloured_pixels(png: Path, rgb: tuple[int, int, int]) -> int:
    """How many pixels of the image are (close to) one colour."""
    import matplotlib.image

    image = matplotlib.image.imread(png)[:, :, :3] * 255
    return int((np.abs(image - np.array(rgb)).sum(axis=2) < 30).sum())


@pytest.fixture
def report_dir(tmp_path: Path) -> Path:
    results = [*HAND, *renamed(HAND[:3], NASTY), trial("t3", [(F, 5)], strategy=NASTY)]
    results += renamed([trial("t4", [(F, 5)])], NASTY)
    write_report(tmp_path, results, CONFIG, resamples=200)
    return tmp_path


def test_the_plots_are_pngs_with_a_line_per_strategy(report_dir: Path) -> None:
    for name in ("success_by_episode.png", "success_by_tokens.png"):
        data = (report_dir / name).read_bytes()
        assert data.startswith(PNG) and len(data) > 20_000
        # matplotlib's first two colours: the lines of strategy A and of NASTY
        assert coloured_pixels(report_dir / name, (31, 119, 180)) > 300, name
        assert coloured_pixels(report_dir / name, (255, 127, 14)) > 300, name


def test_report_html_is_self_contained_and_escapes_names(report_dir: Path) -> None:
    page = (report_dir / "report.html").read_text()
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert [base64.b64decode(i) for i in images] == [
        (report_dir / "success_by_episode.png").read_bytes(),
        (report_dir / "success_by_tokens.png").read_bytes(),
    ]
    assert "a&lt;b&gt;&amp;&quot;c" in page and NASTY not in page
    assert "my&lt;env&gt;" in page and "m&amp;m" in page and "<b>" not in page
    assert not re.search(r'(href|src)="(?!data:)', page)  # nothing fetched from elsewhere
    assert "<td>A</td>" in page and "60.0% [" in page  # final success of A, with its interval


def test_report_md_has_the_config_table_and_plots(report_dir: Path) -> None:
    md = (report_dir / "report.md").read_text()
    assert "- **run id**: r1" in md and "- **episodes (budget per task)**: 3" in md
    assert "| A | 5 | 60.0% [" in md and '| a&lt;b&gt;&amp;"c | 5 |' in md
    assert "](success_by_episode.png)" in md and "](success_by_tokens.png)" in md
    assert "## How to read this" in md


def test_comparison_json_has_intervals_costs_and_curves(report_dir: Path) -> None:
    a = json.loads((report_dir / "comparison.json").read_text())["strategies"][0]
    assert a["strategy"] == "A" and a["final_success"] == pytest.approx(0.6)
    assert a["final_low"] <= 0.6 <= a["final_high"] and a["any_success"] == pytest.approx(0.8)
    assert a["tokens_per_solved"] == pytest.approx(1210 / 3)
    assert a["calls_per_solved"] == pytest.approx(17 / 3)
    assert a["by_episode"]["y"] == pytest.approx([0.4, 0.4, 0.6])


def test_every_output_has_the_paired_comparison(report_dir: Path) -> None:
    pairs = json.loads((report_dir / "comparison.json").read_text())["pairs"]
    assert [(p["a"], p["b"]) for p in pairs] == [("A", NASTY)]
    # NASTY: t0-t2 as A, plus t3 and t4 failing. A passes t1, t3 (last), t4 (episode 1 only
    # counts in the curve; its final verdict is False): NASTY lost t3.
    assert (pairs[0]["tasks"], pairs[0]["won"], pairs[0]["lost"]) == (5, 0, 1)
    md = (report_dir / "report.md").read_text()
    assert "## Paired comparisons" in md and '| a&lt;b&gt;&amp;"c vs A | 5 |' in md
    page = (report_dir / "report.html").read_text()
    assert "<td>a&lt;b&gt;&amp;&quot;c vs A</td><td>5</td>" in page and "McNemar" in page


def compare(out: Path) -> int:
    return main(
        [
            "compare",
            "--env",
            "quadratic",
            "--strategies",
            "self-refine,reflexion-window",
            "--episodes",
            "4",
            "--out",
            str(out),
            "--embedder",
            "hash-64",
            "--no-progress",
        ]
    )


def test_compare_writes_the_report_and_report_rebuilds_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert compare(out) == 0
    printed = capsys.readouterr().out
    assert f"report: {out / 'report.html'}" in printed
    assert re.search(r"self-refine\s+8\s+\d+\.\d% \[\d+-\d+\]", printed)
    assert "paired, on the same tasks:" in printed
    # the scripted actor calls no model: its cost per solve is not shown as 0 (free)
    assert re.search(r"self-refine .* no model\s+no model", printed)
    assert re.search(r"reflexion-window vs self-refine .* no model", printed)
    assert re.search(r"reflexion-window vs self-refine\s+8\s+[+-]\d+\.\d pts", printed)
    first = {name: (out / name).read_bytes() for name in FILES}
    for name in FILES:
        (out / name).unlink()

    assert main(["report", str(out)]) == 0
    assert f"report: {out / 'report.html'}" in capsys.readouterr().out
    for name in FILES:
        assert (out / name).exists(), name
    # the intervals use a fixed seed: rebuilding gives the same numbers
    assert (out / "comparison.json").read_bytes() == first["comparison.json"]
    assert (out / "report.md").read_bytes() == first["report.md"]
    assert (out / "success_by_tokens.png").read_bytes().startswith(PNG)
    page = (out / "report.html").read_text()
    assert "self-refine" in page and "reflexion-window" in page and "scripted" in page


@pytest.mark.parametrize("make", [True, False])
def test_report_on_a_folder_without_results_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: bool
) -> None:
    folder = tmp_path / "empty"
    if make:
        folder.mkdir()
    assert main(["report", str(folder)]) == 2
    err = capsys.readouterr().err
    said = "no finished trials" if make else "empty does not exist"  # a folder, or no folder
    assert said in err and len(err.strip().splitlines()) == 1
    assert not any(folder.glob("*")) if make else not folder.exists()
