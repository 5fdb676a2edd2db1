"""The run folder: config.json, trace.jsonl, results.jsonl (and the memory store beside them).

Writing is append-only and flushed per record, so a killed run loses at most the line it was
writing. A half-written last line is dropped (and cut off the file before the next append).
Re-opening a folder resumes it: finished task x strategy x seed trials are skipped, and the trace
of trials that were cut off is moved to trace.interrupted.jsonl, so trace.jsonl holds each
finished trial's steps exactly once.

    >>> folder = RunFolder(Path("runs/demo"))          # doctest: +SKIP
    >>> done = {r.key for r in folder.results()}        # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
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


class RunFolder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._trace: JsonlLog | None = None
        self._results: JsonlLog | None = None

    @property
    def config_path(self) -> Path:
        return self.path / CONFIG

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
        return _read_records(self.path / RESULTS, TaskResult)

    def steps(self) -> list[Step]:
        return _read_records(self.path / TRACE, Step)

    def unfinished(self, done: Iterable[tuple[str, str, int]]) -> list[JSON]:
        """The trace steps of trials with no result (read only: see set_aside_unfinished)."""
        done = set(done)
        records = _keyed(self.path / TRACE)
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


def not_a_run(folder: Path) -> str:
    """Why `folder` has no results to read: it is missing, or it holds no finished trial."""
    if not folder.exists():
        return f"{folder} does not exist"
    return f"{folder} has no finished trials (no results.jsonl): not a run folder"


# What config.json must hold where present: the keys the folder's readers (resume, report,
# memory, web) rely on. None is allowed for every one: an unset setting.
_KINDS: dict[str, tuple[type, ...]] = {
    **dict.fromkeys(("episodes", "seeds", "tasks", "k", "stream_seed", "task_tokens"), (int,)),
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
