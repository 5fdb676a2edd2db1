"""Issue 32's defects, each as the new user met it: through `reflexion.cli.main`, `reflexion.run`
or the public Python API (defect 8, the web memory page's counts, is tested with the page)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import KeywordEnv, scripted
from langchain_core.language_models import BaseChatModel
from running import RunConfig, run

from memory import ChromaMemory, HashEmbedder, WindowMemory
from reflexion import UsageError
from reflexion.cli import main

FAST = ["--embedder", "hash-64", "--no-progress"]
README = Path(__file__).resolve().parents[1] / "README.md"


def said(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 0) -> str:
    """What the command printed: stdout when it succeeded, stderr when it failed."""
    capsys.readouterr()
    assert main(argv) == code
    out, err = capsys.readouterr()
    return out if code == 0 else err


def quadratic(out: Path, *more: str) -> Path:
    argv = ["run", "--env", "quadratic", "--strategy", "reflexion", "--tasks", "3", "--out"]
    assert main([*argv, str(out), *FAST, *more]) == 0
    return out


def ids(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    rows = said(["memory", "list", str(run_dir)], capsys).splitlines()[1:]
    return [line.split()[0] for line in rows]


def steps(folder: Path, kind: str) -> list[dict[str, Any]]:
    lines = (folder / "trace.jsonl").read_text().splitlines()
    return [s for s in map(json.loads, lines) if s["kind"] == kind]


# 1


def test_a_resume_with_fewer_strategies_reports_the_whole_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "q"
    argv = ["compare", "--env", "quadratic", "--tasks", "2", "--out", str(out), *FAST]
    assert main([*argv, "--strategies", "single,reflexion"]) == 0
    capsys.readouterr()
    assert main([*argv, "--strategies", "single"]) == 0  # resumes: nothing to run
    printed, err = capsys.readouterr()
    assert f"{out} also holds trials of reflexion: the comparison and the report cover" in err
    rows = [line.split()[0] for line in printed.split("\n\n")[0].splitlines()[2:]]  # headline
    assert rows == ["single", "reflexion"]  # the table covers what the folder holds
    saved = json.loads((out / "comparison.json").read_text())
    assert [s["strategy"] for s in saved["strategies"]] == ["single", "reflexion"]
    assert "| reflexion |" in (out / "report.md").read_text()
    config = RunConfig(env="quadratic", strategies=("single",), out=str(out), tasks=2)
    config = dataclasses.replace(config, embedder="hash-64")  # as the folder was run
    results = run(config)  # from Python, the same
    assert [s.strategy for s in results.summaries] == ["single", "reflexion"] and len(results) == 4


# 2


def test_history_and_revert_take_a_prefix_of_a_forgotten_lesson(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = quadratic(tmp_path / "q")
    gone = ids(out, capsys)[0]
    assert said(["memory", "forget", str(out), gone], capsys) == "forgot 1 reflection\n"
    history = said(["memory", "history", str(out), gone[:6]], capsys)
    assert history.startswith(f"{gone}: 1 change; now: (not stored)")
    assert said(["memory", "revert", str(out), gone[:6]], capsys).startswith(f"reverted {gone}")
    assert gone in ids(out, capsys)
    err = said(["memory", "history", str(out), "zzzz"], capsys, code=2)
    assert "no reflection with id 'zzzz'" in err and "closest" not in err  # none is close


# 3

RECALLED = r"recalled by reflexion task (\S+) seed 0 episode (\d+) \((.*)\)"


def test_show_compares_a_recall_with_the_previous_attempt_of_the_task_that_recalled_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = quadratic(tmp_path / "g", "--tasks", "4", "--scope", "global", "--order", "stream")
    scores = {(s["task_id"], s["episode"]): s["data"]["value"] for s in steps(out, "score")}
    checked = 0
    for rid in ids(out, capsys):
        shown = said(["memory", "show", str(out), rid], capsys)
        for task, episode, rest in re.findall(RECALLED, shown):
            before = scores.get((task, int(episode) - 1))
            after = f"{scores[(task, int(episode))]:.4g}"
            if before is None:  # the task's first attempt: nothing to compare it with
                assert f"first attempt scored {after}" in rest and "->" not in rest
            else:
                assert f"score {before:.4g} -> {after}" in rest
            checked += 1
    assert checked > 4


# 4


@pytest.mark.parametrize("text", ["", "   \n "])
def test_an_edit_to_no_text_is_refused_and_stores_nothing(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = quadratic(tmp_path / "q")
    first = ids(out, capsys)[0]
    before = said(["memory", "show", str(out), first], capsys)
    err = said(["memory", "edit", str(out), first, "--text", text], capsys, code=2)
    assert "the new text is empty" in err and len(err.strip().splitlines()) == 1
    assert said(["memory", "show", str(out), first], capsys) == before
    assert "0 changes" in said(["memory", "history", str(out), first], capsys)


# 5


def test_revert_to_restores_a_numbered_history_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = quadratic(tmp_path / "q")
    first = ids(out, capsys)[0]
    original = said(["memory", "show", str(out), first], capsys).split("\n\n")[1]
    for text in ("Text one.", "Text two.", "Text three."):
        said(["memory", "edit", str(out), first, "--text", text], capsys)
    history = said(["memory", "history", str(out), first], capsys)
    assert "#1 " in history and "#3 " in history and "before: Text two." in history
    back = said(["memory", "revert", str(out), first, "--to", "2"], capsys)
    assert back == f"reverted {first} to #2: Text one.\n"  # as it was before change #2
    back = said(["memory", "revert", str(out), first, "--to", "1", "--why", "start"], capsys)
    assert back == f"reverted {first} to #1: {original}\n"
    assert said(["memory", "revert", str(out), first], capsys) == f"reverted {first}: Text one.\n"
    err = said(["memory", "revert", str(out), first, "--to", "9"], capsys, code=2)
    assert "--to 9" in err and "#1 to #6" in err and len(err.strip().splitlines()) == 1


# 6


def test_a_memory_object_from_python_records_where_its_store_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    config = RunConfig(env="quadratic", strategies=("reflexion",), tasks=2, out=str(tmp_path / "a"))
    with ChromaMemory(store, embedder=HashEmbedder(64)) as memory:
        run(config, memory=memory)
    listed = said(["memory", "list", str(tmp_path / "a")], capsys)
    assert re.match(rf"\d+ reflections in {re.escape(str(store))} ", listed)
    rid = listed.splitlines()[1].split()[0]
    assert said(["memory", "show", str(tmp_path / "a"), rid], capsys).startswith(f"id: {rid}")
    assert "recalled:" in said(["memory", "why", str(tmp_path / "a"), "q0", "2"], capsys)
    other = RunConfig(env="quadratic", strategies=("reflexion",), tasks=1, out=str(tmp_path / "b"))
    run(other, memory=WindowMemory())  # a store with no path to record
    err = said(["memory", "list", str(tmp_path / "b")], capsys, code=2)
    assert "memory object passed from Python (WindowMemory)" in err and "no path" in err


# 7


def bank_run(tmp_path: Path, curation: str, replies: list[str]) -> Path:
    config = RunConfig(
        env="keywords",
        strategies=("bank",),
        out=str(tmp_path / curation),
        episodes=1,
        embedder="hash-64",
        order="stream",
        curation=curation,
    )
    run(config, model=scripted(replies), env=KeywordEnv())
    return tmp_path / curation


ECHOES = {  # the prompt's blanks, copied back
    "json": json.dumps(
        {
            "reason": "x",
            "items": [
                {
                    "title": "<a few words>",
                    "when": "<when it applies>",
                    "do": "<what to do, in one or two sentences>",
                },
                {"title": "*", "when": "*", "do": "*"},
            ],
        }
    ),
    "text": "TITLE: <a few words>\nWHEN: <when it applies>\n"
    "DO: <what to do, in one or two sentences>\nTITLE: *\nWHEN: *\nDO: *",
}
VAGUE = {  # a real item, but about nothing the task or its check named
    "json": json.dumps(
        {"reason": "x", "items": [{"title": "Care", "when": "always", "do": "be careful"}]}
    ),
    "text": "TITLE: Care\nWHEN: always\nDO: be careful",
}


@pytest.mark.parametrize("curation", ["json", "text"])
def test_bank_refuses_an_echo_of_its_placeholders_and_flags_a_vague_item(
    curation: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replies = ["apple", ECHOES[curation], "cloud", VAGUE[curation]]
    folder = bank_run(tmp_path, curation, replies)
    with ChromaMemory.open(folder / "memory") as memory:
        [item] = memory.reflections()  # the echoes were not stored
    assert item.text == "Care. When: always. Do: be careful."
    assert item.flag == "names nothing from the task or from what the check found"
    refused = [s for s in steps(folder, "unparsed") if "refused" in s["data"]]
    assert len(refused) == 2 and "<a few words>" in refused[0]["data"]["refused"]
    assert "[vague: " in said(["memory", "list", str(folder), "--kind", "item"], capsys)


# 9


def test_list_by_kind_or_strategy_leaves_out_a_store_the_filter_excludes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "q"
    argv = ["compare", "--env", "quadratic", "--tasks", "2", "--out", str(out), *FAST]
    assert main([*argv, "--strategies", "reflexion,reflexion-window"]) == 0
    every = said(["memory", "list", str(out)], capsys)
    assert "(reflexion-window)" in every  # both stores, unfiltered
    for option in (
        ["--strategy", "reflexion"],
        ["--kind", "reflection", "--strategy", "reflexion"],
    ):
        listed = said(["memory", "list", str(out), *option], capsys)
        heads = [line for line in listed.splitlines() if " reflections in " in line]
        assert len(heads) == 1 and "(reflexion-window)" not in listed
    listed = said(["memory", "list", str(out), "--strategy", "reflexion-window"], capsys)
    assert [line for line in listed.splitlines() if " reflections in " in line][0].endswith(
        "(reflexion-window)"
    )


# 10


def test_a_model_object_with_no_name_is_recorded_without_a_trailing_colon(tmp_path: Path) -> None:
    config = RunConfig(env="keywords", strategies=("single",), out=str(tmp_path / "a"), tasks=1)
    run(config, model=scripted(["apple river"]), env=KeywordEnv())
    assert json.loads((tmp_path / "a" / "config.json").read_text())["model"] == (
        "object:CountingModel"
    )
    run(config, model=scripted(["apple river"]), env=KeywordEnv())  # the same model: resumes


# 11


def test_the_readme_says_what_the_drill_takes_and_where_the_time_goes() -> None:
    text = " ".join(README.read_text(encoding="utf-8").split())
    drill = text[text.index("`reflexion compare --env quadratic --episodes 5`") :][:400]
    assert "about 10 s" not in drill  # 22 s measured, 11 of them loading the embedder
    assert "loading the embedding model" in drill


# 12


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
