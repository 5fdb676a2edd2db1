"""`memory audit` probes every kind of lesson: an episode of a design that learns across tasks is
rerun with all it was shown (a board as it was then, recalled exemplars or items, the task's own
reflections) and without one lesson. The model's reply is a function of its prompt
(tests/prompt_model.py), so a rerun that rebuilds the episode's prompt exactly scores what the
run recorded."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult
from prompt_model import PromptModel
from test_memory_edit import out_of

from reflexion.cli import main

SEEDED = "python:test_audit_kinds:SeededModel"
RUN = ["compare", "--env", "python:prompt_model:WordsEnv", "--model"]
RUN += ["python:prompt_model:PromptModel", "--order", "stream", "--episodes", "3"]
RUN += ["--embedder", "hash-64", "--no-progress"]


def audited(tmp_path: Path, strategy: str, capsys: pytest.CaptureFixture[str]) -> str:
    out = tmp_path / strategy
    assert main([*RUN, "--strategies", strategy, "--out", str(out)]) == 0
    return out_of(["memory", "audit", str(out), "--sample", "200"], capsys)


def probes(report: str) -> list[tuple[str, str]]:
    """(kind, effect) of each probe printed."""
    rows = re.findall(
        r"^[0-9a-f]{16} +(\w+) +\S+ +\d+ +\S+ +\S+ +(helped|hurt|same) ", report, re.M
    )
    return [(kind, effect) for kind, effect in rows]


@pytest.mark.parametrize(
    ("strategy", "kinds"),
    [
        ("reflexion+cheatsheet", {"cheatsheet", "reflection"}),
        ("reflexion+insights", {"rule", "reflection"}),  # insights: a pair after a retry
        ("bank", {"item"}),
        ("exemplars", {"exemplar"}),
    ],
)
def test_every_kind_is_probed_and_each_rerun_repeats_the_run(
    tmp_path: Path, strategy: str, kinds: set[str], capsys: pytest.CaptureFixture[str]
) -> None:
    report = audited(tmp_path, strategy, capsys)
    found = probes(report)
    total = re.search(r"audited (\d+) of (\d+) \(episode, lesson\) pairs", report)
    assert total is not None and int(total[1]) == int(total[2]) == len(found) > 0
    assert {kind for kind, _ in found} == kinds
    # the cheatsheet and the rules change during the run: each episode is rerun with the board
    # as it was then, so none is skipped as "edited", and every rerun gives the recorded score
    assert "skipped" not in report
    assert f"scored what the run recorded in {len(found)} of {len(found)}" in report


def lesson_kinds(run: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    listed = out_of(["memory", "export", str(run)], capsys)
    return {
        row["id"]: row.get("kind", "reflection") for row in map(json.loads, listed.split("\n")[:-1])
    }


def test_why_explains_each_kind_among_its_own_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    assert main([*RUN, "--strategies", "reflexion+bank", "--out", str(run)]) == 0
    kinds = lesson_kinds(run, capsys)
    steps = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
    # an episode whose two recalls (items from other tasks, the task's own reflections) found some
    found = {}
    for s in steps:
        if s["kind"] == "recall" and s["data"]["hits"]:
            found.setdefault((s["task_id"], s["episode"]), set()).add(s["data"].get("kind"))
    # ... and whose items' recall left another task's items out (which episodes do depends on
    # the replies, a hash of each prompt)
    left = {
        (s["task_id"], s["episode"])
        for s in steps
        if s["kind"] == "recall" and s["data"].get("kind") == "item" and s["data"].get("left_out")
    }
    task, episode = next(k for k, seen in found.items() if seen == {"item", None} and k in left)
    why = out_of(["memory", "why", str(run), task, str(episode)], capsys)
    items, reflections = why.split("\n\n")[:2]
    assert "item lessons: k=20, then nearest_task, scope global" in items  # one task's items
    [recall] = [
        s
        for s in steps
        if s["kind"] == "recall" and (s["task_id"], s["episode"]) == (task, episode)
        if s["data"].get("kind") == "item"
    ]
    cut_lines = items.split("cut off:")[1].splitlines()
    said = [line for line in cut_lines if "left out by nearest_task" in line]
    assert recall["data"]["left_out"]  # another task's items were found and not shown
    assert sorted(line.split()[0] for line in said) == sorted(recall["data"]["left_out"])
    assert "reflection lessons: k=3, scope task" in reflections
    for block, kind in ((items, "item"), (reflections, "reflection")):
        cut = block.split("cut off:")[1].split("then:")[0]
        listed = re.findall(r"^  ([0-9a-f]{16}) ", cut, re.M)
        assert all(kinds[i] == kind for i in listed), (kind, cut)
    assert any(kinds[i] == "reflection" for i in kinds) and any(k == "item" for k in kinds.values())


def test_why_explains_a_board_as_the_attempt_saw_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    assert main([*RUN, "--strategies", "cheatsheet", "--out", str(run)]) == 0
    steps = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
    episodes: dict[tuple[str, int], list[dict]] = {}
    for s in steps:
        episodes.setdefault((s["task_id"], s["episode"]), []).append(s)
    # an episode that saw the sheet, then read it again after its attempt to rewrite it
    task, episode = next(
        key
        for key, group in episodes.items()
        if [s["kind"] for s in group if s["kind"] in ("recall", "generate")][:3]
        == ["recall", "generate", "recall"]
        and group[0]["data"].get("hits")
    )
    why = out_of(["memory", "why", str(run), task, str(episode)], capsys)
    assert "cheatsheet lessons: the newest sheet" in why
    assert "cut off: none by search (a board is not searched" in why
    # the board read again after the attempt, to rewrite the sheet, is not explained as seen
    assert why.count("cheatsheet lessons:") == 1


class SeededModel(PromptModel):
    """PromptModel whose sampled replies depend on the sample's seed, as a real model's do."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if kwargs.get("temperature"):
            messages = [*messages, HumanMessage(f"(seed {kwargs.get('seed')})")]
        return super()._generate(messages, *args, **kwargs)


