"""What the report says about memory (reflexion.report.memory): its share of each role's
prompt tokens and the cached share, how often `proactive` refined and whether that changed the
held-out verdict, and the lessons each strategy wrote; printed by `reflexion report`, and in
comparison.json, report.md and report.html. Runs are streams of the keyword tasks answered by a
scripted model, as in test_experience.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import KeywordEnv, scripted
from running import RunConfig, run

from reflexion.cli import main
from reflexion.core.records import Step
from reflexion.report.memory import format_memory, memory_use


def stream(tmp_path: Path, strategy: str, replies: list[str], episodes: int = 2) -> Path:
    config = RunConfig(
        env="keywords",
        strategies=(strategy,),
        out=str(tmp_path / strategy),
        episodes=episodes,
        embedder="hash-64",
        order="stream",
        curation="text",
    )
    run(config, model=scripted(replies), env=KeywordEnv())
    return tmp_path / strategy


def report(folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, dict, str]:
    """What `reflexion report` prints, comparison.json's memory part, and report.md."""
    capsys.readouterr()
    assert main(["report", str(folder)]) == 0
    printed = capsys.readouterr().out
    memory = json.loads((folder / "comparison.json").read_text()).get("memory", {})
    return printed, memory, (folder / "report.md").read_text()


INSIGHTS = ["apple", "apple river", "ADD: Use every listed word.\nthis line is chatter"]
INSIGHTS += ["cloud", "cloud stone", "UPVOTE 1\nEDIT 7: no such rule"]


def test_the_memory_share_of_each_roles_prompt_is_what_the_trace_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = stream(tmp_path, "insights", INSIGHTS)
    printed, memory, md = report(folder, capsys)
    trace = [json.loads(line) for line in (folder / "trace.jsonl").read_text().splitlines()]
    generate = [s for s in trace if s["kind"] == "generate"]
    held = sum(s["data"].get("memory_tokens", 0) for s in generate)
    prompt = sum(s["input_tokens"] for s in generate)
    assert held > 0  # the rule went into k1's prompts
    [gen, distill] = memory["roles"]
    assert (gen["role"], gen["calls"], gen["prompt_tokens"]) == ("generate", len(generate), prompt)
    assert (gen["memory_tokens"], distill["role"], distill["memory_tokens"]) == (held, "distill", 0)
    share = f"{held / prompt:.1%}"
    assert "memory and prefix cache, as shares of each role's prompt tokens:" in printed
    assert re.search(rf"insights  generate\s+{len(generate)}\s+{prompt}\s+{share}\s+0\.0%", printed)
    assert f"| insights | generate | {len(generate)} | {prompt} | {share} | 0.0% |" in md
    html = (folder / "report.html").read_text()
    assert "Memory and prefix cache" in html and f"<td>{share}</td>" in html


def test_the_memory_line_counts_lessons_by_kind_and_unparsed_replies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    printed, memory, md = report(stream(tmp_path, "insights", INSIGHTS), capsys)
    # the first reply adds a rule (a chatter line unparsed), the second upvotes it and asks to
    # edit a rule the board does not hold (unparsed too); each task's success is kept, to wait
    # for a chunk of 8
    lessons = r"exemplar: 2 kept; rule: 1 added, 1 upvoted"
    assert re.search(rf"insights  {lessons}\s+0\s+2\s+0 of 2 \(2 in part\)\n", printed)
    [written] = memory["writes"]
    assert written["kinds"] == {"exemplar": {"kept": 2}, "rule": {"added": 1, "upvoted": 1}}
    assert (written["skipped"], written["unparsed"]) == (0, 2)
    assert (written["replies"], written["in_full"], written["in_part"]) == (2, 0, 2)
    assert (
        "## Memory written" in md and f"| insights | {lessons} | 0 | 2 | 0 of 2 (2 in part) |" in md
    )
    assert "refined themselves" not in printed  # insights writes no <refine> answers


