"""What `reflexion.runner.execute.execute` returns: every result the run folder holds for the run's
trials, with what the run found there (`resume`), what it loaded before the first trial
(`loads`), and why it stopped early, if it did (`stopped`).

    >>> Resume(done=40, total=60, folder=Path("runs/main")).message()
    '40 done, 20 to run in runs/main'
    >>> Resume(done=60, total=60, folder=Path("runs/main")).message()
    '60 of 60 trials already in runs/main; nothing to run'
    >>> Resume(done=40, total=60, folder=Path("runs/main")).reached(45)
    '45 done, 15 to run in runs/main'
    >>> Resume(0, 8, Path("runs/main"), others=("single",)).also()
    'runs/main also holds trials of single: the comparison and the report cover them too'
    >>> loaded({"embedder all-MiniLM-L6-v2 (chroma store)": 3.3, "model qwen-1.5b": 1.5})
    'loaded in 4.8 s: embedder all-MiniLM-L6-v2 (chroma store) 3.3 s, model qwen-1.5b 1.5 s'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from reflexion.core.records import TaskResult
from reflexion.runner.budget import Stop


@dataclass(frozen=True)
class Resume:
    """What a run found in its folder: `done` of its `total` trials had a result already, and
    the strategies of earlier sessions that this one did not ask for (`others`)."""

    done: int
    total: int
    folder: Path
    others: tuple[str, ...] = ()

    def message(self) -> str | None:
        """One line for a resumed run (None for a new one: every trial is to run)."""
        if self.done == 0:
            return None
        if self.done >= self.total:
            return f"{self.total} of {self.total} trials already in {self.folder}; nothing to run"
        return f"{self.done} done, {self.total - self.done} to run in {self.folder}"

    def reached(self, done: int) -> str:
        """How far the run got, once `done` of its trials have a result (it was cut off)."""
        return f"{done} done, {self.total - done} to run in {self.folder}"

    def also(self) -> str | None:
        """One line when the folder holds strategies this run did not ask for (None: it holds
        none): what the folder holds is compared, so the report never drops them."""
        if not self.others:
            return None
        held = ", ".join(self.others)
        return (
            f"{self.folder} also holds trials of {held}: the comparison and the report cover "
            "them too"
        )


def loaded(loads: Mapping[str, float]) -> str | None:
    """The one-time loads of a run as one line (None when it loaded nothing): they happen
    before the first trial, so no strategy's `wall s` holds them."""
    if not loads:
        return None
    parts = ", ".join(f"{what} {seconds:.1f} s" for what, seconds in loads.items())
    return f"loaded in {sum(loads.values()):.1f} s: {parts}"


class RunResults(list[TaskResult]):
    """The results `run()` returns; `stopped` says why some trials did not run (None: all did),
    `folder` is the run folder, `resume` what the run found there, and `loads` the seconds each
    one-time load took (the model, a store's embedder)."""

    stopped: Stop | None = None
    folder: Path | None = None
    resume: Resume | None = None
    loads: Mapping[str, float] = MappingProxyType({})
