"""--order stream with --stream-seed: one seeded shuffle of the task order, the same for every
strategy, recorded in config.json and kept on resume; and the report's success by position."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from running import RunConfig, run
from starlette.testclient import TestClient

from reflexion.cli.main import main
from reflexion.core.runfolder import RunFolder
from reflexion.runner.schedule import stream_order
from reflexion.web.app import make_app
from reflexion.web.site import Site

IDS = [f"q{i}" for i in range(8)]  # the quadratic drill's tasks
FAST = ["--embedder", "hash-64", "--no-progress"]


def stream(out: Path, strategies: tuple[str, ...] = ("single", "reflexion-window"), **kw) -> None:
    base = {"env": "quadratic", "strategies": strategies, "out": str(out), "episodes": 2}
    run(RunConfig(**(base | {"order": "stream", "stream_seed": 3} | kw)))


def task_order(out: Path, strategy: str) -> list[str]:
    """The tasks in the order the strategy's trace steps reached them."""
    seen = [s.task_id for s in RunFolder(out).steps() if s.strategy == strategy]
    return list(dict.fromkeys(seen))


def exit_code(argv: list[str]) -> int | str | None:
    """main()'s return code, or the code argparse exited with."""
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def test_the_shuffle_is_fixed_by_its_seed_and_differs_between_seeds() -> None:
    assert stream_order(IDS, 3) == stream_order(list(IDS), 3)
    assert sorted(stream_order(IDS, 3)) == IDS and stream_order(IDS, 3) != IDS
    assert len({tuple(stream_order(IDS, seed)) for seed in range(5)}) == 5
    assert stream_order(IDS, None) == IDS  # no seed: the env's order


def test_every_strategy_runs_the_recorded_shuffle(tmp_path: Path) -> None:
    stream(tmp_path / "s")
    saved = json.loads((tmp_path / "s" / "config.json").read_text())
    assert saved["stream_seed"] == 3 and saved["stream_order"] == stream_order(IDS, 3)
    for strategy in ("single", "reflexion-window"):
        assert task_order(tmp_path / "s", strategy) == stream_order(IDS, 3)


def test_a_stream_without_a_seed_records_the_envs_order(tmp_path: Path) -> None:
    stream(tmp_path / "s", stream_seed=None)
    saved = json.loads((tmp_path / "s" / "config.json").read_text())
    assert saved["stream_seed"] is None and saved["stream_order"] == IDS
    assert task_order(tmp_path / "s", "single") == IDS


def test_a_resume_keeps_the_recorded_order(tmp_path: Path) -> None:
    out = tmp_path / "s"
    stream(out, ("single",))
    config = json.loads((out / "config.json").read_text())
    # stand-in for an order recorded by another version: the resume must follow the record,
    # not shuffle again
    recorded = list(reversed(IDS))
    (out / "config.json").write_text(json.dumps(config | {"stream_order": recorded}))
    stream(out, ("single", "reflexion-window"))
    assert task_order(out, "reflexion-window") == recorded
    assert json.loads((out / "config.json").read_text())["stream_order"] == recorded


