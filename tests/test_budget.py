"""Token and time budgets: a run stops cleanly, keeps what finished, and resumes to completion."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import KeywordEnv
from openai_stub import StubServer
from running import RunConfig, run
from test_faults import FaultyModel, Slow

from envs.registry import register_env
from reflexion.cli import main
from reflexion.cli.common import EXIT_STOPPED
from reflexion.core.jsonl import read_jsonl
from reflexion.core.runfolder import INTERRUPTED, RunFolder

# 2 tasks x 2 seeds of self-refine; every answer misses a word, so each trial makes 3 calls:
# generate, feedback, refine (the second seed's are the same greedy prompts: reused, free).
CFG = {"env": "keywords", "strategies": ("self-refine",), "episodes": 2, "seeds": 2}


def test_a_token_budget_stops_the_run_and_a_larger_one_resumes_it(tmp_path: Path) -> None:
    cfg = RunConfig(out=str(tmp_path / "r"), concurrency=1, max_tokens_total=60, **CFG)
    model = FaultyModel(script=["only an apple"], tokens=(10, 3))  # 13 tokens a call
    first = run(cfg, model=model, env=KeywordEnv())
    assert first.stopped is not None and first.stopped.reason == "tokens"
    assert len(model.calls) == 5  # 3, and 2 into the next trial: 65 tokens
    assert [r.key for r in first] == [("self-refine", "k0", 0)]  # the finished trial is kept
    assert first.stopped.message().startswith("stopped: token budget of 60 spent (65 used)")

    model = FaultyModel(script=["only an apple"], tokens=(10, 3))
    again = run(
        RunConfig(**(cfg.to_dict() | {"max_tokens_total": 10_000})), model=model, env=KeywordEnv()
    )
    assert again.stopped is None
    assert Counter(r.key for r in again) == {
        ("self-refine", t, s): 1 for t in ("k0", "k1") for s in (0, 1)
    }
    folder = RunFolder(tmp_path / "r")
    ids = [s.id for s in folder.steps()]
    assert len(ids) == len(set(ids))  # the cut-off trial's steps once, from its re-run
    set_aside = read_jsonl(tmp_path / "r" / INTERRUPTED)  # generate, score, evaluate, feedback
    assert [(s["task_id"], s["kind"]) for s in set_aside][-1] == ("k1", "feedback")


def test_tokens_of_trials_in_flight_count(tmp_path: Path) -> None:
    cfg = RunConfig(out=str(tmp_path / "r"), concurrency=4, max_tokens_total=50, **CFG)
    model = FaultyModel(script=[Slow(0.05, "only an apple")], tokens=(10, 3))
    results = run(cfg, model=model, env=KeywordEnv())
    assert results.stopped is not None and results == []  # no trial got to finish 4 calls
    assert 50 <= results.stopped.used < 100


def test_a_time_budget_cancels_a_hanging_trial_and_keeps_the_rest(tmp_path: Path) -> None:
    cfg = RunConfig(
        env="keywords", strategies=("single",), out=str(tmp_path / "r"), concurrency=1, timeout_s=6
    )  # 6 s: long enough for k0 to answer on a loaded machine; k1 hangs for 120
    model = FaultyModel(script=["apple river", Slow(120.0)])  # k0 answers, k1 hangs
    start = time.monotonic()
    results = run(cfg, model=model, env=KeywordEnv())
    assert time.monotonic() - start < 60
    assert results.stopped is not None and results.stopped.reason == "time"
    assert [r.task_id for r in results] == ["k0"]
    assert results.stopped.message().startswith("stopped: time budget of 6 s spent (")

    resumed = run(
        RunConfig(**(cfg.to_dict() | {"timeout_s": None})),
        model=FaultyModel(script=["x"]),
        env=KeywordEnv(),
    )
    assert resumed.stopped is None and sorted(r.task_id for r in resumed) == ["k0", "k1"]


def cli(out: Path, url: str, *extra: str) -> int:
    args = ["run", "--env", "keywords", "--strategy", "single", "--concurrency", "1"]
    args += ["--model", f"openai-compatible:{url}#m", "--out", str(out), "--no-progress"]
    return main([*args, *extra])


def test_cli_exits_3_with_a_resume_hint_and_the_same_command_resumes(
    tmp_path: Path, capsys
) -> None:
    register_env("keywords", lambda arg: KeywordEnv())
    with StubServer(["only an apple"] * 3) as stub:  # 25 tokens a request
        code = cli(tmp_path / "r", stub.url, "--max-tokens-total", "30")
        out, err = capsys.readouterr()
        assert code == EXIT_STOPPED == 3
        assert err.strip().splitlines()[-1] == (
            "stopped: token budget of 30 spent (50 used); run the same command to resume"
        )
        assert "single" in out  # the table of what finished
        assert len(RunFolder(tmp_path / "r").results()) == 1
        assert cli(tmp_path / "r", stub.url, "--max-tokens-total", "1000") == 0
    assert len(stub.requests) == 3  # k0, k1 (cut off), k1 again
    assert sorted(r.task_id for r in RunFolder(tmp_path / "r").results()) == ["k0", "k1"]


def test_budgets_are_documented_and_validated(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "exit code 3" in " ".join(capsys.readouterr().out.split())
    for flag, value in [("--timeout", "0"), ("--max-tokens-total", "0"), ("--retries", "-1")]:
        code = main(["run", "--env", "quadratic", "--strategy", "single", flag, value])
        assert code == 2 and flag in capsys.readouterr().err
