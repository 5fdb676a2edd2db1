"""The gate (--gate K, reflexion.trial.gate): a positive and a negative control, through the real
runner, and what a user sees of its verdicts.

The control (tests/gate_control.py): a scripted curator writes a helpful lesson on half the
tasks and a poisonous one on the other half; the poison turns a right answer wrong. Ungated, the
cheatsheet keeps the poison and falls below `single` with p < 0.01; gated, no design falls below
`single`, the helpful lessons are admitted and no poisonous one is. (`insights` writes rules
from successes only, 8 at a time, as ExpeL does: with one attempt a task, its first rule comes
late in 40 tasks; it is gated here, and must not fall below `single` either.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from commands import cli, one_line_error, said
from conftest import SECRET
from gate_control import POISON, stream
from test_positive_control import LESSON

from reflexion.cli import main
from reflexion.core.jsonl import read_jsonl
from reflexion.core.records import TaskResult
from reflexion.report.paired import pair

TASKS = 40
UNGATED = ("cheatsheet",)
GATED = ("cheatsheet", "bank", "insights")
ADMITS = ("cheatsheet", "bank")  # the designs that write on every task, and so soon


@pytest.fixture(scope="module")
def ungated(tmp_path_factory: pytest.TempPathFactory) -> list[TaskResult]:
    return stream(str(tmp_path_factory.mktemp("ungated") / "r"), ("single", *UNGATED), TASKS)


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[TaskResult]]:
    out = tmp_path_factory.mktemp("gated") / "r"
    return out, stream(str(out), ("single", *GATED), TASKS, gate=2)


def lessons(out: Path) -> list[dict[str, Any]]:
    """Every lesson of the run's memory, as `reflexion memory export` writes it."""
    exported = Path(f"{out}.jsonl")
    assert not main(["memory", "export", str(out), "--format", "jsonl", "--output", str(exported)])
    try:
        return [json.loads(line) for line in exported.read_text().splitlines()]
    finally:
        exported.unlink()


@pytest.mark.parametrize("design", UNGATED)
def test_ungated_a_half_poisoned_memory_falls_below_single(
    ungated: list[TaskResult], design: str
) -> None:
    p = pair(ungated, "single", design)
    assert p.tasks == TASKS and p.p_value < 0.01 and p.difference_high < 0


@pytest.mark.parametrize("design", GATED)
def test_gated_no_design_falls_below_single_and_the_helpful_lesson_is_admitted(
    gated: tuple[Path, list[TaskResult]], design: str
) -> None:
    out, results = gated
    p = pair(results, "single", design)
    assert p.tasks == TASKS and p.lost == 0
    mine = [r for r in lessons(out) if r["strategy"] == design and r["kind"] != "exemplar"]
    admitted = [r for r in mine if r["status"] == "admitted"]
    assert all(LESSON in r["text"] and POISON not in r["text"] for r in admitted)
    poison = [r for r in mine if POISON in r["text"]]
    assert all(r["status"] == "rejected" for r in poison)
    if design in ADMITS:
        assert p.difference > 0 and admitted and poison
    for r in poison:  # the evidence stays with the lesson
        e = r["evidence"]
        assert e["won"] <= e["lost"] and e["won"] + e["lost"] + e["tied"] == len(e["replayed"])
        assert r["task_id"] not in e["replayed"] and e["k"] == 2


def test_replays_are_charged_traced_and_never_see_a_held_out_signal(
    gated: tuple[Path, list[TaskResult]],
) -> None:
    out, results = gated
    steps = list(read_jsonl(out / "trace.jsonl"))
    assert all(SECRET not in json.dumps(s.get("prompt", ())) for s in steps)
    gates = [s for s in steps if s["kind"] == "gate"]
    assert gates and all(s["task_id"] not in s["data"]["replayed"] for s in gates)
    proposals = [(s["strategy"], s["task_id"]) for s in gates]
    assert len(proposals) == len(set(proposals))  # one reply, one lesson: judged once
    rejected = [s for s in steps if s["kind"] == "remember" and s["data"].get("status")]
    assert all(s["data"]["status"] in ("admitted", "rejected") for s in rejected)
    replays = [s for s in steps if s["kind"] == "replay"]
    assert {s["data"]["arm"] for s in replays} == {"with", "without"}
    for r in results:  # a trial's tokens are its steps' tokens, replays included
        own = [s for s in steps if (s["strategy"], s["task_id"]) == (r.strategy, r.task_id)]
        spent = sum(s.get("input_tokens", 0) + s.get("output_tokens", 0) for s in own)
        assert r.input_tokens + r.output_tokens == spent
    by_task = {(r.strategy, r.task_id): r for r in results}
    charged = {(s["strategy"], s["task_id"]) for s in replays}
    assert all(by_task[key].llm_calls > 1 for key in charged)  # the answer, plus replays
    config = json.loads((out / "config.json").read_text())
    assert config["gate"] == 2


