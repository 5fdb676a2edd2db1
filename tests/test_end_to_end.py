"""Whole runs with the real local model: HumanEval in the sandbox, and the user's own tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envs.humaneval.env import load_problems
from reflexion.cli import main
from reflexion.core.runfolder import RunFolder
from reflexion.strategies.learning import json_object

pytestmark = pytest.mark.slow
SMALL = [
    "--model",
    "smollm2-135m",
    "--embedder",
    "hash-64",
    "--no-progress",
    "--max-tokens",
    "generate=160,refine=160,correct=160,feedback=80,reflect=60",
]
EXAMPLES = Path(__file__).parents[1] / "envs" / "examples" / "tasks.jsonl"


def test_no_prompt_of_a_humaneval_run_holds_a_held_out_test(tmp_path: Path, capsys) -> None:
    out = tmp_path / "he"
    code = main(
        [
            "compare",
            "--env",
            "humaneval:spread-2",
            "--episodes",
            "2",
            "--strategies",
            "single,resample,correct,self-refine,reflexion,reflexion-window",
            "--out",
            str(out),
            *SMALL,
        ]
    )
    assert code == 0, capsys.readouterr().err
    steps = RunFolder(out).steps()
    prompts = "\n".join(m.content for s in steps for m in s.prompt)
    assert "Complete the following Python function" in prompts  # real prompts were recorded
    held_out = [
        line.strip()
        for p in load_problems()
        if p.task_id in {s.task_id for s in steps}
        for line in p.test.splitlines()
        if line.strip().startswith("assert")
    ]
    assert len(held_out) > 5
    assert not [line for line in held_out if line in prompts]
    assert any(s.kind == "generate" and s.output.strip() for s in steps)  # the model wrote text
    report = (out / "report.html").read_text()
    assert "data:image/png;base64," in report and "reflexion-window" in report


def test_own_jsonl_tasks_run_end_to_end(tmp_path: Path, capsys) -> None:
    out = tmp_path / "own"
    code = main(
        [
            "compare",
            "--env",
            f"jsonl:{EXAMPLES}",
            "--episodes",
            "2",
            "--strategies",
            "single,reflexion",
            "--tasks",
            "4",
            "--out",
            str(out),
            *SMALL,
        ]
    )
    assert code == 0, capsys.readouterr().err
    results = RunFolder(out).results()
    assert len(results) == 2 * 4
    hidden = [
        t
        for line in EXAMPLES.read_text().splitlines()
        if line
        for t in _as_list(json.loads(line).get("hidden_tests", []))
    ]
    prompts = "\n".join(m.content for s in RunFolder(out).steps() for m in s.prompt)
    assert hidden and not [t for t in hidden if t in prompts]


def _as_list(tests: str | list[str]) -> list[str]:
    return tests.splitlines() if isinstance(tests, str) else tests


def test_the_designs_that_distill_run_a_stream_with_real_weights(tmp_path: Path, capsys) -> None:
    """SmolLM2-135M through every design that learns across tasks, on a Game of 24 stream of 4
    under the code protocol: its curator replies are held to their JSON schema by
    llama.cpp's grammar, so each is a JSON object; the run finishes, and every reply is kept or
    said in the trace to be unparsed."""
    out = tmp_path / "g24"
    designs = "exemplars,insights,cheatsheet,bank,proactive,skills,reflexion+skills"
    argv = ["compare", "--env", "game24:4", "--episodes", "1", "--order", "stream"]
    argv += ["--strategies", designs, "--out", str(out), "--model", "smollm2-135m"]
    argv += ["--embedder", "hash-64", "--no-progress"]
    argv += ["--max-tokens", "generate=48,distill=160,propose=64", "--code-rounds", "1"]  # short
    assert main(argv) == 0, capsys.readouterr().err
    results = RunFolder(out).results()
    assert len(results) == 7 * 4 and all(r.attempts == 1 for r in results)
    steps = RunFolder(out).steps()
    asked = [s for s in steps if s.kind == "distill"]
    # insights asks about a failure only once its task succeeds, and about successes 8 at a
    # time: none here (tests/test_expel_rules.py runs its curator with these weights)
    assert {s.strategy for s in asked} == {"cheatsheet", "bank"}
    assert all(s.output.lstrip().startswith("{") for s in asked)  # held to the schema
    assert any(json_object(s.output) for s in asked)  # at least one closed within its tokens
    assert any(s.kind == "refined" for s in steps if s.strategy == "proactive")  # counted
    # each reply that distilled was parsed: kept, or said in the trace why not, or (a whole
    # JSON object) it asked for no change. A run under load once got such a reply where a run
    # alone did not (the greedy replies differed; the cause was not established).
    said = {(s.strategy, s.task_id) for s in steps if s.kind in ("unparsed", "revised", "remember")}
    for s in asked:
        assert (s.strategy, s.task_id) in said or json_object(s.output) is not None, s.output


def test_every_gated_design_runs_a_stream_with_real_weights(tmp_path: Path, capsys) -> None:
    """SmolLM2-135M through each design that writes memory, with --gate 2, on a Game of 24
    stream of 3 under the code protocol: the run finishes; every lesson stored of a kind its
    design shows carries the gate's verdict, and every board change was admitted; each verdict's
    replays are of earlier tasks, and the replays' calls are in the trace."""
    out = tmp_path / "g24"
    designs = "exemplars,insights,cheatsheet,bank,skills"
    argv = ["compare", "--env", "game24:3", "--episodes", "1", "--order", "stream", "--gate", "2"]
    argv += ["--strategies", designs, "--out", str(out), "--model", "smollm2-135m"]
    argv += ["--embedder", "hash-64", "--no-progress"]
    # 320: at 160 the curator's JSON was cut off on every task with one thread (as each of two
    # test workers runs), so nothing reached the gate
    argv += ["--max-tokens", "generate=48,distill=320,propose=64", "--code-rounds", "1"]
    assert main(argv) == 0, capsys.readouterr().err
    folder = RunFolder(out)
    assert len(folder.results()) == 5 * 3
    steps = folder.steps()
    order = json.loads((out / "config.json").read_text())["stream_order"]
    gates = [s for s in steps if s.kind == "gate"]
    assert gates  # the sheet and the items are written after every task
    for s in gates:
        assert set(s.data["replayed"]) <= set(order[: order.index(s.task_id)])
        assert s.data["status"] in ("admitted", "rejected")
    replays = [s for s in steps if s.kind == "replay"]
    assert all(s.input_tokens > 0 and s.data["replayed"] != s.task_id for s in replays)
    shown = {"exemplars": "exemplar", "cheatsheet": "cheatsheet", "bank": "item", "skills": "skill"}
    stored = [s for s in steps if s.kind == "remember" and "id" in s.data]
    for s in stored:
        if s.data.get("kind", "reflection") == shown.get(s.strategy, "rule"):
            assert s.data.get("status") in ("admitted", "rejected"), s.data
    admitted = {(s.strategy, s.task_id) for s in gates if s.data["status"] == "admitted"}
    assert all((s.strategy, s.task_id) in admitted for s in steps if s.kind == "revise")