def test_the_memory_line_of_each_kind_of_lesson(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exemplars = stream(tmp_path, "exemplars", ["apple river", "cloud stone"])
    assert "exemplars  exemplar: 2 kept" in report(exemplars, capsys)[0]
    sheet = ["apple river", "<sheet>Use all the listed words.</sheet>", "cloud stone", "no tags"]
    printed, memory, _ = report(stream(tmp_path, "cheatsheet", sheet), capsys)
    assert memory["writes"][0]["kinds"] == {"cheatsheet": {"added": 1}}
    assert re.search(r"cheatsheet: 1 added\s+0\s+1\s+1 of 2 \(1 changed nothing\)\n", printed)


def test_a_skipped_near_copy_is_not_counted_as_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bank does not store an item nearly the same as one kept for the same question: the
    report counts it apart, so its "kept" agrees with `memory list`."""
    note = "TITLE: All the words\nWHEN: a task lists words\nDO: use each one."
    twice = f"{note}\n{note[:-1]}, always."
    folder = stream(tmp_path, "bank", ["apple", twice, "cloud", "no"], 1)
    printed, memory, _ = report(folder, capsys)
    assert memory["writes"][0]["kinds"] == {"item": {"kept": 1, "not kept (a near-copy)": 1}}
    kept = r"item: 1 kept, 1 not kept \(a near-copy\)\s+0\s+1"
    assert re.search(rf"bank\s+{kept}\s+0 of 2 \(1 in part, 1 changed nothing\)\n", printed)


def test_the_memory_line_says_how_many_curator_replies_the_memory_took_in_full(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report counts replies parsed *and applied*: a reply whose every line became an
    edit is taken in full, one that changed nothing is said apart, and a strategy that asks no
    curator shows none."""
    replies = ["apple", "apple river", "ADD: Use every listed word."]
    replies += ["cloud", "cloud stone", "this line is chatter"]
    printed, memory, md = report(stream(tmp_path, "insights", replies), capsys)
    [written] = memory["writes"]
    assert (written["replies"], written["in_full"], written["in_part"]) == (2, 1, 0)
    lessons = r"exemplar: 2 kept; rule: 1 added"
    assert re.search(rf"insights  {lessons}\s+0\s+1\s+1 of 2 \(1 changed nothing\)\n", printed)
    assert "curator replies taken in full" in printed and "| 1 of 2 (1 changed nothing) |" in md
    exemplars = stream(tmp_path, "exemplars", ["apple river", "cloud stone"])
    assert re.search(r"exemplars  exemplar: 2 kept\s+0\s+0\s+-\n", report(exemplars, capsys)[0])


# k0: a plain answer, then a draft refined into the same verdict, then one refined into a pass;
# k1: a draft that passed held-out, refined into one that fails it (passing the visible check).
REFINE = "<think>{}<refine>look again</refine>{}</think><answer>{}</answer>"
PROACTIVE = [
    "apple",
    REFINE.format("apple", "<refine>and again</refine>", "apple"),
    REFINE.format("apple", "", "apple river zebra"),
    REFINE.format("cloud stone zebra", "", "cloud stone"),
]


def test_proactive_says_how_often_it_refined_and_what_refining_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    printed, memory, md = report(stream(tmp_path, "proactive", PROACTIVE, episodes=3), capsys)
    [refining] = memory["refining"]
    assert refining == {
        "strategy": "proactive",
        "answers": 4,
        "refined": 3,
        "refines": 4,
        "drafts": 3,
        "fixed": 1,
        "broke": 1,
        "same": 1,
    }
    assert "answers that refined themselves:" in printed
    assert re.search(r"proactive\s+4\s+3 \(75\.0%\)\s+4\s+3\s+1\s+1\s+1\n", printed)
    assert "| proactive | 4 | 3 (75.0%) | 4 | 3 | 1 | 1 | 1 |" in md


def test_a_run_without_memory_or_cache_shows_none_of_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    printed, memory, md = report(stream(tmp_path, "single", ["apple", "cloud"]), capsys)
    assert memory == {}
    for title in ("prefix cache", "refined themselves", "emory written"):
        assert title not in printed and title not in md


def step(kind: str, data: dict, tokens: int = 0, output: str = "", task: str = "t") -> Step:
    return Step("id", "run", "s", task, 0, 1, kind, input_tokens=tokens, output=output, data=data)


def test_the_cached_share_alone_shows_the_table_and_a_cut_off_reply_keeps_its_kind() -> None:
    call = {"reused": False, "retries": 0}
    steps = [
        step("generate", call | {"cached_tokens": 300}, tokens=400),
        step("reflect", call | {"cached_tokens": 0}, tokens=100),
        # a reply's board changes with no closing "revised" step: the kind is the lesson's own
        step("revise", {"id": "r1", "before": {"kind": "rule"}}, output="downvote r1: 0, dropped"),
    ]
    use = memory_use(steps, [])
    assert [(r.role, r.cached_tokens) for r in use.roles] == [("generate", 300), ("reflect", 0)]
    text = format_memory(use)
    assert re.search(r"s\s+generate\s+1\s+400\s+0\.0%\s+75\.0%", text)
    assert re.search(r"s\s+reflect\s+1\s+100\s+0\.0%\s+0\.0%", text)
    assert re.search(r"s\s+rule: 1 dropped", text)
