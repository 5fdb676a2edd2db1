"""scripts/curator.py replay: insights' recorded curator requests asked again by today's code, each
with the rules it showed, and the replies taken in full counted then and now."""

from __future__ import annotations

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
SCRIPT = ROOT / "scripts" / "curator.py"
ENV, MODEL = "python:prompt_model:WordsEnv", "python:prompt_model:PromptModel"


def replay(*args: str, model: str = MODEL, env: str = ENV) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, str(SCRIPT), "replay", "--env", env, *args]
    command += ["--model", model] if model else []  # none: the run's
    command += ["--embedder", "hash-64"]
    environ = os.environ | {"PYTHONPATH": path}
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=environ)


def script() -> ModuleType:
    from reflexion.curate import curator_replay

    return curator_replay


# insights asks its curator about a task's failures once the task succeeds; with a model whose
# reply is a function of its prompt, only reflexion's reflections make a retry differ
PAIRS = "reflexion+insights"
TWENTY = "python:prompt_model:twenty_words"
CHUNK = "Look at the successful attempts at the tasks above"


def stream(out: Path, *more: str, strategy: str = PAIRS, env: str = ENV) -> str:
    argv = ["compare", "--env", env, "--model", MODEL, "--strategies", strategy]
    argv += ["--order", "stream", "--embedder", "hash-64", "--no-progress", "--out", str(out)]
    assert main([*argv, *more]) == 0
    return (out / "trace.jsonl").read_text()


def requests(trace: str) -> tuple[int, int]:
    """The curator requests of a trace: pairs of a failure and a success, chunks of successes."""
    asked = [s for x in trace.splitlines() if (s := json.loads(x))["kind"] == "distill"]
    chunks = sum(CHUNK in s["prompt"][-1]["content"] for s in asked)
    return len(asked) - chunks, chunks


def counts(stdout: str) -> tuple[int, ...]:
    board = re.search(r"taken in full: (\d+) of (\d+) by the board, (\d+) by this check", stdout)
    rest = re.search(r"agrees with the board on (\d+) of \d+; asked now: (\d+) of", stdout)
    assert board is not None and rest is not None, stdout
    return tuple(map(int, board.groups() + rest.groups()))


def test_every_pair_request_is_rebuilt_and_the_check_agrees_with_the_board(tmp_path: Path) -> None:
    out = tmp_path / "run"
    trace = stream(out, "--episodes", "3", env=TWENTY)
    asked, chunks = requests(trace)
    assert asked > 2 and chunks == 2  # pairs of a failure and a success; 16 successes
    done = replay(str(out), "--limit", "0", "--strategy", PAIRS, env=TWENTY)
    assert done.returncode == 0, done.stderr
    # a chunk's successes are not in its trial's attempts: it is not rebuilt
    assert f"{asked} requests replayed ({chunks} rebuilt differently, left out)" in done.stdout
    board, n, then, agree, now = counts(done.stdout)
    assert n == asked and agree == n and then == board  # the check here is the board's
    assert 0 < board < n  # the scripted replies mix applied and refused operations
    assert now == then  # a model that replies by its prompt: the same replies
    assert (out / "trace.jsonl").read_text() == trace  # nothing written


def test_a_request_after_several_attempts_is_rebuilt_too(tmp_path: Path) -> None:
    out = tmp_path / "run"
    trace = stream(out, "--episodes", "2")
    asked, chunks = requests(trace)
    done = replay(str(out), "--limit", "0", "--strategy", PAIRS, model="")  # the run's model
    assert done.returncode == 0, done.stderr
    assert f"{asked} requests replayed ({chunks} rebuilt differently, left out)" in done.stdout
    assert counts(done.stdout)[-1] == counts(done.stdout)[2]  # the same model: the same replies


def test_a_limit_spreads_the_requests_over_the_whole_run() -> None:
    spread = script().spread
    assert spread(list(range(108)), 4) == [0, 27, 54, 81]
    picked = spread(list(range(79)), 30)  # every second would stop at 58
    assert len(picked) == 30 and picked[-1] == 76 and len(set(picked)) == 30
    assert spread(list(range(3)), 5) == [0, 1, 2] and spread(list(range(3)), 0) == [0, 1, 2]


def test_a_reply_is_taken_only_if_every_operation_applies() -> None:
    taken = script().taken

    def embed(texts: list[str]) -> list[list[float]]:  # "near" texts share a direction
        where = [0 if "near" in t else 1 + sum(map(ord, t)) % 97 for t in texts]
        return [[float(i == w) for i in range(98)] for w in where]

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
    blank = ops({"op": "add", "text": "<a new general rule, in one sentence>"})
    assert not taken(blank, rules, embed)  # the prompt's placeholder copied back
    full = [f"Rule {n}." for n in range(10)]
    assert not script().copies("One more.", full, embed)  # so only the count refuses it:
    assert not taken(ops({"op": "add", "text": "One more."}), full, embed)  # 10 rules held
    assert taken(ops({"op": "add", "text": "One more."}), full[:9], embed)
    edited = ops({"op": "edit", "rule": 1, "text": "Fresh."}, {"op": "add", "text": "Fresh."})
    assert not taken(edited, rules, embed)  # the add copies the text the edit just wrote
    back = ops({"op": "edit", "rule": 1, "text": "Fresh."}, {"op": "add", "text": rules[0]})
    assert taken(back, rules, embed)  # the old text is free again


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    out, text = tmp_path / "run", tmp_path / "text"
    argv = ["compare", "--env", ENV, "--model", MODEL, "--strategies", "single"]
    assert main([*argv, "--episodes", "1", "--no-progress", "--out", str(out)]) == 0
    stream(text, "--episodes", "1", "--curation", "text", strategy="insights")
    sheet = tmp_path / "sheet"
    argv = ["compare", "--env", ENV, "--model", MODEL, "--strategies", "cheatsheet"]
    argv += ["--order", "stream", "--episodes", "1", "--no-progress", "--out", str(sheet)]
    assert main(argv) == 0
    cases = {
        "no insights curator request": replay(str(out)),
        "no such file": replay(str(tmp_path / "nothing")),
        "free-text replies": replay(str(text)),
        "without a list of rules": replay(str(sheet), "--strategy", "cheatsheet"),
        "--limit must be 0": replay(str(text), "--limit", "-1"),
    }
    for said, done in cases.items():
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
        assert said in done.stderr.lower(), done.stderr
