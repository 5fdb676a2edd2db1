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
TASKS = 30
ARGS = [
    "compare",
    "--env",
    f"quadratic:{TASKS}",
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
    assert len(lines(out / "results.jsonl")) < 3 * TASKS * 2  # it really was cut off mid-run
    done = subprocess.run(
        [EXE, *ARGS, "--out", str(out)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    results = lines(out / "results.jsonl")
    keys = Counter((r["strategy"], r["task_id"], r["seed"]) for r in results)
    assert len(keys) == 3 * TASKS * 2 and set(keys.values()) == {1}  # every trial exactly once
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


# --- the designs that learn across tasks: a stream cut off by SIGKILL, then resumed ----------

TESTS = Path(__file__).parent
# insights asks about pairs only where a retry differs: with this model, after a reflection
DESIGNS = ["exemplars", "reflexion+insights", "expel", "cheatsheet", "bank", "skills", "reflexion"]
STREAM = [
    "compare",
    "--env",
    "python:prompt_model:words_with_programs",  # eight keyword tasks, programs allowed
    "--model",
    "python:prompt_model:PromptModel",  # a reply is a function of the prompt: reruns agree
    "--strategies",
    ",".join(DESIGNS),
    "--episodes",
    "3",
    "--order",
    "stream",
    "--embedder",
    "hash-64",
    "--no-progress",
    "--import",
    "crash_hook",  # REFLEXION_CRASH_AFTER=N: SIGKILL right after the N-th store write
]
RESULT = ("best_candidate", "best_score", "best_episode", "final_passed", "any_passed", "attempts")


def stream_command(out: Path, *more: str, **env: str) -> tuple[list[str], dict[str, str]]:
    path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH", "")]))
    return [EXE, *STREAM, "--out", str(out), *more], os.environ | {"PYTHONPATH": path} | env


def finish(out: Path, *more: str, **env: str) -> None:
    command, environ = stream_command(out, *more, **env)
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=environ)
    assert done.returncode == 0, done.stderr


def outcome(out: Path) -> tuple[list[tuple], list[tuple]]:
    """What a user would compare: each trial's result, and every lesson (its provenance, kind,
    text, votes and credit), in an order that depends neither on timing nor on the run's own id."""
    results = sorted(
        (
            r["strategy"],
            r["task_id"],
            r["seed"],
            *(r[f] for f in RESULT),
            [(c["score"], c["passed"]) for c in r["curve"]],
        )
        for r in lines(out / "results.jsonl")
    )
    with ChromaMemory.open(out / "memory") as store:
        stored, credit = store.reflections(), store.credits()
    assert len({r.id for r in stored}) == len(stored)
    lessons = sorted(
        (r.strategy, r.task_id, r.seed, r.episode, r.kind, r.text, r.votes, r.score, credit[r.id])
        + ((r.status, r.evidence["won"], r.evidence["lost"]) if r.status else ())
        for r in stored
    )  # each lesson's credit too: a resumed trial's recalls are counted once
    return results, lessons


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, list[str]]:
    """The stream run to its end: its folder, its trace's length, and its store writes."""
    out = tmp_path_factory.mktemp("designs") / "run"
    writes = out.parent / "writes.txt"
    finish(out, REFLEXION_CRASH_LOG=str(writes))
    return out, len(lines(out / "trace.jsonl")), writes.read_text().split()


# The cuts come from the crash hook, at a seeded write. A kill at a wall-clock moment was seen
# to end the resumed run with SIGTERM twice on a heavily loaded 2-core machine (cause not found);
# the drill's random kills above still cover that path.
@pytest.mark.parametrize(
    ("cut", "seed"), [("change", 1), ("change", 2), ("write", 1), ("write", 2)]
)
def test_a_stream_of_every_design_killed_and_resumed_ends_as_if_never_cut(
    tmp_path: Path, uninterrupted: tuple[Path, int, list[str]], cut: str, seed: int
) -> None:
    """Killed right after a random store write (any `write`, or a `change`: a vote, an
    edit, a rewrite or a drop of a lesson already stored, where only the undo on resume keeps
    the count right), then resumed: the same results and the same lessons as if never cut."""
    clean, _, writes = uninterrupted
    out = tmp_path / "run"
    changes = ("revise:add", "add:")  # a new lesson: not yet a change of a stored one
    points = [n for n, w in enumerate(writes, 1) if cut == "write" or w not in changes]
    after = random.Random(seed).choice(points)
    command, env = stream_command(out, REFLEXION_CRASH_AFTER=str(after))
    assert subprocess.run(command, env=env, capture_output=True).returncode == -signal.SIGKILL
    results = out / "results.jsonl"
    assert not results.exists() or len(lines(results)) < len(DESIGNS) * 8  # really cut off
    finish(out)
    assert outcome(out) == outcome(clean)  # no lesson lost, none twice, each vote counted once
    kinds = {lesson[4] for lesson in outcome(clean)[1]}
    assert {"skill", "item", "rule", "cheatsheet", "exemplar", "reflection"} <= kinds
    steps = lines(out / "trace.jsonl")
    kept = {s["data"]["id"] for s in steps if s["kind"] == "remember" and "id" in s["data"]}
    with ChromaMemory.open(out / "memory") as store:
        ids = {r.id for r in store.reflections()}
    boards = {s["data"]["id"] for s in steps if s["kind"] == "revise"}
    # every kept lesson is there (unless a vote retired it: a skill), and nothing else
    assert kept - boards <= ids <= kept | boards


GATE = ("--gate", "2")


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The stream with --gate 2, run to its end: its folder and its store writes."""
    out = tmp_path_factory.mktemp("gated") / "run"
    writes = out.parent / "writes.txt"
    finish(out, *GATE, REFLEXION_CRASH_LOG=str(writes))
    return out, writes.read_text().split()


@pytest.mark.parametrize("seed", [1, 2])
def test_a_gated_stream_killed_and_resumed_ends_as_if_never_cut(
    tmp_path: Path, gated: tuple[Path, list[str]], seed: int
) -> None:
    """As above, with every design's lessons gated: the resumed run replays, admits and rejects
    exactly as the uninterrupted one did (each verdict and its counts)."""
    clean, writes = gated
    out = tmp_path / "run"
    after = random.Random(seed).randrange(1, len(writes) + 1)
    command, env = stream_command(out, *GATE, REFLEXION_CRASH_AFTER=str(after))
    assert subprocess.run(command, env=env, capture_output=True).returncode == -signal.SIGKILL
    finish(out, *GATE)
    assert outcome(out) == outcome(clean)
    statuses = {lesson[9] for lesson in outcome(clean)[1] if len(lesson) > 9}
    assert statuses == {"admitted", "rejected"}  # the gate decided both ways
