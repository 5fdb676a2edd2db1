"""Run one SQL query on a database opened read-only and say what it gave, as a dict ready for
JSON. The sandbox runs this file as its script (the query and the database come on stdin); the
env calls `execute` itself for its own gold queries. It imports nothing from this repository.

    >>> refusal("-- the top three\\nSELECT 1")
    >>> refusal("/* tidy */ DELETE FROM orders")
    'refused: only one read-only SELECT statement is allowed'
"""

from __future__ import annotations

import base64
import json
import os
import re
import sqlite3
import sys
import time
from typing import Any

REFUSED = "refused: only one read-only SELECT statement is allowed"
# Statements that are not reads; an unknown first word goes on to SQLite, which says what is
# wrong with it (a typo), and the authorizer below stops whatever else writes.
NOT_READS = frozenset(
    {"INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER", "ATTACH", "DETACH"}
    | {"PRAGMA", "VACUUM", "REINDEX", "ANALYZE", "BEGIN", "COMMIT", "END", "ROLLBACK"}
    | {"SAVEPOINT", "RELEASE"}
)
# What a read-only query may do; anything else (a write, a PRAGMA, ATTACH, ...) is denied.
ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION}
ALLOWED.add(getattr(sqlite3, "SQLITE_RECURSIVE", 33))
LEADING = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.DOTALL)  # space and comments
MAX_CHARS = 1_000  # a longer text value is cut: no gold value comes near it
MAX_JSON = 4_000_000


def refusal(query: str) -> str | None:
    """Why the query may not run, before it runs: it begins as a statement that is no read."""
    body = query[LEADING.match(query).end() :]  # type: ignore[union-attr]
    word = re.match(r"[(\s]*(\w+)", body)
    return REFUSED if word and word.group(1).upper() in NOT_READS else None


def execute(path: str, query: str, seconds: float, max_rows: int) -> dict[str, Any]:
    """The query's columns and first `max_rows` rows (`truncated` when there were more), or why
    there are none: `refused`, `error` (SQLite's text) or `timeout` (seconds)."""
    why = refusal(query)
    if why is not None:
        return {"refused": why}
    denied: list[int] = []

    def authorize(action: int, *_: object) -> int:
        if action in ALLOWED:
            return sqlite3.SQLITE_OK
        denied.append(action)
        return sqlite3.SQLITE_DENY

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.set_authorizer(authorize)
        deadline = time.monotonic() + seconds
        conn.set_progress_handler(lambda: time.monotonic() > deadline, 1_000)
        try:
            cursor = conn.execute(query)
            rows = cursor.fetchmany(max_rows + 1)
        except (sqlite3.Error, sqlite3.Warning) as exc:
            if denied or "one statement" in str(exc):
                return {"refused": REFUSED}
            if time.monotonic() > deadline:
                return {"timeout": seconds}
            return {"error": str(exc)}
        if cursor.description is None:
            return {"refused": REFUSED}
        columns = [d[0] for d in cursor.description]
        cells = [[_cell(value) for value in row] for row in rows[:max_rows]]
        return {"columns": columns, "rows": cells, "truncated": len(rows) > max_rows}
    finally:
        conn.close()


def _cell(value: Any) -> Any:
    if isinstance(value, bytes):
        value = value.hex()
    if isinstance(value, str):
        return value[:MAX_CHARS]
    return value


def main() -> None:
    """In the sandbox: a JSON header line (query, seconds, max_rows), then the database in
    base64; a copy of the database is written here, opened read-only, and the answer printed."""
    header = json.loads(sys.stdin.readline())
    with open("shop.sqlite", "wb") as f:
        f.write(base64.b64decode(sys.stdin.read()))
    os.chmod("shop.sqlite", 0o444)
    result = execute("shop.sqlite", header["query"], header["seconds"], header["max_rows"])
    text = json.dumps(result)
    if len(text) > MAX_JSON:
        text = json.dumps({"error": "the result is too large to compare (over 4 MB as JSON)"})
    print(text)


if __name__ == "__main__":
    main()
