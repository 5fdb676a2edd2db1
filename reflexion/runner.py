"""Tasks x strategies x seeds, run concurrently into one run folder, resumable.

From Python, with any langchain-core chat model:

    >>> from reflexion.runner import RunConfig, run
    >>> results = run(RunConfig(env="quadratic", strategies=("self-refine", "reflexion"),
    ...                         episodes=5, out="runs/demo"))          # doctest: +SKIP
    >>> run(RunConfig(env="my-env", strategies=("reflexion",), out="runs/x"),
    ...     model=ChatOpenAI(model="gpt-4o-mini"))                      # doctest: +SKIP

A run with `max_tokens_total` or `timeout_s` may stop early: the results returned then say why
in `.stopped`, and the same call again resumes it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envs.registry import make_env
from reflexion.budget import Budget, RunResults
from reflexion.errors import UsageError
from reflexion.prompts import ROLE_TOKENS
from reflexion.protocols import Actor, Env, Memory
from reflexion.records import Record, Task
from reflexion.runfolder import WINDOW_FILE, RunFolder
from reflexion.schedule import Trials, run_jobs
from reflexion.strategies import Strategy, parse_strategies

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

# Fields that change what a trial does: a resumed folder must agree on all of them. Retries and
# budgets are not among them, so a resume may raise them.
RESULT_FIELDS = (
    "temperature",
    "seed",
    "max_tokens",
    "env",
    "episodes",
    "tasks",
    "seeds",
    "k",
    "scope",
    "model",
    "memory",
    "chroma_url",
    "embedder",
)


LIMITS = {"episodes": 100, "tasks": 100_000, "seeds": 1000, "k": 100, "concurrency": 256}


@dataclass(frozen=True)
class RunConfig(Record):
    env: str
    strategies: tuple[str, ...]
    out: str
    episodes: int = 4
    tasks: int | None = None  # the first N tasks of the env; None = all
    seeds: int = 1
    k: int = 3
    scope: str = "task"
    model: str | None = None
    memory: str | None = None  # a Chroma store shared across runs; default: OUT/memory
    chroma_url: str | None = None
    embedder: str = "all-MiniLM-L6-v2"
    temperature: float = 0.8  # for best-of-N samples after the first; every other call is greedy
    seed: int = 0  # sampling seed
    max_tokens: dict[str, int] = dataclasses.field(default_factory=dict)  # per role overrides
    concurrency: int = 4
    retries: int = 3  # more tries of a model call after a transient failure (429, 5xx, timeout)
    call_timeout: float = 600.0  # seconds one model call may take before it counts as failed
    max_tokens_total: int | None = None  # stop after this many model tokens in one invocation
    timeout_s: float | None = None  # stop after this many seconds in one invocation
    run_id: str = ""

    def validate(self) -> None:
        parse_strategies(",".join(self.strategies))
        for name, most in LIMITS.items():
            value = getattr(self, name)
            if value is not None and not 1 <= value <= most:
                msg = f"--{name} must be between 1 and {most}, got {value}"
                raise UsageError(msg)
        if self.scope not in ("task", "global"):
            msg = f"--scope must be 'task' or 'global', got {self.scope!r}"
            raise UsageError(msg)
        if not 0.0 <= self.temperature <= 2.0 or not 0 <= self.seed < 2**31:
            msg = "--temperature must be in [0, 2] and --seed in [0, 2^31)"
            raise UsageError(msg)
        for role, limit in self.max_tokens.items():
            if role not in ROLE_TOKENS or not 1 <= limit <= 32_768:
                roles = ", ".join(ROLE_TOKENS)
                msg = f"--max-tokens {role}={limit}: roles are {roles}; limits 1..32768"
                raise UsageError(msg)
        self._validate_faults_and_budget()

    def _validate_faults_and_budget(self) -> None:
        if not 0 <= self.retries <= 100:
            msg = f"--retries must be between 0 and 100, got {self.retries}"
            raise UsageError(msg)
        seconds = {"call-timeout": self.call_timeout, "timeout": self.timeout_s}
        for name, value in seconds.items():
            if value is not None and not 0 < value <= 10**7:  # subtle: also refuses nan
                msg = f"--{name} must be a number of seconds above 0, got {value}"
                raise UsageError(msg)
        if self.max_tokens_total is not None and self.max_tokens_total < 1:
            msg = f"--max-tokens-total must be at least 1, got {self.max_tokens_total}"
            raise UsageError(msg)


def run(
    config: RunConfig,
    *,
    model: BaseChatModel | None = None,
    env: Env | None = None,
    progress: bool = False,
) -> RunResults:
    """Run (or resume) every trial of `config`; returns all results in the folder (if a budget
    stopped the run, those so far, and why in `.stopped`)."""
    config.validate()
    budget = Budget(config.max_tokens_total, config.timeout_s)  # the clock starts now
    env = env or make_env(config.env)
    tasks = _select_tasks(env, config.tasks)
    if model is None and config.model is None and not hasattr(env, "actor"):
        from reflexion.model_files import DEFAULT_MODEL

        config = dataclasses.replace(config, model=DEFAULT_MODEL)
    if model is not None and config.model is None:
        # subtle: a model object has no --model name; record what it is, so a resume with
        # another model is refused like one with another --model.
        name = getattr(model, "model_name", None) or getattr(model, "model", "")
        config = dataclasses.replace(config, model=f"object:{type(model).__name__}:{name}")
    folder = RunFolder(Path(config.out))
    folder.check_writable()
    config, saved = _bind_folder(folder, config)
    layers = getattr(env, "sandbox", None)
    if callable(layers) and "sandbox" not in saved:
        saved["sandbox"] = layers()  # what held the generated code, as the first session ran
    actor_for = _actors(env, config, model)
    memories = _memories(config, folder)
    try:
        folder.save_config(saved)  # only once every input has been checked
        done = {r.key for r in folder.results()}
        _forget_interrupted(folder.set_aside_unfinished(done), memories)
        jobs = [
            (Strategy(s), task, seed)
            for s in config.strategies
            for seed in range(config.seeds)
            for task in tasks
            if (s, task.id, seed) not in done
        ]
        trials = Trials(config, env, actor_for, memories, budget.tap(folder.write_step))
        cut = asyncio.run(run_jobs(jobs, trials, folder, budget, progress))
    finally:
        folder.close()
        for memory in memories.values():
            close = getattr(memory, "close", None)
            if close is not None:
                close()
    wanted = {
        (s, t.id, seed) for s in config.strategies for t in tasks for seed in range(config.seeds)
    }
    results = RunResults(r for r in folder.results() if r.key in wanted)
    results.stopped = budget.stop() if cut else None
    return results


def _select_tasks(env: Env, count: int | None) -> list[Task]:
    tasks = list(env.tasks())
    if count is not None and count > len(tasks):
        msg = f"--tasks {count} is more than the {len(tasks)} tasks of env {env.name!r}"
        raise UsageError(msg)
    return tasks[:count]


def _forget_interrupted(moved: list[dict[str, Any]], memories: dict[Strategy, Memory]) -> None:
    """Reflections written by trials that were cut off are superseded by their re-run: drop them
    from the store (their text stays in trace.interrupted.jsonl), so no one recalls them."""
    for strategy, memory in memories.items():
        ids = [
            s["data"]["id"] for s in moved if s["kind"] == "remember" and s["strategy"] == strategy
        ]
        if ids:
            memory.delete(ids)


def _bind_folder(folder: RunFolder, config: RunConfig) -> tuple[RunConfig, dict[str, Any]]:
    """The config to run with and the config.json to save. A new folder gets a new run id; an
    existing one must agree on every setting that changes results, and keeps its run id."""
    old = folder.load_config()
    if old is None:
        config = dataclasses.replace(config, run_id=config.run_id or uuid.uuid4().hex[:12])
        return config, config.to_dict() | {"created": time.time()}
    for name in RESULT_FIELDS:
        mine, theirs = getattr(config, name), old.get(name)
        if mine != theirs:
            msg = (
                f"{folder.path} was run with {name}={theirs!r}, not {mine!r}; "
                "use another --out folder or the same settings to resume"
            )
            raise UsageError(msg)
    strategies = list(dict.fromkeys([*old["strategies"], *config.strategies]))
    return dataclasses.replace(config, run_id=old["run_id"]), old | {"strategies": strategies}


def _actors(env: Env, config: RunConfig, model: BaseChatModel | None) -> Callable[[int], Actor]:
    if model is None and config.model is not None:
        from reflexion.models import load_model

        model = load_model(config.model)
    if model is not None:
        from reflexion.actor import CallCache, ChatActor
        from reflexion.retry import RetryPolicy

        load = getattr(model, "load", None)
        if callable(load):
            load()  # e.g. the local model: fail on a bad file before any trial starts
        chat, cache = model, CallCache()  # one cache: identical greedy prompts are answered once
        retry = RetryPolicy(retries=config.retries, call_timeout_s=config.call_timeout)
        return lambda seed: ChatActor(
            chat,
            temperature=config.temperature,
            seed=config.seed * 100_003 + seed,
            max_tokens=config.max_tokens,
            cache=cache,
            retry=retry,
        )
    scripted: Callable[[int], Actor] | None = getattr(env, "actor", None)
    if scripted is None:
        msg = f"env {env.name!r} needs a model: pass --model"  # unreachable from run()
        raise UsageError(msg)
    return scripted


def _memories(config: RunConfig, folder: RunFolder) -> dict[Strategy, Memory]:
    out: dict[Strategy, Memory] = {}
    if Strategy.REFLEXION_WINDOW in config.strategies:
        from memory.window import WindowMemory

        out[Strategy.REFLEXION_WINDOW] = WindowMemory(folder.path / WINDOW_FILE)
    if Strategy.REFLEXION in config.strategies:
        from memory.chroma import ChromaMemory
        from memory.embedders import embedder_for

        path = None if config.chroma_url else Path(config.memory or folder.path / "memory")
        embedder = embedder_for(config.embedder)
        out[Strategy.REFLEXION] = ChromaMemory(path, url=config.chroma_url, embedder=embedder)
        embedder.embed(["warm-up"])  # load the model now, not inside the first trial's timing
    return out
