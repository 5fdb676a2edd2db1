"""`--executor ray`: each trial runs as a Ray task on a cluster; no scheduler of our own.

    reflexion compare --env jsonl:tasks.jsonl --strategies self-refine,reflexion \\
        --model openai-compatible:http://10.0.0.2:8000/v1 --chroma-url http://10.0.0.3:8000 \\
        --executor ray --ray-address 10.0.0.1:6379

The driver (this process) keeps the run folder: it checks every input, then sends each trial
(the config, a strategy, a task id and a seed) to the cluster, and writes the trial's trace
steps and result when it comes back, so a record is written once or not at all. A worker
builds the env, the model and the memory by name, once per process, and runs the trial as the
local runner does. Lessons go straight into the shared Chroma server; a window (`--memory-backend
window`, `reflexion-window`) holds one trial's lessons only, so the worker keeps a fresh one for
each trial and sends its lessons back with the trace, for the driver's `window.jsonl`. A worker that
dies takes
its trials with it: Ray runs them again (up to `RETRIES` times), and since their lessons have
deterministic ids, a rerun overwrites what the lost one wrote. If the driver itself stops, the
same command resumes the run, as a local one does.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import socket
from typing import Any

from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Order, Reflection
from reflexion.core.records import Step, TaskResult
from reflexion.runner.config import RunConfig
from reflexion.runner.setup import Injected, Prepared, prepare_worker

RETRIES = 2  # runs of a trial lost with its worker
CONNECT_S = 5.0
_PLANS: dict[str, Prepared] = {}  # on a worker: one plan per run config, built once
WINDOW = "window"  # the backend whose store is one trial's own (see trial_windows)


def check(config: RunConfig, given: Injected) -> None:
    """Refuse, in one line and before anything is written, a run the workers could not rebuild
    or share: objects instead of names, or lessons kept anywhere but one Chroma server."""
    from reflexion.strategies import RUN_MEMORY, parse_strategies

    passed = {"env": given.env, "model": given.model, "memory": given.memory, "actor": given.actor}
    passed["curator"] = given.curator
    objects = [name for name, value in passed.items() if value is not None]
    if objects or given.strategies:
        what = ", ".join(objects + (["strategies"] if given.strategies else []))
        msg = f"--executor ray builds everything by name on the workers: pass no {what} object"
        raise UsageError(msg)
    keeping = [s for s in parse_strategies(",".join(config.strategies)) if s.memory is not None]
    own = trial_windows(config)
    backends = {
        config.memory_backend if s.memory == RUN_MEMORY else s.memory
        for s in keeping
        if s.name not in own
    }
    shared = config.chroma_url and backends == {"chroma"} and config.memory_mode == "write"
    if backends and not shared:
        names = ", ".join(s.name for s in keeping if s.name not in own)
        msg = (
            f"--executor ray: {names} keeps lessons; give the workers one Chroma server "
            "(--chroma-url http://host:port, memory backend chroma, --memory-mode write)"
        )
        raise UsageError(msg)


def trial_windows(config: RunConfig) -> set[str]:
    """The strategies whose lessons sit in a window that only their own trial reads: a trial
    recalls its own earlier episodes from it, and a window holds this run's lessons only. Under
    --order stream --scope global a trial also reads the earlier tasks' lessons: not one trial's.

    >>> sorted(trial_windows(RunConfig(strategies=("reflexion", "reflexion-window"))))
    ['reflexion-window']
    """
    from reflexion.strategies import RUN_MEMORY, parse_strategies

    if config.order == Order.STREAM and config.scope != "task":
        return set()
    return {
        s.name
        for s in parse_strategies(",".join(config.strategies))
        if (config.memory_backend if s.memory == RUN_MEMORY else s.memory) == WINDOW
    }


def connect(address: str | None) -> bool:
    """Join the cluster at `address` (host:port), or start Ray on this machine; a one-line
    UsageError when it cannot be reached. False when this process had joined Ray already (the
    caller's own `ray.init`, which is then used as it is and left alone)."""
    if address:
        _reachable(address)
    import ray

    if ray.is_initialized():
        return False
    try:
        ray.init(
            address=address or None,
            ignore_reinit_error=True,
            log_to_driver=False,
            logging_level=logging.ERROR,
            include_dashboard=False,
        )
    except Exception as exc:  # Ray raises many kinds; each means "no cluster here"
        msg = f"cannot join the Ray cluster at {address or 'this machine'}: {exc}"
        raise UsageError(msg.splitlines()[0]) from None
    return True


def disconnect() -> None:
    import ray

    ray.shutdown()


def _reachable(address: str) -> None:
    host, _, port = address.removeprefix("ray://").rpartition(":")
    host = host.removeprefix("[").removesuffix("]")  # [::1]:6379
    if not host or not port.isdigit():
        msg = f"--ray-address wants host:port (e.g. 10.0.0.1:6379), got {address!r}"
        raise UsageError(msg)
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_S).close()
    except OSError as exc:
        msg = f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}"
        raise UsageError(msg) from None


class RayTrials:
    """`Trials` whose `run` sends the trial to the cluster (see reflexion.runner.schedule)."""

    def __init__(self, plan: Prepared, sink: Any) -> None:
        import ray

        self.plan, self.sink = plan, sink
        self.config = plan.config.to_dict()
        self.tasks = {t.id: t for t in plan.tasks}
        self._remote = ray.remote(max_retries=RETRIES)(run_on_worker)
        self._windows = trial_windows(plan.config)

    async def run(self, strategy: str, task_id: str, seed: int) -> TaskResult:
        import ray

        ref = self._remote.remote(self.config, strategy, task_id, seed, os.getcwd())
        try:
            steps, result, lessons = await ref
        except asyncio.CancelledError:
            ray.cancel(ref, force=True)  # a budget ran out, or Ctrl-C: stop it on the cluster
            raise
        for step in steps:
            self.sink(Step.from_dict(step))
        if lessons:  # subtle: after the trace, as a local trial stores a lesson after its step
            kept = [Reflection.from_dict(r) for r in lessons]
            await asyncio.to_thread(self.plan.memories[strategy].add, kept)
        return TaskResult.from_dict(result)


def run_on_worker(
    config: dict[str, Any], strategy: str, task_id: str, seed: int, cwd: str
) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """One trial, on a Ray worker: its trace steps, its result, and the lessons of its own
    window (see trial_windows), as dicts."""
    from memory import WindowMemory
    from reflexion.runner.schedule import Trials

    if os.path.isdir(cwd):
        os.chdir(cwd)  # relative paths (jsonl:tasks.jsonl) mean what they meant to the driver
    key = repr(sorted(config.items()))
    if key not in _PLANS:
        _PLANS[key] = prepare_worker(RunConfig.from_dict(config))
    plan, window = _PLANS[key], None
    if strategy in trial_windows(plan.config):
        window = WindowMemory()  # this trial's own, in memory: the driver writes window.jsonl
        plan = dataclasses.replace(plan, memories=plan.memories | {strategy: window})
    steps: list[Step] = []
    result = asyncio.run(Trials(plan, steps.append).run(strategy, task_id, seed))
    lessons = [r.to_dict() for r in window.reflections()] if window is not None else []
    return [s.to_dict() for s in steps], result.to_dict(), lessons
