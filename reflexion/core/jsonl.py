"""Append-only JSON-lines files that survive a kill: flushed per record, a torn last line dropped.

The run folder's trace and results and the window memory's file are all written this way (and
read back from a gzipped copy too, `NAME.jsonl.gz`, as a published run folder keeps them):

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.jsonl"
    >>> log = JsonlLog(path); log.append({"n": 1}); log.close()
    >>> _ = path.open("a").write('{"n": 2')  # a run killed half way through a line
    >>> read_jsonl(path)
    [{'n': 1}]
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import IO, Any

from reflexion.core.errors import UsageError

JSON = dict[str, Any]


def read_jsonl(path: Path) -> list[JSON]:
    """Every complete record in `path`; a torn last line (no newline, or bad JSON) is dropped."""
    return [record for _, record in read_numbered(path)]


def read_numbered(path: Path) -> list[tuple[int, JSON]]:
    """`read_jsonl` with each record's line number. A line that is JSON but not an object is a
    damaged file, as a line that is not JSON is (unless it is the torn last one). A path ending
    in .gz is read through gzip."""
    if not path.exists():
        return []
    lines = _read_bytes(path).split(b"\n")
    records: list[tuple[int, JSON]] = []
    for number, line in enumerate(lines[:-1], start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines) - 1:  # subtle: the last line may be torn even with its "\n"
                break
            record = None
        if not isinstance(record, dict):
            msg = f"{path}: line {number} is not valid JSON; the file is damaged"
            if record is not None or line.strip() == b"null":
                msg = f"{path}: line {number} is not a JSON object; the file is damaged"
            raise UsageError(msg) from None
        records.append((number, record))
    return records


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, unzipped where its name ends in .gz; a broken archive is one line."""
    data = path.read_bytes()
    if path.suffix != ".gz":
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError) as exc:
        msg = f"{path} is not a readable gzip file ({exc}); the file is damaged"
        raise UsageError(msg) from None


class JsonlLog:
    """Append-only JSON lines, flushed after every record."""

    def __init__(self, path: Path) -> None:
        self.path = path
        _cut_torn_tail(path)
        self._file: IO[str] = path.open("a", encoding="utf-8")

    def append(self, record: JSON) -> None:
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def rewrite_jsonl(path: Path, records: list[Any]) -> None:
    """Replace the file's records atomically (a crash leaves the old file or the new one)."""
    tmp = path.with_suffix(".jsonl.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _cut_torn_tail(path: Path) -> None:
    """Drop a last line with no newline, so the next append starts on a fresh line."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)
