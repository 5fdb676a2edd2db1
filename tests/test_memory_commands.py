"""`reflexion memory list|show|why` as a user reads a store: `list` filtered by task, strategy,
kind and limit, ids shortened to a unique prefix in every command, the task ids `list` prints
taken back by `forget` and `why`, what `show` says of a recall and of when a lesson was made, and
a memory object passed from Python found by the commands. Real runs of the quadratic drill with
the hash embedder, and a store imported from lessons with chosen ids."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from commands import FAST, cli, ids, one_line_error, quadratic, said, steps
from memory_run import listed, of_strategy
from running import RunConfig, run

from memory import ChromaMemory, HashEmbedder, WindowMemory
from reflexion.cli import main
from reflexion.core.lesson_records import Reflection


def lesson(rid: str, strategy: str, task: str, text: str = "Check the sign.") -> dict[str, Any]:
    return Reflection(rid, text, "run1", strategy, "quadratic", task, 0, 1, -2.0, 1e9).to_dict()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A Chroma store holding lessons with chosen ids: abc1 and abc2 share a prefix."""
    rows = [
        lesson("abc1aaaa", "reflexion", "q0"),
        lesson("abc2bbbb", "reflexion", "q1"),
        lesson("def3cccc", "reflexion", "q1", "Step half as far."),
        lesson("0ff4dddd", "reflexion-window", "q1"),
    ]
    export = tmp_path / "lessons.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = tmp_path / "store"
    assert main(["memory", "import", str(path), str(export), "--embedder", "hash-64"]) == 0
    return path


def test_memory_list_filters_by_task_strategy_and_limit(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["memory", "list", str(store)]
    out = said([*argv, "--task", "q1", "--strategy", "reflexion"], capsys)
    assert out.splitlines()[0].startswith("2 reflections in ")
    assert {line.split()[0] for line in out.splitlines()[1:]} == {"abc2bbbb", "def3cccc"}
    out = said([*argv, "--task", "quadratic/q1", "--limit", "1"], capsys)
    head, *rows = out.splitlines()
    assert head.startswith("3 reflections in ") and head.endswith("(the first 1: --limit 1)")
    assert len(rows) == 1
    err = said([*argv, "--strategy", "reflexon"], capsys, code=2)
    assert err.count("\n") == 1 and "no lessons of strategy 'reflexon'" in err
    assert "closest: reflexion" in err
    assert "no task 'q7'" in said([*argv, "--task", "q7"], capsys, code=2)


def test_a_unique_prefix_names_a_lesson_in_every_memory_command(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(store)
    assert said(["memory", "show", path, "def"], capsys).startswith("id: def3cccc\n")
    assert said(["memory", "edit", path, "def3", "--text", "Step less."], capsys) == (
        "edited def3cccc\n"
    )
    assert "def3cccc: 2 changes; now: Step less." in said(["memory", "history", path, "de"], capsys)
    assert said(["memory", "revert", path, "d"], capsys) == "reverted def3cccc: Step half as far.\n"
    assert said(["memory", "forget", path, "0f"], capsys) == "forgot 1 reflection\n"
    # forgotten, it is listed no more: its history is reached by its id, or a prefix of it
    assert "2 changes; now: (not stored)" in said(["memory", "history", path, "0ff4dddd"], capsys)
    assert "2 changes; now: (not stored)" in said(["memory", "history", path, "0f"], capsys)


def test_an_ambiguous_prefix_is_one_line_naming_the_matches_and_changes_nothing(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for verb in (["show"], ["forget"], ["edit", "--text", "x"], ["history"], ["revert"]):
        err = said(["memory", verb[0], str(store), "abc", *verb[1:]], capsys, code=2)
        assert err == (
            f"reflexion: error: id 'abc' is ambiguous in {store}: 2 lessons start with it "
            "(abc1aaaa, abc2bbbb)\n"
        )
    rows = said(["memory", "list", str(store)], capsys).splitlines()[1:]
    assert len(rows) == 4 and all("Check the sign." in r for r in rows if "abc" in r)


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


def test_4_the_printed_task_id_is_accepted_by_forget_and_why(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = listed(q, capsys)
    printed = next(line.split()[1] for line in lines.values() if line.split()[1].endswith("q2"))
    assert printed == "quadratic/q2"  # what `memory list` shows, and so what a user types
    code, out, err = cli(capsys, "memory", "forget", str(q), "--task", printed, "--dry-run")
    assert code == 0, err
    would = re.search(r"would forget (\d+)", out)
    assert would and int(would[1]) > 0, out
    assert listed(q, capsys) == lines  # still a dry run
    code, out, err = cli(capsys, "memory", "why", str(q), printed, "2", "--strategy", "reflexion")
    assert code == 0, err
    assert "recalled" in out


@pytest.mark.parametrize(
    "verb", [["forget", "--task", "quadratic/q2x", "--dry-run"], ["why", "quadratic/q2x", "2"]]
)
def test_4_a_task_id_matching_nothing_names_the_closest(
    q: Path, capsys: pytest.CaptureFixture[str], verb: list[str]
) -> None:
    code, _, err = cli(capsys, "memory", verb[0], str(q), *verb[1:])
    line = one_line_error(code, err)
    # the typed id is echoed; what must be left once it is taken out is a suggestion
    assert "q2" in line.replace("quadratic/q2x", "").replace("q2x", ""), line


def test_4_an_env_with_prefixed_task_ids_prints_the_prefix_once(
    constrained: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = Path(shutil.copytree(constrained, tmp_path / "c"))
    lines = listed(c, capsys)
    assert lines
    printed = [line.split()[1] for line in lines.values()]
    doubled = [t for t in printed if re.match(r"([^/]+)/\1/", t)]
    assert not doubled, doubled  # e.g. constrained/constrained/0
    code, out, err = cli(capsys, "memory", "forget", str(c), "--task", printed[0], "--dry-run")
    assert code == 0, err
    would = re.search(r"would forget (\d+)", out)
    assert would and int(would[1]) > 0, out


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


def test_8_show_prints_created_as_a_date_and_time(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for rid in (of_strategy(listed(q, capsys), s)[0] for s in ("reflexion", "reflexion-window")):
        _, out, _ = cli(capsys, "memory", "show", str(q), rid)
        created = next(line for line in out.splitlines() if line.startswith("created:"))
        assert re.match(r"created: \d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}", created), created


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
