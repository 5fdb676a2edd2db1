"""The CLI and scripts as a new user runs them: a curator asked where its reply can change
nothing, a --curator-model that is saved though it cannot work, and
scripts that answered bad input with a traceback, replayed another run's replies, or failed
only after hours of work."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reflexion.cli import main

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--embedder", "hash-64", "--no-progress"]
REFLEXION = ["run", "--env", "quadratic", "--strategy", "reflexion"]


def script(name: str, *argv: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(ROOT / "scripts" / name), *argv]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)


def insights_run(tmp_path: Path, order: str) -> tuple[list[str], list[str]]:
    """The trace's step kinds, and what the run echoed as it started."""
    from conftest import KeywordEnv, scripted

    from reflexion import RunConfig, arun

    # each task: a failed answer, then a passing one, then (in a stream, which asks) a curator
    # reply that adds one rule
    rule = json.dumps({"reason": "r", "operations": [{"op": "add", "text": "Use every word."}]})
    asked = [rule] if order == "stream" else []
    model = scripted(["apple", "apple river", *asked, "cloud", "cloud stone", *asked])
    config = RunConfig(
        env="keywords", strategies=("insights",), out=str(tmp_path / order), episodes=2,
        embedder="hash-64", order=order, concurrency=1,
    )  # fmt: skip
    echoed: list[str] = []
    import asyncio

    asyncio.run(arun(config, model=model, env=KeywordEnv(), report=False, echo=echoed.append))
    kinds = [json.loads(line)["kind"] for line in (tmp_path / order / "trace.jsonl").open()]
    return kinds, echoed


