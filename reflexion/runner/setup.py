"""Everything a run needs before its first trial, checked before anything is written: the env and
its tasks, the strategies, the actor (a model, or the env's scripted one), the memories, and the
run folder bound to the config (a new run id, or the resumed folder's, whose settings must agree).

    >>> plan = prepare(RunConfig(env="quadratic", strategies=("reflexion-window",)),
    ...                Injected())                                        # doctest: +SKIP
    >>> plan.config.run_id                                                # doctest: +SKIP
    '3f9a0c1d2e4b'
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envs.registry import make_env
from memory.ranking import parse_ranking
from memory.registry import get_backend
from reflexion.core.errors import UsageError
from reflexion.core.protocols import (
    Actor,
    CodeRunningEnv,
    Env,
    InteractiveEnv,
    Memory,
    Preloadable,
    SandboxedEnv,
    ScriptedEnv,
    SelfTestingEnv,
)
from reflexion.core.records import Task
from reflexion.core.runfolder import RunFolder
from reflexion.core.version import VERSION, newer
from reflexion.runner.backends import backends_of, check_memory_use, open_memories, store_of
from reflexion.runner.config import FIELDS, RESULT_FIELDS, RunConfig, default_of
from reflexion.runner.parsers import Parsed, warn_unused
from reflexion.strategies import RUN_MEMORY, STRATEGIES, Strategy, parse_strategies

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from reflexion.actor.chat import ChatActor

ActorFor = Callable[[int], Actor]  # seed -> the actor of that seed's trials

# What config.json holds beside RunConfig's fields: when the folder was made and by which
# version, what held the generated code, the task order of --order stream, the one-time loads,
# the trials planned (tasks x strategies x seeds) and the seconds its sessions ran trials.
SAVED_KEYS = frozenset(
    {"created", "version", "sandbox", "stream_order", "loads", "planned", "spent_s"}
)


@dataclass(frozen=True)
class Injected:
    """Objects a Python caller passes instead of names in the config."""

    model: BaseChatModel | None = None
    env: Env | None = None
    memory: Memory | None = None  # used by every strategy that keeps lessons
    actor: Actor | ActorFor | None = None
    strategies: Sequence[Strategy] = ()
    curator: BaseChatModel | None = None  # writes the memory for other tasks (--curator-model)


@dataclass
class Prepared:
    """A run ready to start: nothing of it is written yet."""

    config: RunConfig
    env: Env
    tasks: list[Task]
    strategies: dict[str, Strategy]
    folder: RunFolder
    saved: dict[str, Any]  # what config.json will hold
    actor_for: ActorFor
    memories: dict[str, Memory] = field(default_factory=dict)  # by strategy name
    owned: list[Memory] = field(default_factory=list)  # opened here: closed by the runner
    # seconds of each one-time load (the model, a store's embedder), before any trial's clock
    loads: dict[str, float] = field(default_factory=dict)


def prepare(config: RunConfig, given: Injected) -> Prepared:
    """Check every input and open what the run needs; raises UsageError (nothing written)."""
    parsed = config.validate()
    if given.env is None and not config.env:
        msg = "no env: name one (RunConfig(env=...), --env) or pass an env object (env=...)"
        raise UsageError(msg)
    env = given.env or make_env(config.env)
    if given.memory is None:  # an unknown name fails even when no strategy keeps lessons
        get_backend(config.memory_backend)
    config = _named(config, env, given)
    _check_signal(config, env)
    warn_unused(config.model, config.task_tokens, env.name)
    strategies = parse_strategies(",".join(config.strategies), given.strategies)
    check_memory_use(strategies, given.memory)
    tasks = _select_tasks(env, config.tasks)
    folder = RunFolder(Path(config.out or default_out(config.env)))
    config = dataclasses.replace(config, out=str(folder.path))
    backends = backends_of(config, strategies, given.memory)
    # an unknown backend of a strategy fails here, before anything is written
    files = [f for name in set(backends.values()) for f in get_backend(name).files]
    folder.check_writable(files)
    if folder.load_config() is None:  # a folder run before keeps its settings, so it resumes
        _check_curator(config, strategies, given)
    config, saved = bind_folder(folder, config, parsed)
    if isinstance(env, SandboxedEnv) and callable(env.sandbox) and "sandbox" not in saved:
        saved["sandbox"] = env.sandbox()  # what held the generated code, as the first session ran
    named = {s.name: s for s in strategies}
    if _all_done(folder, config, tasks):  # a finished folder run again: nothing to load
        return Prepared(config, env, tasks, named, folder, saved, _nothing_to_run)
    loads: dict[str, float] = {}
    actor_for = _actors(env, config, given, loads)
    plan = Prepared(config, env, tasks, named, folder, saved, actor_for, loads=loads)
    plan.memories, plan.owned = open_memories(config, parsed, folder.path, backends, loads)
    if given.memory is not None:  # it stands in for the run's memory
        plan.memories |= {s.name: given.memory for s in strategies if s.memory == RUN_MEMORY}
    if plan.loads:
        saved["loads"] = plan.loads  # this session's: a resume loads again
    return plan


def _check_signal(config: RunConfig, env: Env) -> None:
    if config.signal != "visible" and not isinstance(env, SelfTestingEnv):
        msg = (
            f"--signal {config.signal} needs an env of code tasks whose candidates can run the "
            f"model's own tests (humaneval, jsonl code tasks); env {env.name!r} has none"
        )
        raise UsageError(msg)


def _all_done(folder: RunFolder, config: RunConfig, tasks: Sequence[Task]) -> bool:
    """Has every trial of `config` a result in `folder`, with no trial cut off there? Then a run
    has nothing to do (not even undo a cut-off trial's lessons), so it loads no model or store.
    False for a run of no tasks, whose model and store are still checked by loading them."""
    done, jobs = {r.key for r in folder.results()}, set(jobs_of(config, tasks))
    return bool(jobs) and jobs <= done and not folder.unfinished(done)


def jobs_of(config: RunConfig, tasks: Sequence[Task]) -> list[tuple[str, str, int]]:
    """The run's trials, (strategy, task id, seed), in the order they are scheduled."""
    c = config
    return [(s, t.id, seed) for s in c.strategies for seed in range(c.seeds) for t in tasks]


def _nothing_to_run(seed: int) -> Actor:
    msg = "every trial of this run has its result: no actor was made"
    raise RuntimeError(msg)


def prepare_worker(config: RunConfig) -> Prepared:
    """A run's plan on a Ray worker (reflexion.runner.cluster): env, model and memory by name, and
    no run folder touched, since the driver writes every record."""
    config = dataclasses.replace(config, executor="local")  # this process runs the trials
    env = make_env(config.env)
    strategies = parse_strategies(",".join(config.strategies))
    tasks, named = _select_tasks(env, config.tasks), {s.name: s for s in strategies}
    folder = RunFolder(Path(config.out or "."))
    plan = Prepared(config, env, tasks, named, folder, {}, _actors(env, config, Injected(), {}))
    backends, parsed = backends_of(config, strategies, None), Parsed(parse_ranking(config.rank))
    plan.memories, plan.owned = open_memories(config, parsed, folder.path, backends, plan.loads)
    return plan


def default_out(env: str) -> Path:
    """runs/ENV-TIME, the folder of a run given none."""
    slug = "".join(c if c.isalnum() or c in "-_" else "-" for c in env)[:40]
    return Path("runs") / f"{slug}-{time.strftime('%Y%m%d-%H%M%S')}"


def _named(config: RunConfig, env: Env, given: Injected) -> RunConfig:
    """The config with names for what was passed as objects, so config.json records them and a
    resume with other objects is refused like one with other names."""
    changes: dict[str, Any] = {}
    if not config.env:
        changes["env"] = env.name
    if not config.strategies:
        changes["strategies"] = tuple(s.name for s in given.strategies)
    if given.actor is not None:
        changes["model"] = f"actor:{type(given.actor).__name__}"
    elif given.model is not None and config.model is None:
        name = getattr(given.model, "model_name", None) or getattr(given.model, "model", "")
        label = f"object:{type(given.model).__name__}"
        changes["model"] = f"{label}:{name}" if name else label
    elif config.model is None and not isinstance(env, ScriptedEnv):
        from reflexion.models.files import DEFAULT_MODEL

        changes["model"] = DEFAULT_MODEL
    if given.memory is not None:
        changes["memory_backend"] = f"object:{type(given.memory).__name__}"
        changes |= store_of(given.memory, config)
    return dataclasses.replace(config, **changes)


def _select_tasks(env: Env, count: int | None) -> list[Task]:
    tasks = list(env.tasks())
    if count is not None and count > len(tasks):
        msg = (
            f"--tasks {count} is more than the {len(tasks)} tasks of env {env.name!r}; leave "
            f"--tasks out (tasks=None) for all {len(tasks)}"
        )
        raise UsageError(msg)
    return tasks[:count]


def bind_folder(
    folder: RunFolder, config: RunConfig, parsed: Parsed
) -> tuple[RunConfig, dict[str, Any]]:
    """The config to run with and the config.json to save. A new folder gets a new run id; an
    existing one must agree on every setting that changes results, and keeps its run id."""
    old = folder.load_config()
    if old is None:
        config = dataclasses.replace(config, run_id=config.run_id or uuid.uuid4().hex[:12])
        return config, config.to_dict() | {"created": time.time(), "version": VERSION}
    check_version(folder, old)
    missing = [key for key in ("strategies", "run_id") if key not in old]
    if missing:
        msg = f"{folder.config_path} is not a readable config: it has no {missing[0]!r}"
        raise UsageError(msg)
    for name in RESULT_FIELDS:
        mine, theirs = getattr(config, name), old.get(name, default_of(name))
        if name == "model" and str(theirs).startswith("object:"):
            theirs = str(theirs).rstrip(":")  # older folders end a nameless object's with a colon
        # the same weights, however written, are the same ranking
        same = parsed.ranking == _ranking_or_text(theirs) if name == "rank" else None
        if not same and mine != theirs:
            msg = (
                f"{folder.path} was run with {name}={theirs!r}, not {mine!r}; "
                "use another --out folder or the same settings to resume"
            )
            raise UsageError(msg)
    strategies = list(dict.fromkeys([*old["strategies"], *config.strategies]))
    saved = old | {"strategies": strategies, "version": VERSION}  # its records are ours now too
    return dataclasses.replace(config, run_id=old["run_id"]), saved


def check_version(folder: RunFolder, old: dict[str, Any]) -> None:
    """Refuse a folder written by a newer version, or one whose config.json has a key this
    version does not know: a setting it cannot honour, so a resume would mix two runs.

    >>> check_version(RunFolder(Path("runs/x")), {"version": "9.0"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    reflexion.core.errors.UsageError: runs/x was written by reflexion 9.0, newer than this one ...
    """
    written = str(old.get("version", ""))
    if newer(written):
        msg = (
            f"{folder.path} was written by reflexion {written}, newer than this one ({VERSION}): "
            "resume it with that version, or use another --out folder"
        )
        raise UsageError(msg)
    unknown = sorted(set(old) - set(FIELDS) - SAVED_KEYS)
    if unknown:
        by = f"reflexion {written}" if written else "a version that did not record itself"
        msg = (
            f"{folder.config_path} has a key reflexion {VERSION} does not know: {unknown[0]!r} "
            f"(written by {by}); resume it with the version that wrote it, or use another "
            "--out folder"
        )
        raise UsageError(msg)


def _ranking_or_text(value: Any) -> Any:
    try:
        return parse_ranking(str(value))
    except ValueError:
        return value  # a folder's unreadable value: compared as written, so refused


def actors_for(env: Env, config: RunConfig, model: BaseChatModel | None = None) -> ActorFor:
    """The actors a run of `config` on `env` uses, by seed (its model, or the env's scripted
    actor): for reruns of its episodes (reflexion.curate.audit)."""
    return _actors(env, config, Injected(model=model), {})


@contextlib.contextmanager
def timed(loads: dict[str, float], what: str) -> Iterator[None]:
    """Add the seconds the block takes to `loads[what]`.

    >>> loads: dict[str, float] = {}
    >>> with timed(loads, "model m"):
    ...     pass
    >>> list(loads)
    ['model m']
    """
    start = time.perf_counter()
    try:
        yield
    finally:
        loads[what] = round(loads.get(what, 0.0) + time.perf_counter() - start, 3)


def _actors(env: Env, config: RunConfig, given: Injected, loads: dict[str, float]) -> ActorFor:
    if given.actor is not None:
        actor = given.actor
        # subtle: a class has the protocol's methods too, but it makes actors (QuadraticActor)
        if isinstance(actor, Actor) and not isinstance(actor, type):
            return lambda seed: actor
        return actor
    model = given.model
    if model is None and config.model is not None:
        from reflexion.models.registry import load_model

        with timed(loads, f"model {config.model}"):
            # a bad name fails here
            model = load_model(config.model, config.speculative, config.reproducible)
    if config.executor == "ray":
        return _on_the_workers  # they load the model; the driver never calls it
    if model is not None:
        if isinstance(model, Preloadable):
            with timed(loads, f"model {config.model}"):
                model.load()  # e.g. the local model: fail on a bad file before any trial starts
        curator = _curator(config, given, loads)
        chat = _chat_actors(model, config, env, curator)
        if isinstance(env, InteractiveEnv):  # each candidate is a rollout of the game
            from reflexion.actor.rollout import RolloutActor

            return lambda seed: RolloutActor(chat(seed), env)
        return chat
    if not isinstance(env, ScriptedEnv):
        msg = f"env {env.name!r} needs a model: pass --model"  # unreachable from run()
        raise UsageError(msg)
    return env.actor


def _check_curator(config: RunConfig, strategies: Sequence[Strategy], given: Injected) -> None:
    """Refuse, for a new folder, a --curator-model that could not be loaded or would write
    nothing, before anything is written (a saved name would then bind the folder)."""
    name = config.curator_model
    if name is None or given.curator is not None:
        return
    from reflexion.models.registry import check_model_name

    check_model_name(name, "--curator-model")
    if config.model is None or given.actor is not None:
        msg = f"--curator-model needs a model run (--model): {config.env}'s actor writes no memory"
        raise UsageError(msg)
    if not any(s.curated for s in strategies):
        curated = ", ".join(s.name for s in STRATEGIES.values() if s.curated)
        msg = f"--curator-model writes the memory of {curated}; none of these strategies asks one"
        raise UsageError(msg)


def _curator(config: RunConfig, given: Injected, loads: dict[str, float]) -> BaseChatModel | None:
    """The model that writes the memory for other tasks, when it is not --model's."""
    if given.curator is not None or config.curator_model is None:
        return given.curator
    from reflexion.models.registry import load_model

    with timed(loads, f"curator {config.curator_model}"):
        try:
            curator = load_model(config.curator_model, "none", config.reproducible)
        except UsageError as exc:  # its message names --model: say which option it was
            msg = str(exc).replace("--model", "--curator-model", 1)
            raise UsageError(msg) from None
        if isinstance(curator, Preloadable):
            curator.load()
    return curator


def _on_the_workers(seed: int) -> Actor:
    msg = "with --executor ray the trials run on the workers (reflexion.runner.cluster)"
    raise RuntimeError(msg)


def _chat_actors(
    model: BaseChatModel, config: RunConfig, env: Env, curator: BaseChatModel | None = None
) -> Callable[[int], ChatActor]:
    from reflexion.actor import CODE_ROLES, CODE_TOKENS, CURATOR_CODE_TOKENS
    from reflexion.actor.backoff import RetryPolicy
    from reflexion.actor.chat import CallCache, ChatActor

    cache = CallCache()  # one cache: identical greedy prompts are answered once
    retry = RetryPolicy(retries=config.retries, call_timeout_s=config.call_timeout)
    programs = None  # the env's program runner, under the code protocol (ChatActor._answer)
    if isinstance(env, CodeRunningEnv) and env.programs and config.code_rounds > 0:
        programs = env.run_program
    room = {role: CODE_TOKENS for role in CODE_ROLES} if programs is not None else {}
    room |= {"distill": CURATOR_CODE_TOKENS} if programs is not None else {}
    return lambda seed: ChatActor(
        model,
        temperature=config.temperature,
        seed=config.seed * 100_003 + seed,
        max_tokens=room | config.max_tokens,  # the user's --max-tokens win
        cache=cache,
        retry=retry,
        reflection=config.reflection,
        memory_tokens=config.memory_tokens,
        programs=programs,
        code_rounds=config.code_rounds if programs is not None else 0,
        curator=curator,
        curation=config.curation,
    )
