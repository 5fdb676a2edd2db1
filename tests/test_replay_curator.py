"""scripts/replay_curator.py: insights' recorded curator requests asked again by today's code, each
with the rules it showed, and the replies taken in full counted then and now."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from reflexion.cli import main

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).parent
SCRIPT = ROOT / "scripts" / "replay_curator.py"
ENV, MODEL = "python:prompt_model:WordsEnv", "python:prompt_model:PromptModel"


def replay(*args: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, str(SCRIPT), "--env", ENV, "--model", MODEL, *args]
    command += ["--embedder", "hash-64"]
    environ = os.environ | {"PYTHONPATH": path}
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=environ)


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("replay_curator", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_request_is_rebuilt_as_recorded_and_the_same_model_gives_the_same_count(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    argv = ["compare", "--env", ENV, "--model", MODEL, "--strategies", "insights"]
    argv += ["--episodes", "1", "--order", "stream", "--embedder", "hash-64"]
    assert main([*argv, "--no-progress", "--out", str(out)]) == 0
    trace = (out / "trace.jsonl").read_text()
    asked = sum(json.loads(x)["kind"] == "distill" for x in trace.splitlines())
    assert asked > 2  # failed tasks asked the curator
    done = replay(str(out), "--limit", "0")
    assert done.returncode == 0, done.stderr
    assert f"{asked} requests replayed (0 rebuilt differently, left out)" in done.stdout
    found = re.search(r"the run's replies (\d+) of (\d+), asked now (\d+) of (\d+)", done.stdout)
    assert found is not None, done.stdout
    then, n, now, _ = map(int, found.groups())
    assert n == asked and then == now  # a model that replies by its prompt: the same replies
    assert 0 < then < n  # the scripted replies mix applicable and refused operations
    assert (out / "trace.jsonl").read_text() == trace  # nothing written


def test_a_reply_is_taken_only_if_every_operation_applies() -> None:
    taken = script().taken

    def embed(texts: list[str]) -> list[list[float]]:  # "near" words share a direction
        return [[1.0, 0.0] if "near" in t else [0.0, 1.0] for t in texts]

    rules = ["Check the sign.", "Count near rows."]

    def ops(*o: dict[str, object]) -> str:
        return json.dumps({"reason": "r", "operations": list(o)})

    assert taken(ops({"op": "upvote", "rule": 1}), rules, embed)
    assert not taken(ops({"op": "add", "text": "check the sign."}), rules, embed)  # a copy
    assert not taken(ops({"op": "add", "text": "Use near joins."}), rules, embed)  # near-copy
    two = ops({"op": "add", "text": "New one."}, {"op": "add", "text": "New one."})
    assert not taken(two, rules, embed)  # the second copies the first
    assert not taken(ops({"op": "edit", "rule": 9, "text": "x"}), rules, embed)  # no rule 9
    assert not taken("no JSON at all", rules, embed)
    assert not taken(ops(), rules, embed)  # nothing asked
    assert taken(ops({"op": "edit", "rule": 1, "text": "Count near rows."}), rules, embed)


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["compare", "--env", ENV, "--model", MODEL, "--strategies", "single"]
    assert main([*argv, "--episodes", "1", "--no-progress", "--out", str(out)]) == 0
    cases = {
        "no insights curator request": replay(str(out)),
        "no such file": replay(str(tmp_path / "nothing")),
    }
    for said, done in cases.items():
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
        assert said in done.stderr.lower(), done.stderr