def test_a_sampled_episode_is_rerun_as_the_same_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Best-of-N with memory: episode n was the (n-1)-th sample, at --temperature with its own
    seed; the audit reruns it so, and repeats what the run recorded."""
    run = tmp_path / "run"
    argv = [a if a != "python:prompt_model:PromptModel" else SEEDED for a in RUN]
    assert main([*argv, "--strategies", "insights", "--out", str(run)]) == 0
    steps = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
    assert any(s["data"].get("sample") for s in steps if s["kind"] == "generate")
    report = out_of(["memory", "audit", str(run), "--sample", "200"], capsys)
    found = probes(report)
    assert any(kind == "rule" for kind, _ in found)
    assert f"scored what the run recorded in {len(found)} of {len(found)}" in report


def test_a_rule_no_longer_stored_is_probed_but_not_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rule gone from the store since (dropped at 0 votes, or forgotten) is rerun with the text
    the episode saw, and its effect is counted nowhere."""
    run = tmp_path / "run"
    assert main([*RUN, "--strategies", "reflexion+insights", "--out", str(run)]) == 0
    steps = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
    boards = [s for s in steps if s["kind"] == "recall" and s["data"].get("board")]
    shown = [h["id"] for s in boards for h in s["data"]["hits"]]
    gone = shown[0]
    assert main(["memory", "forget", str(run), gone, "--why", "test"]) == 0
    report = out_of(["memory", "audit", str(run), "--sample", "500"], capsys)
    assert re.search(rf"^{gone} +rule ", report, re.M)  # probed
    assert f"{gone}: not stored now" in report
    assert "skipped" not in report


def test_an_old_trace_without_board_texts_skips_what_changed_since(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trace written before boards kept their text: a board read is checked against the
    store, as any recall, and skipped with the reason where the sheet was rewritten since."""
    run = tmp_path / "run"
    # whole rewrites (--curation text): the sheet changes after most tasks
    argv = [*RUN, "--strategies", "cheatsheet", "--curation", "text", "--out", str(run)]
    assert main(argv) == 0
    trace = run / "trace.jsonl"
    steps = [json.loads(line) for line in trace.read_text().splitlines()]
    for s in steps:
        for hit in s["data"].get("hits", []) if s["kind"] == "recall" else []:
            hit.pop("text", None)
    trace.write_text("".join(json.dumps(s) + "\n" for s in steps))
    report = out_of(["memory", "audit", str(run), "--sample", "200"], capsys)
    total = re.search(r"audited (\d+) of (\d+)", report)
    skipped = report.count("the recalled lessons were edited since the run")
    # only the episodes after the sheet's last rewrite saw today's sheet: those are audited
    last = max(i for i, s in enumerate(steps) if s["kind"] == "revise")
    today = len({(s["task_id"], s["episode"]) for s in steps[last:] if s["kind"] == "recall"})
    assert total is not None and total[1] == str(today) and skipped == int(total[2]) - today > 0


def test_a_lesson_kept_out_of_the_prompt_by_memory_tokens_is_not_probed() -> None:
    """Rerun without a lesson the prompt never held, an episode's prompt is the same: the probe
    would cost two calls and count "same" as a measured effect."""
    from reflexion.core.records import Step
    from reflexion.curate.audit import recalls_in

    def step(kind: str, data: dict[str, object]) -> Step:
        return Step(f"x/{kind}", "run", "exemplars", "t1", 0, 2, kind, data=data)

    hits = [{"id": "shown", "text": "a"}, {"id": "over", "text": "b"}]
    steps = [
        step("recall", {"hits": hits, "kind": "exemplar"}),
        step("generate", {"over_bound": ["over"]}),
        step("score", {"value": 0.5}),
    ]
    [recall] = recalls_in(steps)
    assert recall.lessons == ("shown",) and recall.unshown == ("over",)
