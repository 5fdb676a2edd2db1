"""ExpeL's rule sources (`insights`, `expel`): a task's first success compared with each of its
failed attempts, one curator call a pair; every task's first success critiqued in chunks of 8,
one call a chunk; nothing from a task that never succeeded; and `expel`, the rules with the most
similar earlier successes beside them. Scripted models, a real Chroma store on disk, and for the
resume the real CLI in a subprocess killed with SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import KeywordEnv, scripted
from running import RunConfig, run

from envs.jsonl.env import JsonlEnv
from memory import ChromaMemory
from reflexion.cli import main
from reflexion.core.lesson_records import Reflection

TESTS = Path(__file__).parent


def ops(*operations: dict) -> str:
    return json.dumps({"reason": "what the attempts show", "operations": list(operations)})


def add(text: str) -> str:
    return ops({"op": "add", "text": text})


def steps(folder: Path, kind: str) -> list[dict]:
    lines = (folder / "trace.jsonl").read_text().splitlines()
    return [s for s in map(json.loads, lines) if s["kind"] == kind]


def stored(folder: Path) -> list[Reflection]:
    with ChromaMemory.open(folder / "memory") as memory:
        return memory.reflections()


def keywords(tmp_path: Path, strategy: str, replies: list[str], episodes: int) -> list[str]:
    """Run the two keyword tasks as a stream; the prompts the model was sent."""
    model = scripted(replies)
    config = RunConfig(
        env="keywords",
        strategies=(strategy,),
        out=str(tmp_path / "run"),
        episodes=episodes,
        order="stream",
        embedder="hash-64",
    )
    run(config, model=model, env=KeywordEnv())
    return ["\n".join(str(m.content) for m in p) for p in model.prompts]


def questions(path: Path, n: int) -> JsonlEnv:
    """`n` questions whose visible check passes any answer: every task succeeds at once."""
    rows = [{"id": f"q{i:02}", "question": f"What is item {i}?", "answer": "x"} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return JsonlEnv(str(path))


def test_a_task_that_never_succeeded_writes_no_rule(tmp_path: Path) -> None:
    """ExpeL compares a failure only with a success of the same task: two tasks that fail every
    attempt ask no curator and leave no rule (a scripted model with no curator reply left)."""
    prompts = keywords(tmp_path, "insights", ["apple", "apple", "cloud", "cloud"], episodes=2)
    assert len(prompts) == 4 and not any("Change the rules" in p for p in prompts)
    assert steps(tmp_path / "run", "distill") == []
    assert [r for r in stored(tmp_path / "run") if r.kind == "rule"] == []


def test_each_failed_attempt_is_compared_with_the_tasks_first_success(tmp_path: Path) -> None:
    """Two failures, then a success: two curator calls, each showing one failure and the
    success, the second seeing the rule the first added; a task solved at once asks none."""
    replies = ["pear", "apple", "apple river", add("Use every word."), add("Use the list.")]
    prompts = keywords(tmp_path, "insights", [*replies, "cloud stone"], episodes=3)
    first, second = prompts[3], prompts[4]
    for asked in (first, second):
        assert "Compare the failed attempt with the one that succeeded" in asked
        assert asked.count("failed the check") == 1 and "passed the check" in asked
    assert "(failed the check: missing words: apple, river):\npear" in first
    assert "(failed the check: missing words: river):\napple\n" in second
    assert "1. Use every word." in second  # the list as the first call left it
    assert len(steps(tmp_path / "run", "distill")) == 2
    rules = {r.text for r in stored(tmp_path / "run") if r.kind == "rule"}
    assert rules == {"Use every word.", "Use the list."}
    assert "1. Use every word." in prompts[5] and "2. Use the list." in prompts[5]


def test_successes_are_critiqued_eight_at_a_time_in_the_order_they_came(tmp_path: Path) -> None:
    """17 questions solved at once: one curator call after the 8th success shows the first 8,
    one after the 16th the next 8, and the 17th waits for a chunk; the rules reach the prompts
    after their call. The waiting successes are kept as exemplars."""
    answers = [f"Answer: solution{i:02}" for i in range(17)]
    replies = [*answers[:8], add("Rule one."), *answers[8:16], add("Rule two."), answers[16]]
    model = scripted(replies)
    config = RunConfig(
        strategies=("insights",),
        out=str(tmp_path / "run"),
        episodes=1,
        embedder="hash-64",
        order="stream",
    )
    results = run(config, model=model, env=questions(tmp_path / "qa.jsonl", 17))
    assert all(r.errors == () for r in results)  # no call beyond the script
    prompts = ["\n".join(str(m.content) for m in p) for p in model.prompts]
    chunks = [p for p in prompts if "Look at the successful attempts at the tasks above" in p]
    assert len(chunks) == 2 and len(steps(tmp_path / "run", "distill")) == 2
    for chunk, first in zip(chunks, (0, 8), strict=True):
        shown = [i for i in range(17) if f"solution{i:02}" in chunk]
        assert shown == list(range(first, first + 8))
        assert chunk.index(f"solution{first:02}") < chunk.index(f"solution{first + 7:02}")
        assert "Attempt 8 (passed the check)" in chunk and "Attempt 9" not in chunk
    assert "1. Rule one." in prompts[9] and "Rule one." not in prompts[7]
    assert "Rule two." in prompts[-1]
    kinds = sorted(r.kind for r in stored(tmp_path / "run"))
    assert kinds == ["exemplar"] * 17 + ["rule"] * 2


def test_expel_shows_the_rules_and_the_most_similar_earlier_success(tmp_path: Path) -> None:
    """`expel` is ExpeL's evaluation: the rule list, and the earlier tasks' successes recalled
    by the task's similarity, as worked examples; `insights` shows the rules alone."""
    replies = ["apple", "apple river", add("Use every word."), "cloud stone"]
    prompts = keywords(tmp_path, "expel", replies, episodes=2)
    last = prompts[3]
    assert "1. Use every word." in last.split("Write one sentence using the words: cloud")[0]
    assert "Solved examples of similar tasks" in last and "Solution:\napple river" in last
    alone = keywords(tmp_path / "alone", "insights", replies, episodes=2)[3]
    assert "1. Use every word." in alone and "Solved examples" not in alone


