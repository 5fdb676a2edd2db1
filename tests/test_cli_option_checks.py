"""The command line's options as a user types them: one name for how many lines `memory list`
and `memory search` print (`--limit`, with `--k` its alias), `memory list --run` and the run id
on every listing of a shared store (list, show, the web memory page), a "did you mean" for a
mistyped env or strategy, more tasks than the env has, options that contradict each other
refused in one line, and a warning for an option that does nothing for the env. Real runs of
the quadratic drill with the hash embedder."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from commands import said
from conftest import KeywordEnv
from langchain_core.language_models import BaseChatModel
from running import RunConfig, run
from starlette.testclient import TestClient

from reflexion import UsageError
from reflexion.cli import main

FAST = ["--embedder", "hash-64", "--no-progress"]
LINE = re.compile(r"^([0-9a-f]{16})\s")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    got = capsys.readouterr()
    return code, got.out, got.err


def drill(out: Path, capsys: pytest.CaptureFixture[str], *more: str) -> str:
    """A reflexion run of the quadratic drill (3 tasks); its run id."""
    argv = ["run", "--env", "quadratic", "--strategy", "reflexion", "--tasks", "3"]
    code, _, err = cli(capsys, *argv, "--out", str(out), *FAST, *more)
    assert code == 0, err
    return str(json.loads((out / "config.json").read_text())["run_id"])


def lesson_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if LINE.match(line)]


def test_memory_search_takes_limit_as_list_does_and_k_as_its_alias(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    drill(tmp_path / "run", capsys)
    for option in ("--limit", "--k"):
        code, out, err = cli(capsys, "memory", "search", str(tmp_path / "run"), "step", option, "2")
        assert code == 0, err
        assert len(out.splitlines()) == 2 and all(" | " in line for line in out.splitlines())
    code, out, err = cli(capsys, "memory", "list", str(tmp_path / "run"), "--limit", "2")
    assert code == 0, err
    assert len(lesson_lines(out)) == 2


def test_a_shared_store_says_which_run_wrote_each_lesson(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared = tmp_path / "shared"
    first = drill(tmp_path / "a", capsys, "--memory", str(shared))
    second = drill(tmp_path / "b", capsys, "--memory", str(shared))
    code, out, err = cli(capsys, "memory", "list", str(shared))
    assert code == 0, err
    every = lesson_lines(out)
    assert {f"run {first}" in line for line in every} == {True, False}  # both runs, each named
    assert all(f"run {first}" in line or f"run {second}" in line for line in every)
    code, out, err = cli(capsys, "memory", "list", str(shared), "--run", second)
    assert code == 0, err
    mine = lesson_lines(out)
    assert mine and len(mine) < len(every) and all(f"run {second}" in line for line in mine)
    rid = LINE.match(mine[0])[1]  # type: ignore[index]
    code, out, err = cli(capsys, "memory", "show", str(shared), rid[:8])
    assert code == 0, err
    assert f"run_id: {second}" in out
    code, _, err = cli(capsys, "memory", "list", str(shared), "--run", second[:-1] + "x")
    assert code == 2 and f"closest: {second}" in err and "\n" not in err.strip()

    from reflexion.web.app import make_app
    from reflexion.web.site import Site

    site = Site.from_paths([tmp_path / "a"], token="t0k")
    page = TestClient(make_app(site), base_url="http://127.0.0.1").get("/runs/a/memory")
    assert page.status_code == 200
    assert ">run</th>" in page.text
    assert first in page.text and second in page.text  # the shared store's two runs


def test_a_mistyped_env_gets_a_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "run", "--env", "humanevl", "--strategy", "single")
    assert code == 2
    assert "unknown env 'humanevl' (did you mean humaneval?)" in err
    code, _, err = cli(capsys, "run", "--env", "zzzzzz", "--strategy", "single")
    assert code == 2 and "did you mean" not in err and "unknown env 'zzzzzz'" in err


def test_memory_dir_and_chroma_url_together_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["run", "--env", "quadratic", "--strategy", "reflexion", "--out", str(out), *FAST]
    where = ["--memory", str(tmp_path / "shared"), "--chroma-url", "http://127.0.0.1:9"]
    code, _, err = cli(capsys, *argv, *where)
    assert code == 2
    assert "--memory DIR and --chroma-url URL" in err and len(err.strip().splitlines()) == 1
    assert not out.exists() and not (tmp_path / "shared").exists()  # nothing written


def test_an_option_that_does_nothing_for_the_env_is_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--env", "quadratic", "--strategy", "single", "--tasks", "1", *FAST]
    code, _, err = cli(capsys, *argv, "--out", str(tmp_path / "a"), "--task-tokens", "100")
    assert code == 0, err
    assert "warning: --task-tokens does nothing for env 'quadratic'" in err
    code, _, err = cli(capsys, *argv, "--out", str(tmp_path / "b"))
    assert code == 0 and "warning" not in err


class Down(BaseChatModel):
    """A model whose server is down (a transient error, as a lost connection is)."""

    @property
    def _llm_type(self) -> str:
        return "down"

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("reset by peer")


def test_refusals_say_all_tasks_suggest_a_strategy_and_count_one_attempt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = said(["run", "--env", "quadratic", "--strategy", "reflection"], capsys, code=2)
    assert "unknown strategy 'reflection'" in err and "did you mean reflexion?" in err
    err = said(["run", "--env", "quadratic", "--strategy", "single", "--tasks", "9"], capsys, 2)
    assert "more than the 8 tasks" in err and "leave --tasks out (tasks=None) for all 8" in err
    with pytest.raises(UsageError, match=r"tasks=None.*all tasks"):
        run(RunConfig(env="quadratic", strategies=("single",), tasks=0))
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "the first N tasks (default: all tasks" in " ".join(capsys.readouterr().out.split())
    config = RunConfig(strategies=("single",), tasks=1, retries=0, out=str(tmp_path / "d"))
    [result] = run(config, model=Down(), env=KeywordEnv())
    assert result.errors[0].endswith("(gave up after 1 attempt)")
