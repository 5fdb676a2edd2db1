"""What the runs list, a run page, `compare` and `reflexion report` say of a run: a tie is called
a tie, a folder still being written or stopped before its end says how far it got, a reused
greedy answer costs every strategy that used it its time (as it costs them its tokens), and one
headline line says what the paired statistics found. Runs of web_runs' LearningModel, whose
outcomes are known in advance (`single` solves 8 of 16 tasks, `reflexion` with 2 episodes all)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from prompt_model import WordsEnv
from starlette.testclient import TestClient
from web_runs import LearningModel, learning_run

from reflexion import RunConfig, run
from reflexion.cli import main
from reflexion.core.runfolder import RunFolder
from reflexion.web.app import make_app
from reflexion.web.site import Site

BEAT = re.compile(
    r"reflexion beat single by \+50\.0 points on 16 tasks \(8 won, 0 lost, p = 0\.0078\), "
    r"\d+\.\dx the tokens"
)
TIE = re.compile(
    r"no strategy differed on 16 tasks \(all solved the same\); reflexion cost \d+\.\dx "
    r"single's tokens"
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/learns (reflexion solves all 16, single 8) and runs/same (1 episode: the same 8)."""
    root = tmp_path_factory.mktemp("lists")
    learning_run(root / "learns", ("single", "reflexion"), episodes=2)
    learning_run(root / "same", ("single", "reflexion"), episodes=1)
    return root


def client(root: Path) -> TestClient:
    return TestClient(make_app(Site.from_paths([root])), base_url="http://127.0.0.1")


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#x27;", "'")


def report(folder: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["report", str(folder)]) == 0
    return capsys.readouterr().out


def test_a_tie_is_called_a_tie_in_the_runs_list(runs: Path) -> None:
    page = text_of(client(runs).get("/").text)
    assert "50.0% tie: all 2 strategies" in page  # `same`: single and reflexion solved the same
    assert "100.0% reflexion" in page  # `learns`: reflexion alone is best
    assert "50.0% single" not in page


def test_the_headline_says_who_beat_whom_in_report_md_the_printout_and_the_page(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = report(runs / "learns", capsys)
    first = out.splitlines()[0]
    assert BEAT.fullmatch(first), first  # the first line, above the table
    assert out.splitlines()[1].startswith("strategy")
    md = (runs / "learns" / "report.md").read_text().splitlines()
    assert md[2] == f"**{first}**"  # under the title
    page = client(runs).get("/runs/learns").text
    assert page.index('class="headline"') < page.index("<h2>Results</h2>")
    assert BEAT.search(text_of(page))


def test_the_headline_says_no_strategy_differed_when_none_did(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = report(runs / "same", capsys).splitlines()[0]
    assert TIE.fullmatch(first), first
    assert TIE.search(text_of(client(runs).get("/runs/same").text))


def test_compare_prints_the_headline_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "q"
    argv = ["compare", "--env", "quadratic", "--strategies", "single,reflexion", "--embedder"]
    argv += ["hash-64"]
    assert main([*argv, "--episodes", "3", "--no-progress", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "no strategy differed significantly on 8 tasks (closest: reflexion vs single, "
        "+25.0 points, 2 won, 0 lost, p = 0.5)"
    )
    assert lines[1].startswith("strategy")
    assert (out / "report.md").read_text().splitlines()[2] == f"**{lines[0]}**"


class GatedModel(LearningModel):
    """LearningModel that waits, at its `hold_at`-th call, until `gate` is set."""

    gate: Any = None
    hold_at: int = 0
    calls: int = 0

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls += 1
        if self.calls == self.hold_at:
            self.gate.wait(60)
        return super()._generate(messages, *args, **kwargs)


def test_a_run_still_going_then_stopped_says_how_far_it_got(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs" / "going"
    gate = threading.Event()
    model = GatedModel(gate=gate, hold_at=4)  # 3 trials of single done, the 4th waits
    config = RunConfig(
        strategies=("single", "reflexion"),
        episodes=1,
        out=str(out),
        embedder="hash-64",
        concurrency=1,
    )
    going = threading.Thread(
        target=run, args=(config,), kwargs={"env": WordsEnv(4), "model": model}
    )
    going.start()
    try:
        deadline = time.monotonic() + 30
        while not (out / "results.jsonl").exists() or len(RunFolder(out).results()) < 3:
            assert time.monotonic() < deadline, "the run did not get to its 4th trial"
            time.sleep(0.05)
        web = client(tmp_path / "runs")
        listed = text_of(web.get("/").text)
        assert "in progress: 3 of 8 trials" in listed
        assert re.search(r"single \d+\.\d% \(3 trials\)", listed)  # each rate with its trials
        page = text_of(web.get("/runs/going").text)
        assert "in progress: 3 of 8 trials; so far, one strategy, single" in page
    finally:
        gate.set()
        going.join(60)
    assert not (out / "running.json").exists()
    assert "in progress" not in text_of(client(tmp_path / "runs").get("/").text)
    # as if killed after 5 trials: the results cut, and the mark of a process that is gone
    lines = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (out / "results.jsonl").write_text("".join(lines[:5]))
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    mark = {"pid": int(gone.stdout), "host": os.uname().nodename, "started": time.time()}
    (out / "running.json").write_text(json.dumps(mark))
    assert "stopped at 5 of 8 trials" in text_of(client(tmp_path / "runs").get("/").text)
    assert "stopped at 5 of 8 trials; so far, " in text_of(
        client(tmp_path / "runs").get("/runs/going").text
    )
    first = report(out, capsys).splitlines()[0]
    assert first.startswith("stopped at 5 of 8 trials; so far, no strategy differed"), first


class SlowModel(LearningModel):
    """LearningModel taking DELAY seconds a call."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        time.sleep(DELAY)
        return super()._generate(messages, *args, **kwargs)


DELAY = 0.3


def test_a_reused_answer_costs_each_strategy_its_time_and_the_run_its_time_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With one episode, the three strategies ask the same first prompt: the model answers it
    once, and each strategy is charged its tokens and now its seconds too."""
    out = tmp_path / "slow"
    config = RunConfig(
        strategies=("single", "self-refine", "reflexion"),
        episodes=1,
        out=str(out),
        embedder="hash-64",
        concurrency=1,
    )
    results = run(config, env=WordsEnv(4), model=SlowModel(), report=False)
    wall = {s: sum(r.wall_s for r in results if r.strategy == s) for s in config.strategies}
    reused = {s: sum(r.reused_calls for r in results if r.strategy == s) for s in wall}
    assert reused["single"] == 0 and reused["self-refine"] >= 4 and reused["reflexion"] >= 4
    assert all(seconds >= 4 * DELAY for seconds in wall.values()), wall
    spent = json.loads((out / "config.json").read_text())["spent_s"]
    assert 4 * DELAY <= spent < sum(wall.values())  # each answer was computed once
    assert results.headline.startswith("no strategy differed")  # as `report` prints it first
    out_text = report(out, capsys)
    assert (
        f"wall time spent: {spent:.1f} s (a reused answer is charged to each strategy" in out_text
    )
    assert "wall time spent:" in (out / "report.md").read_text()
