"""The run folders a server shows, by name, and what it reads from them.

>>> site = Site.from_paths([Path("runs")])          # doctest: +SKIP
>>> sorted(site.runs)                                # doctest: +SKIP
['main', 'quadratic-20261122-120000']
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reflexion.core.errors import UsageError
from reflexion.core.records import Step, TaskResult
from reflexion.core.runfolder import RunFolder


class NotFound(LookupError):
    """An unknown run, task or reflection: the page says which, with status 404."""


def is_run(path: Path) -> bool:
    return (path / "config.json").is_file()


@dataclass
class Site:
    runs: dict[str, Path]  # name in the address -> run folder
    allow_edit: bool = False
    token: str = ""  # a form must send it back: another site cannot make the browser forget
    _steps: dict[Path, tuple[float, list[Step]]] = field(default_factory=dict)
    _results: dict[Path, tuple[tuple[int, int], list[TaskResult]]] = field(default_factory=dict)
    # one store open at a time: chromadb's shared client per folder breaks when two threads
    # open and close it together
    stores: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.token = self.token or secrets.token_hex(16)

    @classmethod
    def from_paths(cls, paths: Sequence[Path], allow_edit: bool = False, token: str = "") -> Site:
        """Each path is a run folder, or a folder of run folders (like `runs/`)."""
        runs: dict[str, Path] = {}
        for path in paths:
            if not path.is_dir():
                msg = f"{path} is not a folder"
                raise UsageError(msg)
            found = [path] if is_run(path) else sorted(p for p in path.iterdir() if is_run(p))
            if not found:
                msg = f"{path} is not a run folder (no config.json) and holds none"
                raise UsageError(msg)
            for run in found:
                name, n = run.name, 2
                while name in runs:
                    name, n = f"{run.name}-{n}", n + 1
                runs[name] = run
        return cls(runs, allow_edit, token)

    def run(self, name: str) -> Path:
        if name not in self.runs:
            msg = f"no run named {name!r} here"
            raise NotFound(msg)
        return self.runs[name]

    def config(self, name: str) -> dict[str, Any]:
        return RunFolder(self.run(name)).load_config() or {}

    def results(self, name: str) -> list[TaskResult]:
        """The run's results, read again only when the file changed (as `steps`)."""
        path = RunFolder(self.run(name)).results_file
        if not path.exists():
            return []
        mtime = (path.stat().st_mtime_ns, path.stat().st_size)
        cached = self._results.get(path)
        if cached is None or cached[0] != mtime:
            cached = (mtime, RunFolder(path.parent).results())
            self._results[path] = cached
        return list(cached[1])

    def steps(self, name: str) -> list[Step]:
        """The run's trace, read again only when the file changed (a run may still be going)."""
        trace = RunFolder(self.run(name)).trace_file
        if not trace.exists():
            return []
        mtime = trace.stat().st_mtime
        cached = self._steps.get(trace)
        if cached is None or cached[0] != mtime:
            cached = (mtime, RunFolder(trace.parent).steps())
            self._steps[trace] = cached
        return cached[1]
