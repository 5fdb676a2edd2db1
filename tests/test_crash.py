"""Real processes: a run killed with SIGKILL at a random point resumes to exactly-once records,
and two runs share one memory store (embedded, and a `chroma run` server) without losing any."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from memory.chroma.store import ChromaMemory
from memory.window import WindowMemory

pytestmark = pytest.mark.slow
EXE = str(Path(sys.executable).with_name("reflexion"))
ARGS = [
    "compare",
    "--env",
    "quadratic:60",
    "--strategies",
    "self-refine,reflexion,reflexion-window",
    "--episodes",
    "5",
    "--seeds",
    "2",
    "--embedder",
    "hash-64",
    "--no-progress",
]


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def remembered(out: Path, strategy: str) -> set[str]:
    return {
        s["data"]["id"]
        for s in lines(out / "trace.jsonl")
        if s["kind"] == "remember" and s["strategy"] == strategy
    }


@pytest.mark.parametrize("seed", [1, 2])
def test_kill_9_at_a_random_point_then_resume(tmp_path: Path, seed: int) -> None:
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [EXE, *ARGS, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not (out / "results.jsonl").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(random.Random(seed).uniform(0.1, 1.5))
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(lines(out / "results.jsonl")) < 3 * 60 * 2  # it really was cut off mid-run
    done = subprocess.run(
        [EXE, *ARGS, "--out", str(out)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    results = lines(out / "results.jsonl")
    keys = Counter((r["strategy"], r["task_id"], r["seed"]) for r in results)
    assert len(keys) == 3 * 60 * 2 and set(keys.values()) == {1}  # every trial exactly once
    steps = lines(out / "trace.jsonl")
    assert len({s["id"] for s in steps}) == len(steps)  # every step exactly once
    assert {(s["strategy"], s["task_id"], s["seed"]) for s in steps} == set(keys)
    stored = [r.id for r in ChromaMemory.open(out / "memory").reflections()]
    assert sorted(stored) == sorted(remembered(out, "reflexion"))  # no stray, none lost
    window = [r.id for r in WindowMemory(out / "window.jsonl").reflections()]
    assert sorted(window) == sorted(remembered(out, "reflexion-window"))


def run_two(tmp_path: Path, store: list[str]) -> tuple[Path, Path]:
    outs = [tmp_path / "a", tmp_path / "b"]
    procs = [
        subprocess.Popen(
            [EXE, *ARGS, "--strategies", "reflexion", *store, "--out", str(o)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for o in outs
    ]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    return outs[0], outs[1]


def test_two_runs_share_an_embedded_store(tmp_path: Path) -> None:
    a, b = run_two(tmp_path, ["--memory", str(tmp_path / "store")])
    stored = sorted(r.id for r in ChromaMemory.open(tmp_path / "store").reflections())
    assert stored == sorted(remembered(a, "reflexion") | remembered(b, "reflexion"))


def test_two_runs_share_a_chroma_server(tmp_path: Path, chroma_server: str) -> None:
    a, b = run_two(tmp_path, ["--chroma-url", chroma_server])
    with ChromaMemory.open(url=chroma_server) as store:
        stored = sorted(r.id for r in store.reflections())
    assert stored == sorted(remembered(a, "reflexion") | remembered(b, "reflexion"))
