"""Take the query out of a reply and run it: a candidate's in the sandbox (its own process, a
copy of the database opened read-only, time and row limits), a gold query in our own process.

    >>> extract_query("Here:\\n```sql\\nSELECT 1;\\n```")
    'SELECT 1;'
    >>> extract_query("  SELECT 2  ")
    'SELECT 2'
"""

from __future__ import annotations

import base64
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import envs.sql.child as child  # the module, not envs.sql's namespace: that imports this one
from envs.sandbox import run_python

Cell = int | float | str | None
SECONDS = 5.0  # how long a query may run
MAX_ROWS = 1_000  # rows fetched; one more says the result was cut
MEMORY_MB = 512
STARTUP_S = 10.0  # the sandbox's own time on top: start Python, write the database's copy
BLOCKS = re.compile(r"```[ \t]*(sql|sqlite)?[^\n]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class Result:
    """What a query gave: its columns and rows, or `problem`, in words, when it gave none."""

    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Cell, ...], ...] = ()
    truncated: bool = False
    problem: str = ""


def extract_query(reply: str) -> str:
    """The last ```sql block (else the last ``` block, else the whole reply), stripped."""
    blocks = BLOCKS.findall(reply)
    tagged = [body for tag, body in blocks if tag]
    found = tagged or [body for _, body in blocks]
    return (found[-1] if found else reply).strip()


@functools.lru_cache(maxsize=1024)  # score and evaluate see one candidate: it runs once
def run_sandboxed(path: Path, query: str, seconds: float = SECONDS) -> Result:
    """The query run by `child.py` in the sandbox, on a copy of the database at `path`."""
    header = json.dumps({"query": query, "seconds": seconds, "max_rows": MAX_ROWS})
    ran = run_python(
        _child_source(),
        timeout_s=seconds + STARTUP_S,
        memory_mb=MEMORY_MB,
        stdin=header + "\n" + _encoded(path),
        max_output=child.MAX_JSON + 1_000,
    )
    if ran.timed_out:
        return Result(problem=f"the query ran past {seconds:g} s")
    if ran.reason == "memory limit" or "MemoryError" in ran.stderr[-2_000:]:
        return Result(problem=f"the query ran out of memory ({MEMORY_MB} MB)")
    try:
        payload = json.loads(ran.stdout)
    except json.JSONDecodeError:
        return Result(problem=f"the query could not run ({ran.reason})")
    return from_payload(payload)


@functools.lru_cache(maxsize=1024)  # a gold query runs once per process
def run_direct(path: Path, query: str, seconds: float = 60.0) -> Result:
    """A query we wrote (a gold query), run in our own process: it is not untrusted."""
    return from_payload(child.execute(str(path), query, seconds, MAX_ROWS))


def from_payload(payload: dict[str, Any]) -> Result:
    """The Result that `child.execute`'s dict describes."""
    if "refused" in payload:
        return Result(problem=str(payload["refused"]))
    if "timeout" in payload:
        return Result(problem=f"the query ran past {payload['timeout']:g} s")
    if "error" in payload:
        return Result(problem=f"SQLite error: {payload['error']}")
    rows = tuple(tuple(row) for row in payload["rows"])
    return Result(tuple(payload["columns"]), rows, bool(payload["truncated"]))


@functools.cache
def _child_source() -> str:
    return Path(child.__file__).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=4)
def _encoded(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode("ascii")