def test_memory_list_show_and_why_say_the_gates_verdict(
    gated: tuple[Path, list[TaskResult]], capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = gated
    listing = said(["memory", "list", str(out), "--strategy", "cheatsheet"], capsys)
    assert "[rejected by the gate:" in listing and "[admitted by the gate:" in listing
    poison = next(r for r in lessons(out) if POISON in r["text"] and r["evidence"]["replayed"])
    shown = said(["memory", "show", str(out), poison["id"]], capsys)
    assert "status: rejected" in shown and "gate: rejected by the gate" in shown
    assert f"replayed {', '.join(poison['evidence']['replayed'])}" in shown
    later = ["--strategy", poison["strategy"]]
    why = said(["memory", "why", str(out), _next_task(poison["task_id"]), "1", *later], capsys)
    assert poison["id"] in why and "rejected by the gate" in why


def _next_task(task_id: str) -> str:
    return f"c{int(task_id[1:]) + 1:03}"


def test_a_gate_needs_a_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--env", "quadratic", "--strategy", "insights", "--gate", "2"]
    code, _, err = cli(capsys, *argv, "--out", str(tmp_path / "r"), "--no-progress")
    assert "--order stream" in one_line_error(code, err)
    assert not (tmp_path / "r").exists()


def test_the_dashboards_memory_page_shows_each_lessons_verdict(
    gated: tuple[Path, list[TaskResult]],
) -> None:
    from browser import launched, serving, skip_without_chromium

    out, _ = gated
    sync_api = skip_without_chromium()
    with serving(out.parent) as address, launched(sync_api) as chromium:
        page = chromium.new_page()
        page.goto(f"{address}/runs/{out.name}/memory?strategy=cheatsheet")
        rows = page.locator("table.lessons tbody tr").all_inner_texts()
        poison = [row for row in rows if POISON in row]
        assert poison and all("rejected by the gate" in row for row in poison)
        assert any("admitted by the gate" in row and LESSON in row for row in rows)


@pytest.mark.parametrize(
    ("more", "said_"),
    [
        (["--order", "stream", "--signal", "self-tests"], "--signal visible"),
        (["--order", "stream", "--executor", "ray", "--chroma-url", "http://h:1"], "local"),
        (["--order", "stream", "--gate", "-1"], "--gate"),
    ],
)
def test_a_gate_it_cannot_run_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], more: list[str], said_: str
) -> None:
    argv = ["run", "--env", "quadratic", "--strategy", "insights", "--gate", "2", *more]
    code, _, err = cli(capsys, *argv, "--out", str(tmp_path / "r"), "--no-progress")
    assert said_ in one_line_error(code, err)


def test_with_gate_rule_no_worse_a_lesson_that_ties_is_admitted_and_one_never_tried_is_not(
    tmp_path: Path,
) -> None:
    out = tmp_path / "r"
    stream(str(out), ("bank",), 16, gate=2, gate_rule="no-worse")
    assert json.loads((out / "config.json").read_text())["gate_rule"] == "no-worse"
    items = [r for r in lessons(out) if r["kind"] == "item"]
    assert all(r["evidence"]["rule"] == "won >= lost, over 1 replay or more" for r in items)
    tried = [r for r in items if r["evidence"]["replayed"]]
    tied = [r for r in tried if r["evidence"]["tied"] == len(r["evidence"]["replayed"])]
    assert tied and all(r["status"] == "admitted" for r in tied)  # `helps` rejects these
    untried = [r for r in items if not r["evidence"]["replayed"]]
    assert untried and all(r["status"] == "rejected" for r in untried)
