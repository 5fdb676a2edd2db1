"""Tasks x strategies x seeds, run concurrently into one run folder, resumable.

    >>> results = asyncio.run(execute(RunConfig(env="quadratic", strategies=("single",))))
    ...                                                                     # doctest: +SKIP

A run with `max_tokens_total` or `timeout_s` may stop early: the results returned then say why
in `.stopped`, and the same call again resumes it. `.resume` says what the run found in its
folder, and `.loads` what it loaded before the first trial; `echo=print` prints both as it starts.
`reflexion.run` and `reflexion.arun` (reflexion.experiment) are the public entry points: this run,
then the comparison the CLI prints and writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from memory.backend import close_all
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Order
from reflexion.core.protocols import Memory, Merging
from reflexion.core.records import Step
from reflexion.runner.budget import Budget
from reflexion.runner.config import RunConfig
from reflexion.runner.results import Resume, RunResults, loaded
from reflexion.runner.schedule import TrialRunner, Trials, run_jobs, stream_order
from reflexion.runner.setup import Injected, Prepared, jobs_of, prepare
from reflexion.trial.board import undo_interrupted

P = ParamSpec("P")
R = TypeVar("R")


async def execute(
    config: RunConfig,
    given: Injected | None = None,
    progress: bool = False,
    echo: Callable[[str], None] | None = None,
) -> RunResults:
    """Run (or resume) every trial of `config`; returns the results its trials have in the
    folder, earlier sessions' included (if a budget stopped the run, those so far, and why in
    `.stopped`). `given` holds the objects a Python
    caller passes for names in the config (see reflexion.experiment.arun); `echo` gets a line
    for what the run loaded, one for what a resumed run found done, and, if the run is
    cancelled, one for how far it got."""
    given = given or Injected()
    if config.executor == "ray":
        from reflexion.runner import cluster

        cluster.check(config, given)
    plan = prepare(config, given)
    joined, held = False, None
    try:
        if config.executor == "ray":
            joined = cluster.connect(config.ray_address)
        # the clock starts after the one-time loads: a time budget shorter than a model's load
        # would otherwise stop every session before its first trial, and never resume
        budget = Budget(config.max_tokens_total, config.timeout_s)
        stream = _stream(plan)
        done = {r.key for r in plan.folder.results()}
        cut_off = plan.folder.unfinished(done)  # a damaged record is refused before any write
        held = _begin(plan)  # only once every input has been checked
        # the store first, then the trace: if undoing fails (a server down) or we die in between,
        # the next resume still finds the cut-off steps; undoing twice is harmless
        _forget_interrupted(cut_off, plan.memories)
        plan.folder.set_aside_unfinished(done)
        jobs = [job for job in _jobs(plan) if job not in done]
        others = tuple(s for s in plan.saved["strategies"] if s not in plan.config.strategies)
        resume = Resume(len(_jobs(plan)) - len(jobs), len(_jobs(plan)), plan.folder.path, others)
        _say(plan, resume, bool(jobs), echo)
        trials = _trials(plan, budget.tap(plan.folder.write_step))
        running = run_jobs(jobs, trials, plan.folder, budget, progress, stream)
        cut = await _saying_if_cancelled(running, plan, resume, echo)
    finally:
        plan.folder.close()
        _end(plan, held)
        close_all(plan.owned)
        if joined:
            cluster.disconnect()
    wanted = set(_jobs(plan))
    results = RunResults(r for r in plan.folder.results() if r.key in wanted)
    results.stopped = budget.stop() if cut else None
    results.folder, results.resume, results.loads = plan.folder.path, resume, plan.loads
    return results


def _say(plan: Prepared, resume: Resume, to_run: bool, echo: Callable[[str], None] | None) -> None:
    """What the run loaded, what it found in its folder, and how lessons will be kept."""
    notes = (_fixed_boards(plan), _unmerged(plan), _same_task(plan)) if to_run else ()
    for line in (loaded(plan.loads), resume.message(), resume.also(), *notes):
        if line is not None and echo is not None:
            echo(line)


def _begin(plan: Prepared) -> float:
    """Save config.json with the trials planned (every strategy the folder holds, on every
    task and seed), mark the folder as being written, and start the clock of `_end`."""
    planned = len(plan.saved["strategies"]) * plan.config.seeds * len(plan.tasks)
    plan.saved["planned"] = planned
    plan.folder.save_config(plan.saved)
    plan.folder.hold()
    return time.monotonic()


def _end(plan: Prepared, held: float | None) -> None:
    """The session is over (`held`: when `_begin` started it; None: it never did): add its
    time to config.json's `spent_s`, the wall time the run really took however its trials
    shared answers (each trial's `wall_s` is what it would take alone), and unmark the folder."""
    if held is None:
        return
    spent = float(plan.saved.get("spent_s") or 0.0) + time.monotonic() - held
    plan.saved["spent_s"] = round(spent, 3)
    with contextlib.suppress(UsageError):  # a folder made read-only meanwhile keeps its config
        plan.folder.save_config(plan.saved)
    plan.folder.release()


async def _saying_if_cancelled(
    running: Coroutine[Any, Any, bool],
    plan: Prepared,
    resume: Resume,
    echo: Callable[[str], None] | None,
) -> bool:
    """`running`'s result; if it is cancelled (Ctrl-C, a caller's task.cancel()), `echo` first
    gets how far the run got."""
    try:
        return await running
    except asyncio.CancelledError:
        if echo is not None:
            echo(f"interrupted: {resume.reached(_done(plan))}")
        raise


def _fixed_boards(plan: Prepared) -> str | None:
    """A note when a strategy whose memory a curator writes asks none in this run: with frozen
    memory (nothing is kept), or, for a board (the rules, the sheet), outside --order stream."""
    frozen, stream = plan.config.frozen_memory, plan.config.order == Order.STREAM
    kinds = ("board", "items") if frozen else () if stream else ("board",)
    names = ", ".join(n for n, s in plan.strategies.items() if s.curated in kinds)
    if not names:
        return None
    if frozen:
        return f"note: the memory is frozen, so {names} ask no curator and keep what they read"
    return (
        f"note: {names} change their board only under --order stream (concurrent tasks would "
        "race on it): here they read it as it is and ask no curator"
    )


def _unmerged(plan: Prepared) -> str | None:
    """A note when --dedup is set and a strategy's store cannot merge (the window keeps every
    lesson): the setting would otherwise do nothing there without a word."""
    if plan.config.dedup is None or plan.config.frozen_memory:
        return None
    names = ", ".join(n for n, m in plan.memories.items() if not isinstance(m, Merging))
    if not names:
        return None
    return f"note: --dedup merges only in a store that can (chroma), not in the store of {names}"


def _same_task(plan: Prepared) -> str | None:
    """A line when the run's stores hold lessons that other runs wrote or rewrote on this run's
    tasks: a warning that a warm start admits them, else a note that they are left out."""
    ids = {t.id for t in plan.tasks}
    stores = {id(m): m for m in plan.memories.values()}.values()
    count = sum(
        1
        for m in stores
        for r in m.reflections()
        if r.env == plan.env.name
        and r.run_id != plan.config.run_id
        and not ids.isdisjoint((r.task_id, *r.edited_on))
    )
    if not count:
        return None
    lessons = "lesson" if count == 1 else "lessons"
    if plan.config.warm_start:
        return (
            f"warning: --warm-start admits {count} {lessons} that other runs wrote on these "
            "tasks: a task may recall its own answers and feedback from before"
        )
    return (
        f"note: {count} {lessons} that other runs wrote on these tasks are left out "
        "(leave-one-task-out; --warm-start admits them)"
    )


def _trials(plan: Prepared, sink: Callable[[Step], None]) -> TrialRunner:
    if plan.config.executor != "ray":
        return Trials(plan, sink)
    from reflexion.runner.cluster import RayTrials

    return RayTrials(plan, sink)


def _jobs(plan: Prepared) -> list[tuple[str, str, int]]:
    return jobs_of(plan.config, plan.tasks)


def _done(plan: Prepared) -> int:
    """How many of the run's trials have a result in its folder now."""
    return len({r.key for r in plan.folder.results()} & set(_jobs(plan)))


def _stream(plan: Prepared) -> list[str] | None:
    """--order stream: the task order, recorded in config.json (`stream_order`) for the report.
    A resumed folder keeps the order it recorded; one whose tasks are no longer the env's is
    refused, since its stream could not go on as it began."""
    if plan.config.order != Order.STREAM:
        return None
    ids = [t.id for t in plan.tasks]
    order = plan.saved.get("stream_order") or stream_order(ids, plan.config.stream_seed)
    if sorted(order) != sorted(ids):
        msg = (
            f"{plan.folder.path} streamed other tasks than env {plan.config.env!r} has now; "
            "use another --out folder"
        )
        raise UsageError(msg)
    plan.saved["stream_order"] = order
    return list(order)


def _forget_interrupted(moved: list[dict[str, Any]], memories: dict[str, Memory]) -> None:
    """Lessons written by trials that were cut off are superseded by their re-run: drop them
    from the store (their text stays in trace.interrupted.jsonl), so no one recalls them, and
    undo their changes to a board, so the re-run counts each vote once."""
    for strategy, memory in memories.items():
        mine = [s for s in moved if s["strategy"] == strategy]
        undo_interrupted(mine, memory)  # board changes (rules, the cheatsheet), newest first
        ids = [s["data"]["id"] for s in mine if s["kind"] == "remember" and "id" in s["data"]]
        if ids:
            memory.delete(ids)


def blocking(coroutine: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, R]:
    """`coroutine` as a plain call with the same arguments, for a caller outside an event loop;
    inside one, a one-line error that says to await it instead."""

    @functools.wraps(coroutine)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # none: the usual case, run it outside this handler (clean tracebacks)
            pass
        else:
            msg = (
                f"{call.__name__}() was called inside a running event loop (Jupyter, an async "
                f"app), which asyncio.run cannot start another in: use "
                f"`await {coroutine.__name__}(...)` there, with the same arguments"
            )
            raise UsageError(msg)
        return asyncio.run(coroutine(*args, **kwargs))

    return call