def crash_run(out: Path, data: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The real CLI: `insights` over the questions, answered by a model whose reply is a function
    of its prompt; `crash_hook` kills it after the store write REFLEXION_CRASH_AFTER names."""
    command = [sys.executable, "-m", "reflexion", "compare", "--env", f"jsonl:{data}"]
    command += ["--model", "python:prompt_model:PromptModel", "--strategies", "insights"]
    command += ["--episodes", "1", "--order", "stream", "--embedder", "hash-64"]
    command += ["--no-progress", "--import", "crash_hook", "--out", str(out)]
    path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH", "")]))
    environ = os.environ | {"PYTHONPATH": path} | env
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=environ)


def test_a_run_killed_before_its_chunk_asks_the_chunk_on_resume(tmp_path: Path) -> None:
    """Killed right after the 8th success was kept, before the chunk's curator call: the resumed
    run asks for that chunk once, and ends with the lessons of a run never cut."""
    data = tmp_path / "qa.jsonl"
    questions(data, 10)
    clean = tmp_path / "clean"
    assert crash_run(clean, data).returncode == 0
    cut = tmp_path / "cut"
    assert crash_run(cut, data, REFLEXION_CRASH_AFTER="8").returncode == -signal.SIGKILL
    assert steps(cut, "distill") == []  # cut before the chunk was asked
    done = crash_run(cut, data)
    assert done.returncode == 0, done.stderr
    asked = [s for s in steps(cut, "distill") if "Attempt 8 (passed" in s["prompt"][-1]["content"]]
    assert len(asked) == 1 and len(steps(clean, "distill")) == 1

    def lessons(folder: Path) -> list[tuple]:
        return sorted((r.kind, r.task_id, r.text, r.votes) for r in stored(folder))

    assert lessons(cut) == lessons(clean) and len(lessons(clean)) > 10  # a rule was written


@pytest.mark.slow
def test_expel_with_real_weights_critiques_its_first_8_successes_in_json(tmp_path: Path) -> None:
    """SmolLM2-135M on 9 questions (any answer passes the visible check): after the 8th success
    one curator call, its reply held to the rules' JSON schema by llama.cpp's grammar, then the
    9th prompt holds the earlier successes as worked examples."""
    data = tmp_path / "qa.jsonl"
    questions(data, 9)
    out = tmp_path / "run"
    argv = ["compare", "--env", f"jsonl:{data}", "--strategies", "expel", "--episodes", "1"]
    argv += ["--order", "stream", "--model", "smollm2-135m", "--embedder", "hash-64"]
    argv += ["--max-tokens", "generate=16,distill=200", "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    [asked] = steps(out, "distill")
    assert "Attempt 8 (passed the check)" in asked["prompt"][-1]["content"]
    assert asked["output"].lstrip().startswith("{")  # held to the schema
    generated = steps(out, "generate")
    assert len(generated) == 9 and "Solved examples" in generated[-1]["prompt"][-1]["content"]
