"""An experiment from Python, as `reflexion compare` runs it: `run` runs (or resumes) the trials,
writes comparison.json, the plots, report.md and report.html into the run folder, and returns the
results with the comparison table, the paired comparisons, plain records and the files it wrote.

    >>> from reflexion import RunConfig, run
    >>> results = run(RunConfig(env="quadratic", strategies=("single", "reflexion-window"),
    ...                         out="runs/demo"))                          # doctest: +SKIP
    >>> print(results.table)                                              # doctest: +SKIP
    strategy          trials  final [95% CI]   any [95% CI]  mean best  attempts  ...
    single                 8      0.0% [0-0]     0.0% [0-0]     -17.63      1.00  ...
    reflexion-window       8   37.5% [12-75]  37.5% [12-75]     -1.622      3.62  ...
    >>> pandas.DataFrame(results.records()).groupby("strategy").final_passed.mean()
    ...                                                                   # doctest: +SKIP
    >>> [p.name for p in results.files][:1]                               # doctest: +SKIP
    ['comparison.json']

The results are a list of TaskResult: iterate, index and `len` them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from reflexion.core.protocols import Actor, Env, Memory
from reflexion.core.runfolder import RunFolder, run_state
from reflexion.report.build import Report, run_pricing, write_report
from reflexion.report.folders import trial_record
from reflexion.report.headline import headline
from reflexion.report.paired import Pair, all_pairs
from reflexion.report.summary import Summary, format_table, summarize
from reflexion.runner.config import RunConfig
from reflexion.runner.execute import blocking, execute
from reflexion.runner.results import RunResults
from reflexion.runner.setup import ActorFor, Injected
from reflexion.strategies import Strategy

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


class Results(RunResults):
    """What `run` returns: the run folder's TaskResults (a list; a resume that asks
    for fewer strategies gets the others' too), and their comparison.
    `report` holds the files written (None with `run(..., report=False)`, or when no trial
    finished); `config` is the run folder's config.json."""

    report: Report | None = None
    config: Mapping[str, Any] = MappingProxyType({})

    @cached_property
    def summaries(self) -> list[Summary]:
        """One row per strategy: success rates with intervals, attempts, costs."""
        if self.report is not None:
            return self.report.summaries
        c = self.config
        order, episodes = c.get("strategies", ()), c.get("episodes")
        cost = run_pricing(dict(c))
        return summarize(self, order, episodes, task_tokens=c.get("task_tokens"), pricing=cost)

    @cached_property
    def pairs(self) -> list[Pair]:
        """Each later strategy against each earlier one, paired by task (see report.paired)."""
        if self.report is not None:
            return self.report.pairs
        return all_pairs(self, self.config.get("strategies", ()))

    @property
    def table(self) -> str:
        """The comparison table, as `reflexion compare` prints it."""
        return format_table(self.summaries)

    @property
    def headline(self) -> str:
        """What the comparison found, in one line, as `reflexion compare` prints it first.

        >>> results.headline                                   # doctest: +SKIP
        'reflexion beat single by +50.0 points on 16 tasks (8 won, 0 lost, p = 0.0078), ...'
        """
        if self.report is not None:
            return self.report.headline
        state = run_state(self.folder, dict(self.config), self).note() if self.folder else ""
        return headline(self.summaries, self.pairs, state)

    @property
    def files(self) -> list[Path]:
        """What `run` wrote beside the results: comparison.json, the plots, the reports."""
        return list(self.report.files) if self.report is not None else []

    def records(self) -> list[dict[str, Any]]:
        """One flat dict per trial, for `pandas.DataFrame(results.records())`: a TaskResult's
        fields but its curve, with `tokens` (input + output) and `errors` as one string."""
        return [trial_record(r) for r in self]


async def arun(
    config: RunConfig,
    *,
    model: BaseChatModel | None = None,
    env: Env | None = None,
    memory: Memory | None = None,
    actor: Actor | ActorFor | None = None,
    strategies: Sequence[Strategy] = (),
    progress: bool = False,
    echo: Callable[[str], None] | None = None,
    report: bool = True,
    curator: BaseChatModel | None = None,
) -> Results:
    """Run (or resume) every trial of `config`, then, with `report`, write the comparison into
    the run folder as `reflexion compare` does. Inside a running event loop (Jupyter, an async
    app): `results = await arun(config, ...)`; elsewhere `run(config, ...)`, the same call.

    Objects may stand in for names in the config: `model` for `--model`, `env` for `--env`,
    `memory` for the memory backend of every strategy that keeps lessons, `actor` (an Actor, or
    a function of the seed that makes one) for the model's roles, and `strategies` for
    strategies not in the registry (named in `config.strategies`, or all run when it is empty),
    and `curator` for `--curator-model` (the model that writes the memory for other tasks).
    `echo=print` prints what the run loaded and what a resumed run found done, as it starts.

    >>> results = run(RunConfig(env="quadratic", strategies=("single",)))   # doctest: +SKIP
    >>> len(results), results.files[0].name                                 # doctest: +SKIP
    (8, 'comparison.json')
    """
    given = Injected(model, env, memory, actor, tuple(strategies), curator)
    done = await execute(config, given, progress, echo)
    return await asyncio.to_thread(compared, done, report)  # plotting takes a second or two


# `run` is `arun` for a caller outside an event loop: one signature, written once (above)
run = blocking(arun)
run.__name__ = run.__qualname__ = "run"


def compared(done: RunResults, report: bool = True) -> Results:
    """Every result in `done`'s run folder with their comparison, written into the folder with
    `report`: a resume that asked for fewer strategies compares what the folder holds, so the
    report and comparison.json never lose a strategy (`done.resume.also()` names them)."""
    folder = done.folder
    results = Results(done if folder is None else RunFolder(folder).results())
    results.stopped, results.folder = done.stopped, done.folder
    results.resume, results.loads = done.resume, done.loads
    if folder is not None:
        results.config = RunFolder(folder).load_config() or {}
        if report and results:
            results.report = write_report(folder, results, dict(results.config))
    return results
