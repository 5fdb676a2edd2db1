"""Ctrl-C (SIGINT to the process group, as a terminal sends it) stops a run within seconds, with
exit code 130, a line saying how far it got and the command that resumes it; the resume then
finishes the run with every trial once and every record written before kept as it was.

A real `reflexion` in a subprocess each time: with a model whose calls block their threads
(fast), with the real local model, and with the real local model served over HTTP by
`reflexion models serve` (the request in flight is abandoned; the server goes on answering)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).parent
CLI = [sys.executable, "-m", "reflexion"]
PROMPT_ENV = "python:prompt_model:words_with_programs"  # eight keyword tasks
ENVIRON = os.environ | {
    "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH", "")]))
}


def start(args: list[str], logs: Path, ignore_sigint: bool = False, **env: str) -> Any:
    """`reflexion ARGS` in its own process group (a terminal's job), its output in files."""

    def ignored() -> None:  # as a script's `reflexion ... &` starts
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    return subprocess.Popen(
        [*CLI, *args],
        stdout=(logs.with_suffix(".out")).open("w"),
        stderr=(logs.with_suffix(".err")).open("w"),
        env=ENVIRON | env,
        start_new_session=True,
        preexec_fn=ignored if ignore_sigint else None,
    )


def wait_for(ready: Callable[[], bool], proc: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        if proc.poll() is not None:
            pytest.fail(f"exited with {proc.returncode} before {what}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"no {what} within {timeout_s} s")
        time.sleep(0.1)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def interrupt_after_first_result(proc: Any, out: Path, logs: Path) -> tuple[float, str]:
    """Ctrl-C once the first result is written: the seconds until the process ended, and what
    it wrote on stderr."""
    wait_for(lambda: bool(lines(out / "results.jsonl")), proc, 300, "first result")
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("still running 60 s after Ctrl-C")
    waited = time.monotonic() - sent
    assert proc.returncode == 130, logs.with_suffix(".err").read_text()
    return waited, logs.with_suffix(".err").read_text()


def check_interrupted_then_resume(
    proc: Any, out: Path, logs: Path, total: int, **env: str
) -> tuple[list[str], str]:
    """The interrupted run's promises, then its resume: the resume's stdout and its results."""
    waited, stderr = interrupt_after_first_result(proc, out, logs)
    assert waited < 5, f"took {waited:.1f} s to stop"
    before = lines(out / "results.jsonl")
    reached = re.search(rf"interrupted: (\d+) done, (\d+) to run in {re.escape(str(out))}", stderr)
    assert reached, stderr
    assert (int(reached[1]), int(reached[1]) + int(reached[2])) == (len(before), total)
    resume = re.search(r"^resume with: (reflexion .*)$", stderr, re.MULTILINE)
    assert resume, stderr
    _, *args = shlex.split(resume[1])
    again = subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=600, env=ENVIRON | env
    )
    assert again.returncode == 0, again.stderr
    after = lines(out / "results.jsonl")
    assert after[: len(before)] == before  # nothing written was lost or changed
    keys = [(r["strategy"], r["task_id"], r["seed"]) for r in map(json.loads, after)]
    assert len(keys) == len(set(keys)) == total  # every trial once
    steps = [json.loads(s)["id"] for s in lines(out / "trace.jsonl")]
    assert len(steps) == len(set(steps))  # and every step of the trace once
    return after, again.stdout


@pytest.mark.parametrize("sigint", ["default", "ignored at start"])
def test_ctrl_c_does_not_wait_for_calls_in_flight_and_the_resume_finishes(
    tmp_path: Path, sigint: str
) -> None:
    """Every call but the first blocks its thread for a minute (as a decode does): the run
    still stops within seconds, also when it began with SIGINT ignored (`cmd &` in a script)."""
    out = tmp_path / "run"
    args = ["run", "--env", PROMPT_ENV, "--strategy", "single", "--out", str(out)]
    args += ["--model", "python:prompt_model:StallingModel", "--no-progress"]
    proc = start(args, tmp_path / "first", sigint != "default", REFLEXION_TEST_STALL="1")
    check_interrupted_then_resume(proc, out, tmp_path / "first", total=8)


def test_the_resume_command_names_the_folder_a_run_chose_itself(tmp_path: Path) -> None:
    args = ["run", "--env", PROMPT_ENV, "--strategy", "single", "--no-progress"]
    args += ["--model", "python:prompt_model:StallingModel"]
    proc = subprocess.Popen(
        [*CLI, *args],
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=ENVIRON | {"REFLEXION_TEST_STALL": "1"},
        start_new_session=True,
    )
    wait_for(lambda: any((tmp_path / "runs").glob("*/results.jsonl")), proc, 120, "a result")
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    (folder,) = (tmp_path / "runs").iterdir()
    assert proc.returncode == 130
    assert f"--out runs/{folder.name}" in stderr, stderr


# --- the real local model, in process and served -------------------------------------------

SQL = ["compare", "--env", "sql:1", "--strategies", "single,reflexion", "--episodes", "2"]
SQL += ["--embedder", "hash-64", "--max-tokens", "generate=128,reflect=64", "--no-progress"]


@pytest.mark.slow
def test_ctrl_c_cancels_a_local_models_decode_and_the_resume_finishes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = start([*SQL, "--model", "smollm2-135m", "--out", str(out)], tmp_path / "first")
    check_interrupted_then_resume(proc, out, tmp_path / "first", total=2)


@pytest.fixture
def served(tmp_path: Path) -> Any:
    """`reflexion models serve smollm2-135m` on a free port: its --model line."""
    proc = start(["models", "serve", "smollm2-135m", "--port", "0"], tmp_path / "server")
    printed = tmp_path / "server.out"
    wait_for(lambda: "--model " in printed.read_text(), proc, 120, "the --model line")
    (line,) = [x for x in printed.read_text().splitlines() if x.startswith("--model ")]
    yield line.removeprefix("--model ")
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=10) == 0  # Ctrl-C stops the server too


@pytest.mark.slow
def test_ctrl_c_abandons_a_served_models_request_and_the_resume_finishes(
    tmp_path: Path, served: str
) -> None:
    from openai import OpenAI

    out = tmp_path / "run"
    proc = start([*SQL, "--model", served, "--out", str(out)], tmp_path / "first")
    results, table = check_interrupted_then_resume(proc, out, tmp_path / "first", total=2)
    assert "local model" in table  # a server on this machine costs no money
    url, _, name = served.removeprefix("openai-compatible:").partition("#")
    client = OpenAI(base_url=url, api_key="unused", timeout=60)
    reply = client.chat.completions.create(
        model=name, messages=[{"role": "user", "content": "Say hi."}], max_tokens=4
    )
    assert reply.choices[0].message.content  # the abandoned request left it answering
