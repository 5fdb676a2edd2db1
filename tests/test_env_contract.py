"""The Env contract, run against every env: what the loop relies on from any of them."""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import Callable, Iterator
from importlib.resources import files
from pathlib import Path

import pytest
from conftest import ECHO_ENV, KeywordEnv, scripted
from running import run

from envs.registry import BUILTIN, env_names, make_env
from reflexion.core.protocols import Actor, Env, InteractiveEnv, SandboxedEnv, ScriptedEnv
from reflexion.core.records import Call, Score
from reflexion.runner.config import RunConfig


@pytest.fixture(scope="module")
def user_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("user")
    (folder / "contract_user_env.py").write_text(ECHO_ENV)
    sys.path.insert(0, str(folder))
    yield "contract_user_env"
    sys.path.remove(str(folder))


EXAMPLES = str(files("envs") / "examples" / "tasks.jsonl")
MAKERS: dict[str, Callable[[str], Env]] = {
    "quadratic": lambda user: make_env("quadratic:3"),
    "humaneval": lambda user: make_env("humaneval:2"),
    "jsonl": lambda user: make_env(f"jsonl:{EXAMPLES}"),
    "constrained": lambda user: make_env("constrained:3"),
    "textworld": lambda user: make_env("textworld:1,rooms=2,objects=3,length=2,steps=5"),
    "cooking": lambda user: make_env("cooking:1,steps=5"),
    "game24": lambda user: make_env("game24:3"),
    "sql": lambda user: make_env("sql:3"),
    "python": lambda user: make_env(f"python:{user}:Echo"),
    "keywords (a test env)": lambda user: KeywordEnv(),
}


def test_every_built_in_env_runs_this_contract() -> None:
    assert set(BUILTIN) <= set(env_names()) and set(BUILTIN) <= set(MAKERS)


@pytest.fixture(scope="module", params=sorted(MAKERS))
def env(request: pytest.FixtureRequest, user_module: str) -> Env:
    return MAKERS[request.param](user_module)


def test_an_env_has_a_name_and_tasks_with_unique_ids(env: Env) -> None:
    assert isinstance(env, Env) and isinstance(env.name, str) and env.name
    tasks = list(env.tasks())
    assert tasks and len({t.id for t in tasks}) == len(tasks)
    assert all(isinstance(t.prompt, str) and t.prompt.strip() for t in tasks)


@pytest.mark.parametrize("garbage", ["", "???", "\x00" * 3])
def test_garbage_is_a_failed_score_not_a_crash(env: Env, garbage: str) -> None:
    task = env.tasks()[0]
    for check in (env.score, env.evaluate):
        score = check(task, garbage)
        assert isinstance(score, Score) and isinstance(score.feedback, str)
        assert math.isfinite(score.value)
        if garbage != "???":  # "???" is an answer to a question-answer task
            assert not score.solved


def test_scores_are_deterministic(env: Env) -> None:
    task = env.tasks()[-1]
    assert env.score(task, "an answer") == env.score(task, "an answer")


def test_optional_hooks_keep_their_promise(env: Env) -> None:
    if isinstance(env, ScriptedEnv):
        actor = env.actor(0)
        assert isinstance(actor, Actor)
        call = asyncio.run(actor.generate(env.tasks()[0], (), sample=0))
        assert isinstance(call, Call) and not call.llm
    if isinstance(env, SandboxedEnv):
        layers = env.sandbox()
        assert {"network_isolated", "filesystem_isolated", "missing"} <= set(layers)


def test_every_env_runs_through_the_loop(env: Env, tmp_path: Path) -> None:
    out = str(tmp_path / "run")
    config = RunConfig(strategies=("reflexion",), out=out, episodes=2, tasks=1, embedder="hash-64")
    replies = ["no", "a lesson", "still no"]
    if isinstance(env, InteractiveEnv):  # an episode is a rollout: one reply per action
        replies = ["no"] * env.max_steps + ["a lesson"] + ["still no"] * env.max_steps
    model = None if isinstance(env, ScriptedEnv) else scripted(replies)
    [result] = run(config, env=env, model=model)
    assert result.env == env.name and result.attempts in (1, 2) and result.errors == ()
