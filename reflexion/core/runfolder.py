"""The run folder: config.json, trace.jsonl, results.jsonl (and the memory store beside them).

Writing is append-only and flushed per record, so a killed run loses at most the line it was
writing. A half-written last line is dropped (and cut off the file before the next append).
Re-opening a folder resumes it: finished task x strategy x seed trials are skipped, and the trace
of trials that were cut off is moved to trace.interrupted.jsonl, so trace.jsonl holds each
finished trial's steps exactly once. While a run writes the folder it holds running.json (its
process and host), so a reader can tell a run still going from one that stopped (`run_state`).
A kept folder (one published with the docs) holds results.jsonl.gz and trace.jsonl.gz instead:
every reader reads them as they are, and a run refuses to write into such a folder.

    >>> folder = RunFolder(Path("runs/demo"))          # doctest: +SKIP
    >>> done = {r.key for r in folder.results()}        # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from reflexion.core.errors import UsageError
from reflexion.core.jsonl import JsonlLog, read_numbered, rewrite_jsonl
from reflexion.core.records import JSON, Step, TaskResult

R = TypeVar("R", TaskResult, Step)
CONFIG, TRACE, RESULTS, INTERRUPTED = (
    "config.json",
    "trace.jsonl",
    "results.jsonl",
    "trace.interrupted.jsonl",
)
RUNNING = "running.json"  # held while a run writes the folder: its process, host and start
KEPT = ".gz"  # the suffix of a kept folder's results and trace: read, never appended to


class RunFolder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._trace: JsonlLog | None = None
        self._results: JsonlLog | None = None

    @property
    def config_path(self) -> Path:
        return self.path / CONFIG

    @property
    def results_file(self) -> Path:
        """results.jsonl, or results.jsonl.gz in a kept folder that holds only that."""
        return self._stored(RESULTS)

    @property
    def trace_file(self) -> Path:
        """trace.jsonl, or trace.jsonl.gz in a kept folder that holds only that."""
        return self._stored(TRACE)

    def _stored(self, name: str) -> Path:
        plain, kept = self.path / name, self.path / (name + KEPT)
        return kept if not plain.exists() and kept.exists() else plain

    def load_config(self) -> JSON | None:
        if not self.config_path.exists():
            return None
        try:
            data = json.loads(self.config_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            msg = f"{self.config_path} is not a readable config: {exc}"
            raise UsageError(msg) from None
        why = config_fault(data)
        if why:
            msg = f"{self.config_path} is not a readable config: {why}"
            raise UsageError(msg)
        return dict(data)

    def check_writable(self, extra: Sequence[str] = ()) -> None:
        """Refuse, before anything is written, a folder (or a record in it) we may not write:
        a run that found out half way would stop with a traceback, the folder changed. `extra`:
        more files the run writes here (a memory backend's)."""
        # the folder, or the nearest one above it that exists: where it would be made
        try:
            folder = next(p for p in [self.path, *self.path.parents] if p.exists())
        except OSError as exc:  # a folder above it we may not look into
            msg = f"cannot write the run folder {self.path}: {exc.strerror or exc}"
            raise UsageError(msg) from None
        kept = [f for f in (self.results_file, self.trace_file) if f.suffix == KEPT]
        if kept and folder == self.path:  # appending beside a gzipped copy would split the run
            msg = (
                f"{self.path} is a kept run folder ({kept[0].name}): it is read, not resumed; "
                "gunzip its .jsonl.gz files in a copy of it to run on"
            )
            raise UsageError(msg)
        if not folder.is_dir():
            why = f"{folder} is not a folder"
        else:
            ours = [folder / name for name in (CONFIG, TRACE, RESULTS, INTERRUPTED, *extra)]
            mine = ours if folder == self.path else []
            locked = [p for p in [folder, *mine] if p.exists() and not _writable(p)]
            if not locked:
                return
            why = f"{'it' if locked[0] == self.path else locked[0]} is read-only"
        msg = f"cannot write the run folder {self.path}: {why}"
        raise UsageError(msg)

    def save_config(self, config: JSON) -> None:
        """Write config.json atomically (a crash leaves the old or the new one, never half)."""
        tmp = self.config_path.with_suffix(".json.tmp")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
            os.replace(tmp, self.config_path)
        except OSError as exc:
            msg = f"cannot write the run folder {self.path}: {exc.strerror or exc}"
            raise UsageError(msg) from None

    def results(self) -> list[TaskResult]:
        return _read_records(self.results_file, TaskResult)

    def steps(self) -> list[Step]:
        return _read_records(self.trace_file, Step)

    def unfinished(self, done: Iterable[tuple[str, str, int]]) -> list[JSON]:
        """The trace steps of trials with no result (read only: see set_aside_unfinished)."""
        done = set(done)
        records = _keyed(self.trace_file)
        return [r for r in records if (r["strategy"], r["task_id"], r["seed"]) not in done]

    def set_aside_unfinished(self, done: Iterable[tuple[str, str, int]]) -> list[JSON]:
        """Move trace steps of trials with no result to trace.interrupted.jsonl; return them."""
        done = set(done)
        trace = self.path / TRACE
        records = _keyed(trace)
        keep = [r for r in records if (r["strategy"], r["task_id"], r["seed"]) in done]
        moved = [r for r in records if (r["strategy"], r["task_id"], r["seed"]) not in done]
        if not moved:
            return []
        # Append the moved steps first: if we die between the two writes, they exist twice
        # (once in each file), never zero times.
        side = JsonlLog(self.path / INTERRUPTED)
        for record in moved:
            side.append(record)
        side.close()
        rewrite_jsonl(trace, keep)
        return moved

    def write_step(self, step: Step) -> None:
        if self._trace is None:
            self._trace = JsonlLog(self.path / TRACE)
        self._trace.append(step.to_dict())

    def write_result(self, result: TaskResult) -> None:
        if self._results is None:
            self._results = JsonlLog(self.path / RESULTS)
        self._results.append(result.to_dict())

    def close(self) -> None:
        for log in (self._trace, self._results):
            if log is not None:
                log.close()
        self._trace = self._results = None

    def hold(self) -> None:
        """Mark the folder as being written by this process (see `run_state`)."""
        mark = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
        try:
            (self.path / RUNNING).write_text(json.dumps(mark) + "\n", encoding="utf-8")
        except OSError as exc:
            msg = f"cannot write the run folder {self.path}: {exc.strerror or exc}"
            raise UsageError(msg) from None

    def release(self) -> None:
        """The run is over (finished, stopped or failed): no process writes the folder now."""
        with contextlib.suppress(OSError):
            (self.path / RUNNING).unlink()


@dataclass(frozen=True)
class RunState:
    """How far a run folder got: `done` of `planned` trials (None: a folder from before the
    plan was recorded, which counts the trials each strategy would have had), and whether a
    process is writing it now (`running`).

    >>> RunState(done=2, planned=5, running=True).note()
    'in progress: 2 of 5 trials'
    >>> RunState(done=2, planned=5, running=False).note()
    'stopped at 2 of 5 trials'
    >>> RunState(done=5, planned=5, running=False).note()
    ''
    """

    done: int
    planned: int | None
    running: bool

    @property
    def finished(self) -> bool:
        return not self.running and (self.planned is None or self.done >= self.planned)

    def note(self) -> str:
        """One line for a run still going or stopped before its end ("" for a finished one)."""
        if self.finished:
            return ""
        of = f"{self.done} of {self.planned}" if self.planned is not None else str(self.done)
        return f"in progress: {of} trials" if self.running else f"stopped at {of} trials"


def run_state(path: Path, config: JSON | None, results: Sequence[TaskResult]) -> RunState:
    """The state of the run folder `path`, from its config.json (`planned`: the run records
    tasks x strategies x seeds), its `results` and the mark of the process writing it."""
    planned = config.get("planned") if config else None
    if not isinstance(planned, int):  # written before the plan was recorded: every strategy
        # should have each task and seed seen
        names = {*(config or {}).get("strategies", ()), *(r.strategy for r in results)}
        planned = len(names) * len({(r.task_id, r.seed) for r in results}) or None
    return RunState(len({r.key for r in results}), planned, _held(path / RUNNING))


def _held(mark: Path) -> bool:
    """Whether a live process holds the folder: its mark names this host and a pid that runs
    (a run killed outright leaves its mark behind), or another host (which we cannot ask)."""
    try:
        held = json.loads(mark.read_text(encoding="utf-8"))
        pid, host = int(held["pid"]), str(held["host"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if host != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def not_a_run(folder: Path) -> str:
    """Why `folder` has no results to read: it is missing, or it holds no finished trial."""
    if not folder.exists():
        return f"{folder} does not exist"
    return f"{folder} has no finished trials (no results.jsonl): not a run folder"


# What config.json must hold where present: the keys the folder's readers (resume, report,
# memory, web) rely on. None is allowed for every one: an unset setting.
_KINDS: dict[str, tuple[type, ...]] = {
    **dict.fromkeys(("episodes", "seeds", "tasks", "k", "stream_seed", "task_tokens"), (int,)),
    "planned": (int,),
    "spent_s": (int, float),
    **dict.fromkeys(("run_id", "env", "model", "order", "rank", "price", "version"), (str,)),
    **dict.fromkeys(("memory", "memory_backend", "memory_mode", "chroma_url", "agent"), (str,)),
    **dict.fromkeys(("sandbox", "loads"), (dict,)),
    "created": (int, float),
}


def config_fault(data: object) -> str:
    """Why `data` cannot be a run's config.json ("" if it can).

    >>> config_fault({"strategies": ["single"], "episodes": 3})
    ''
    >>> config_fault({"strategies": "reflexion"})
    "'strategies' is 'reflexion', not a list of names"
    >>> config_fault({"episodes": "five"})
    "'episodes' is 'five', not int"
    """
    if not isinstance(data, dict):
        return f"it holds {type(data).__name__}, not an object of settings"
    for key in ("strategies", "stream_order"):
        names = data.get(key, [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            return f"{key!r} is {names!r}, not a list of names"[:200]
    for key, kinds in _KINDS.items():
        value = data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
            return f"{key!r} is {value!r}, not {' or '.join(k.__name__ for k in kinds)}"[:200]
    return ""


def _read_records(path: Path, kind: type[R]) -> list[R]:
    """Each record of `path`; a line that holds none (an object without the record's fields, or
    of the wrong shape) is a one-line error, not a traceback later."""
    records = []
    for number, raw in read_numbered(path):
        try:
            if not _has_keys(raw):
                raise TypeError
            records.append(kind.from_dict(raw))
        except (TypeError, ValueError, KeyError, AttributeError):
            raise _damaged(path, number, kind) from None
    return records


def _keyed(path: Path) -> list[JSON]:
    """The trace's records as JSON, each checked for the keys a resume sorts them by (cheaper
    than making every step: a resume reads a long trace twice)."""
    records = read_numbered(path)
    for number, raw in records:
        if not _has_keys(raw):
            raise _damaged(path, number, Step)
    return [raw for _, raw in records]


def _has_keys(raw: JSON) -> bool:
    """Whether a record holds the keys that a resume and every report group by, of their type."""
    seed = raw.get("seed")
    names = isinstance(raw.get("strategy"), str) and isinstance(raw.get("task_id"), str)
    return names and isinstance(seed, int) and not isinstance(seed, bool)


def _damaged(path: Path, number: int, kind: type) -> UsageError:
    what = "result" if kind is TaskResult else "trace step"
    return UsageError(f"{path}: line {number} is not a {what} of this version; the file is damaged")


def _writable(path: Path) -> bool:
    """By us: write permission (and search, for a folder), on a file system mounted writable."""
    return os.access(path, os.W_OK | os.X_OK if path.is_dir() else os.W_OK)