def test_insights_outside_a_stream_asks_no_curator_and_says_why(tmp_path: Path) -> None:
    kinds, echoed = insights_run(tmp_path, "parallel")
    assert "distill" not in kinds and kinds.count("not learned") == 2
    assert any("change their board only under --order stream" in line for line in echoed)
    kinds, echoed = insights_run(tmp_path, "stream")  # the same tasks learn in a stream
    assert kinds.count("distill") == 2 and "not learned" not in kinds
    assert not any("--order stream" in line for line in echoed)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--strategy", "insights", "--curator-model", "bogus-model"], "unknown --curator-model"),
        (["--strategy", "insights", "--curator-model", "qwen2.5-coder-0.5b"], "needs a model run"),
    ],
)
def test_a_curator_model_that_cannot_work_is_refused_and_nothing_is_saved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    out = tmp_path / "run"
    assert main(["run", "--env", "quadratic", "--tasks", "1", "--out", str(out), *argv, *FAST]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and len(err.splitlines()) == 1
    assert not (out / "config.json").exists()  # a later run with a good name is not refused


def test_a_curator_model_for_strategies_that_ask_no_curator_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--env", "quadratic", "--strategy", "single", "--out", str(tmp_path / "r")]
    model = ["--model", "python:reflexion.models.fake:FixedChatModel"]
    assert main([*argv, *model, "--curator-model", "qwen2.5-coder-0.5b", *FAST]) == 2
    err = capsys.readouterr().err
    assert "--curator-model writes the memory of insights" in err and "none of these" in err


def test_transfer_checks_every_model_name_before_part_a(tmp_path: Path) -> None:
    out = tmp_path / "t"
    done = script("transfer.py", "--env", "quadratic", "--out", str(out), "--test-model", "nope")
    assert done.returncode == 2 and "unknown --test-model 'nope'" in done.stderr
    assert not out.exists()  # part A never started
    (tmp_path / "file").write_text("")
    done = script("transfer.py", "--env", "quadratic", "--out", str(tmp_path / "file"))
    assert done.returncode == 2 and done.stderr.strip().endswith("is a file, not a folder")


def test_diff_of_arms_refuses_zero_blocks_and_a_missing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "r"
    argv = ["compare", "--env", "quadratic", "--strategies", "single,reflexion", "--tasks", "2"]
    assert main([*argv, "--out", str(run), *FAST]) == 0
    arms = [f"{run}:single", f"{run}:reflexion"]
    capsys.readouterr()
    assert main(["diff", *arms, "--blocks", "0"]) == 2
    assert "--blocks must be at least 1" in capsys.readouterr().err
    assert main(["diff", arms[0], f"{tmp_path / 'nowhere'}:single=b"]) == 2
    err = capsys.readouterr().err
    assert "nowhere: no such run folder" in err and len(err.strip().splitlines()) == 1
    assert main(["diff", *arms, "--blocks", "2"]) == 0


def test_calibrate_refuses_a_negative_seed_and_a_concentration_that_is_not_finite() -> None:
    for argv in (["--seed", "-1"], ["--concentration", "nan"], ["--concentration", "inf"]):
        done = script("calibrate.py", "--quick", *argv)
        assert done.returncode == 2 and "Traceback" not in done.stderr, argv
        assert "must be" in done.stderr.strip().splitlines()[-1]


def test_curator_parse_refuses_another_runs_replies_and_a_bad_model(tmp_path: Path) -> None:
    run = tmp_path / "r"
    assert main([*REFLEXION, "--tasks", "2", "--out", str(run), *FAST]) == 0
    out = tmp_path / "parse.jsonl"
    row = {"n": 0, "task": "another/q9", "kind": "rule", "form": "json", "used": True}
    out.write_text(json.dumps(row | {"why": "", "tokens": 1, "reply": "{}"}) + "\n")
    done = script("curator.py", "parse", str(run), "--out", str(out), "--limit", "1")
    assert done.returncode == 2 and "holds replies to another run's attempts" in done.stderr
    first = next(s for s in map(json.loads, (run / "trace.jsonl").open()) if s["kind"] == "score")
    other = row | {"task": first["task_id"], "model": "another-model", "reply": "{}"}
    out.write_text(json.dumps(other) + "\n")  # the same run's attempt, another model's reply
    done = script("curator.py", "parse", str(run), "--out", str(out), "--limit", "1")
    assert done.returncode == 2 and "holds replies of model 'another-model'" in done.stderr
    out.write_text("not json\n")
    done = script("curator.py", "parse", str(run), "--out", str(out))
    assert done.returncode == 2 and "line 1 is not a reply this script wrote" in done.stderr
    done = script("curator.py", "parse", str(run), "--out", str(tmp_path / "new.jsonl"), "--model",
                  "bogus")  # fmt: skip
    assert done.returncode == 2 and "unknown --model 'bogus'" in done.stderr
    assert "Traceback" not in done.stderr


def test_memory_why_on_a_store_folder_says_it_needs_a_run_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "r"
    assert main([*REFLEXION, "--tasks", "2", "--out", str(run), *FAST]) == 0
    capsys.readouterr()
    assert main(["memory", "why", str(run / "memory"), "q0", "2"]) == 2
    assert "no trace.jsonl in" in capsys.readouterr().err


def test_a_frozen_bank_asks_no_curator_and_the_run_says_so(tmp_path: Path) -> None:
    import asyncio

    from conftest import KeywordEnv, scripted

    from reflexion import RunConfig, arun

    config = RunConfig(
        env="keywords", strategies=("bank",), out=str(tmp_path / "r"), episodes=1,
        embedder="hash-64", order="stream", frozen_memory=True,
    )  # fmt: skip
    echoed: list[str] = []
    model = scripted(["apple", "cloud"])  # the answers only: a curator call would fail the run
    asyncio.run(arun(config, model=model, env=KeywordEnv(), report=False, echo=echoed.append))
    kinds = [json.loads(line)["kind"] for line in (tmp_path / "r" / "trace.jsonl").open()]
    assert "distill" not in kinds and kinds.count("not learned") == 2
    assert "note: the memory is frozen, so bank ask no curator" in "\n".join(echoed)


def test_a_folder_run_with_a_curator_model_resumes_with_another_arm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The curator checks apply to a new folder only: a folder already bound to a
    --curator-model takes an arm that asks no curator, as any resume adds an arm."""
    out = ["--out", str(tmp_path / "r"), "--tasks", "1", "--episodes", "1", *FAST]
    model = ["--model", "python:reflexion.models.fake:FixedChatModel"]
    curator = ["--curator-model", "python:reflexion.models.fake:FixedChatModel"]
    assert main(["run", "--env", "sql:2", "--strategy", "insights", *model, *curator, *out]) == 0
    capsys.readouterr()
    assert main(["run", "--env", "sql:2", "--strategy", "single", *model, *curator, *out]) == 0
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    assert config["strategies"] == ["insights", "single"]


def test_curator_parse_keeps_its_rule_list_as_a_run_does() -> None:
    """The script shows each reply the list the earlier replies left: an add of a rule's text
    again is refused, and an edit that copies another rule upvotes that rule, as in a run."""
    from reflexion.curate import curator_parse as module

    board = module.Kept()
    for text in ("Use every word.", "Check spelling.", "use every word."):
        module.apply_rule(board, "add", None, text)
    [first, second] = board.lessons
    module.apply_rule(board, "edit", second.id, "USE every word.")
    assert [(r.text, r.votes) for r in board.lessons] == [
        ("Use every word.", 3),
        ("Check spelling.", 2),
    ]
