"""`reflexion.run` as the tests call it: without the report, since plotting takes a second or
two a run, and these tests look at the results and the run folder only; and `skills_stream`, a
stream of `skills` with a scripted model (Game of 24 unless another env is given), for the tests
of skills and their pages."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from conftest import scripted

from envs.game24 import Game24Env
from reflexion import Env, RunConfig
from reflexion import run as run_with_report
from reflexion.core.records import TaskResult

run = functools.partial(run_with_report, report=False)

__all__ = ["RunConfig", "run", "skills_stream"]


def skills_stream(
    out: Path,
    env: str | Env,
    replies: list[str],
    episodes: int = 1,
    code_rounds: int = 0,
    **more: Any,
) -> tuple[list[TaskResult], list[dict[str, Any]]]:
    """`skills` over a stream of `env` (a game24 spec, or any env) with a scripted model, into the
    run folder `out`: its results and its trace's steps."""
    config = RunConfig(
        strategies=("skills",),
        out=str(out / "r"),
        episodes=episodes,
        code_rounds=code_rounds,
        embedder="hash-64",
        order="stream",
        **more,
    )
    tasks = Game24Env.from_spec(env) if isinstance(env, str) else env
    results = run(config, env=tasks, model=scripted(replies))
    steps = [json.loads(line) for line in (out / "r" / "trace.jsonl").read_text().splitlines()]
    return results, steps