def test_a_resume_with_another_seed_or_other_tasks_is_refused(tmp_path: Path, capsys) -> None:
    out = tmp_path / "s"
    argv = ["compare", "--env", "quadratic", "--strategies", "single", "--episodes", "2"]
    argv += ["--order", "stream", "--out", str(out), *FAST]
    assert main([*argv, "--stream-seed", "3"]) == 0
    before = (out / "results.jsonl").read_text()
    capsys.readouterr()
    assert main([*argv, "--stream-seed", "4"]) == 2
    assert "was run with stream_seed=3, not 4" in capsys.readouterr().err
    config = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps(config | {"stream_order": ["q0", "zz"]}))
    assert main([*argv, "--stream-seed", "3"]) == 2
    err = capsys.readouterr().err
    assert "streamed other tasks than env 'quadratic' has now" in err
    assert len(err.strip().splitlines()) == 1
    assert (out / "results.jsonl").read_text() == before  # nothing lost


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--order", "stream", "--stream-seed", "-1"], "--stream-seed must be between 0 and"),
        (["--order", "stream", "--stream-seed", "x"], "argument --stream-seed"),
        (["--stream-seed", "3"], "--stream-seed shuffles the order of a stream: it needs"),
    ],
)
def test_bad_stream_seeds_are_refused_in_one_line(
    tmp_path: Path, capsys, flags: list[str], says: str
) -> None:
    argv = ["compare", "--env", "quadratic", "--strategies", "single", *FAST]
    assert exit_code([*argv, "--out", str(tmp_path / "x"), *flags]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


@pytest.fixture(scope="module")
def streamed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quadratic drill as a shuffled stream, with its report."""
    out = tmp_path_factory.mktemp("stream") / "s"
    argv = ["compare", "--env", "quadratic", "--strategies", "single,self-refine,reflexion-window"]
    argv += ["--order", "stream", "--stream-seed", "3", "--episodes", "2", "--out", str(out)]
    assert main([*argv, *FAST]) == 0
    return out


def test_a_stream_report_shows_success_by_position_paired_against_single(streamed: Path) -> None:
    out = streamed
    assert (out / "success_by_position.png").read_bytes()[:4] == b"\x89PNG"
    md = (out / "report.md").read_text()
    assert "![Success by position in the stream](success_by_position.png)" in md
    section = md.split("## Success by position in the stream")[1].split("\n## ")[0]
    assert "| after tasks | single | self-refine | reflexion-window |" in section
    assert "shuffled by seed 3: " + ", ".join(stream_order(IDS, 3)) in section
    rows = [r.strip("|").split("|") for r in section.splitlines() if r.startswith("| ")][1:]
    assert [int(r[0]) for r in rows] == list(range(1, 9))  # one row per task of 8
    passed = {(r.strategy, r.task_id): r.final_passed for r in RunFolder(out).results()}
    for row in rows:
        n = int(row[0])
        first = stream_order(IDS, 3)[:n]
        for cell, strategy in zip(row[1:], ("single", "self-refine", "reflexion-window")):
            rate = sum(passed[strategy, t] for t in first) / n
            assert cell.strip().startswith(f"{rate * 100:.1f}%")
            if strategy != "single":
                won = sum(passed[strategy, t] > passed["single", t] for t in first)
                lost = sum(passed[strategy, t] < passed["single", t] for t in first)
                assert cell.strip().endswith(f"(+{won}/-{lost})")
    assert "(+1/-0)" in rows[-1][2]  # self-refine solved a task single did not
    stream = json.loads((out / "comparison.json").read_text())["stream"]
    assert [c["strategy"] for c in stream] == ["single", "self-refine", "reflexion-window"]
    assert "Success by position in the stream" in (out / "report.html").read_text()


def test_a_parallel_report_has_no_stream_section(tmp_path: Path) -> None:
    out = tmp_path / "p"
    argv = ["compare", "--env", "quadratic", "--strategies", "single,self-refine"]
    assert main([*argv, "--episodes", "2", "--tasks", "3", "--out", str(out), *FAST]) == 0
    assert "position in the stream" not in (out / "report.md").read_text()
    assert not (out / "success_by_position.png").exists()


def test_the_web_run_page_shows_success_by_position(streamed: Path) -> None:
    web = TestClient(make_app(Site.from_paths([streamed])), base_url="http://127.0.0.1")
    page = web.get("/runs/s").text
    section = page.split("<h2>Success by position in the stream</h2>")[1].split("<h2>")[0]
    assert "shuffled by seed 3: " + ", ".join(stream_order(IDS, 3)) in section
    assert "<th>after tasks</th><th>single</th><th>self-refine</th>" in section
    assert section.count("<tr>") == 1 + 8  # the header and one row per task
    assert "<td>8</td><td>0.0%</td><td>12.5% (+1/-0)</td>" in section
    assert 'src="/runs/s/plots/success_by_position.png"' in page
    plot = web.get("/runs/s/plots/success_by_position.png")
    assert plot.status_code == 200 and plot.content[:4] == b"\x89PNG"
