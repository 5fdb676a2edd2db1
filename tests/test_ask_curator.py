"""scripts/curator.py ask: a curator asked again, by today's code, about a run's recorded attempts,
its reply printed beside what the run stored then."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from reflexion.cli import main

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).parent
SCRIPT = ROOT / "scripts" / "curator.py"
ENV, MODEL = "python:prompt_model:words_with_programs", "python:prompt_model:PromptModel"


def ask(*args: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH", "")]))
    command = [
        sys.executable,
        str(SCRIPT),
        "ask",
        "--env",
        ENV,
        "--model",
        MODEL,
        *args,
    ]  # args win
    environ = os.environ | {"PYTHONPATH": path}
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=environ)


def test_each_task_shows_what_was_stored_then_and_the_reply_now(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["compare", "--env", ENV, "--model", MODEL, "--strategies", "bank", "--episodes", "1"]
    argv += ["--order", "stream", "--embedder", "hash-64", "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    steps = [json.loads(x) for x in (out / "trace.jsonl").read_text().splitlines()]
    kept = [s for s in steps if s["kind"] == "remember" and s["data"].get("kind") == "item"]
    task_id = kept[0]["task_id"]
    done = ask(
        str(out), "--strategy", "bank", "--kind", "item", "--tasks", task_id, "--show-prompt"
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"== {task_id} (")
    [asked] = [s["prompt"] for s in steps if s["kind"] == "distill" and s["task_id"] == task_id]
    assert json.loads(lines.pop(1).removeprefix("  prompt:      ")) == asked  # as the run asked
    stored = [s["output"] for s in kept if s["task_id"] == task_id]
    assert [x.removeprefix("  stored then: ") for x in lines[1:-1]] == stored
    reply = json.loads(lines[-1].removeprefix("  asked now:   "))  # the curator's JSON, as asked
    assert reply["items"] and all(set(i) == {"title", "when", "do"} for i in reply["items"])
    assert len((out / "trace.jsonl").read_text().splitlines()) == len(steps)  # nothing written


def test_all_attempts_asks_as_bank_scaled_asked_during_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["compare", "--env", ENV, "--model", MODEL, "--strategies", "bank-scaled"]
    argv += ["--episodes", "2", "--order", "stream", "--embedder", "hash-64", "--no-progress"]
    assert main([*argv, "--out", str(out)]) == 0
    steps = [json.loads(x) for x in (out / "trace.jsonl").read_text().splitlines()]
    asked = next(s for s in steps if s["kind"] == "distill")
    task_id = asked["task_id"]
    common = [str(out), "--strategy", "bank-scaled", "--tasks", task_id, "--show-prompt"]
    done = ask(*common, "--all-attempts")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"== {task_id} (") and lines[0].count("; ") == 1  # two verdicts
    prompt = json.loads(lines[1].removeprefix("  prompt:      "))
    assert prompt == asked["prompt"]  # both attempts compared, word for word as the run asked
    assert "The 2 attempts above are tries at this same task" in json.dumps(prompt)
    one = ask(*common)  # without the flag: the final attempt alone, as `bank` asks
    assert one.returncode == 0, one.stderr
    assert "Attempt 2 (" not in one.stdout and "The attempt above" in one.stdout


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["compare", "--env", ENV, "--model", MODEL, "--strategies", "bank", "--episodes", "1"]
    argv += ["--embedder", "hash-64", "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    cases = {
        "not a task of --env": ask(str(out), "--strategy", "bank", "--tasks", "no-such-task"),
        "no recorded single attempt": ask(str(out), "--strategy", "single"),
        "no trace.jsonl": ask(str(tmp_path / "nothing"), "--strategy", "bank"),
        "unknown env": ask(str(out), "--strategy", "bank", "--env", "no-such-env"),
    }
    for said, done in cases.items():
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
        assert said in done.stderr.lower(), done.stderr
