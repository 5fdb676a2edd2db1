"""A run folder as docs/results keeps it (config.json, results.jsonl.gz, trace.jsonl.gz and the
memory's export, memory.jsonl.gz; no database files) is read as it is: `reflexion report` gives
the published table, `reflexion diff`, the dashboard and the `memory` read verbs work on it, and
what would write into it (a resumed run, a change to its memory) is a one-line refusal."""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from reflexion.web.app import make_app
from reflexion.web.site import Site

ROOT = Path(__file__).resolve().parents[1]
KEPT = ROOT / "docs" / "results" / "2026-11-28-sql-three-insights"
PAGE = KEPT.with_suffix(".md")


def cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reflexion", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


@pytest.fixture
def kept(tmp_path: Path) -> Path:
    folder = tmp_path / "insights"
    shutil.copytree(KEPT, folder)
    return folder


def published_row(strategy: str) -> list[str]:
    """The page's table row of `strategy`, up to its wall time (the cost column differs: the
    page's table is `reflexion diff RUN:STRATEGY ...`'s, which prices nothing)."""
    line = next(
        x for x in PAGE.read_text(encoding="utf-8").splitlines() if x.startswith(f"{strategy} ")
    )
    return line.split()[:12]


def test_the_kept_folder_holds_no_database_and_no_plain_jsonl() -> None:
    names = sorted(p.name for p in KEPT.iterdir())
    assert names == [
        "config.json",
        "memory.jsonl.gz",
        "results.jsonl.gz",
        "run.cmd",
        "trace.jsonl.gz",
    ]


def test_report_on_a_kept_folder_gives_the_published_table(kept: Path) -> None:
    done = cli("report", kept)
    assert done.returncode == 0, done.stderr
    row = next(x for x in done.stdout.splitlines() if x.startswith("insights "))
    assert row.split()[:12] == published_row("insights")
    assert "17.0% [11-23]" in row
    # the memory counts come from the gzipped trace: the rules it wrote, and the curator replies
    assert re.search(r"insights\s+generate\s+434\s+924,534", done.stdout)
    assert (kept / "report.md").is_file() and not (kept / "results.jsonl").exists()


def test_diff_reads_two_kept_folders(kept: Path, tmp_path: Path) -> None:
    other = tmp_path / "again"
    shutil.copytree(KEPT, other)
    done = cli("diff", kept, other)
    assert done.returncode == 0, done.stderr
    assert re.search(r"insights\s+159\s+17\.0%\s+17\.0%\s+\+0\.0 pts", done.stdout)


def test_the_dashboard_shows_a_kept_folder_and_its_memory(kept: Path) -> None:
    web = TestClient(make_app(Site.from_paths([kept], token="t0k")), base_url="http://127.0.0.1")
    run = web.get("/runs/insights")
    assert run.status_code == 200 and "17.0%" in run.text
    memory = web.get("/runs/insights/memory")
    assert memory.status_code == 200
    ids = set(re.findall(r'href="/runs/insights/memory/([0-9a-f]{16})"', memory.text))
    assert len(ids) == 10  # the 10 rules of the export
    lesson = web.get(f"/runs/insights/memory/{sorted(ids)[0]}")
    # its recalls, read from the gzipped trace
    assert lesson.status_code == 200 and "another task, this run" in lesson.text
    task = web.get("/runs/insights/tasks/sql/001")
    assert task.status_code == 200 and "insights" in task.text


def test_memory_list_and_show_read_the_export_and_a_change_says_how(kept: Path) -> None:
    listed = cli("memory", "list", kept, "--kind", "rule")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith(f"10 reflections in {kept / 'memory.jsonl.gz'}")
    rid = listed.stdout.splitlines()[1].split()[0]
    shown = cli("memory", "show", kept, rid)
    assert shown.returncode == 0 and f"id: {rid}" in shown.stdout
    assert "recalled by insights task" in shown.stdout  # from the gzipped trace
    forget = cli("memory", "forget", kept, rid)
    assert forget.returncode == 2 and "Traceback" not in forget.stderr
    assert "read only" in forget.stderr and "reflexion memory import" in forget.stderr
    assert len(forget.stderr.strip().splitlines()) == 1
    assert (kept / "memory.jsonl.gz").read_bytes() == (KEPT / "memory.jsonl.gz").read_bytes()


def test_memory_import_brings_the_export_back_into_a_store(kept: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    done = cli("memory", "import", store, kept / "memory.jsonl.gz", "--embedder", "hash-64")
    assert done.returncode == 0, done.stderr
    assert "imported 10 reflections" in done.stdout
    again = cli("memory", "export", store)
    assert again.stdout == gzip.decompress((kept / "memory.jsonl.gz").read_bytes()).decode()


def test_a_run_does_not_resume_into_a_kept_folder(kept: Path) -> None:
    before = sorted(p.name for p in kept.iterdir())
    done = cli(
        "run", "--env", "quadratic", "--strategy", "single", "--episodes", "1",
        "--embedder", "hash-64", "--out", kept, "--no-progress",
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "is a kept run folder (results.jsonl.gz)" in done.stderr
    assert sorted(p.name for p in kept.iterdir()) == before


def test_a_damaged_gzip_is_a_one_line_error(kept: Path) -> None:
    data = (kept / "results.jsonl.gz").read_bytes()
    (kept / "results.jsonl.gz").write_bytes(data[: len(data) // 2])
    done = cli("report", kept)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "results.jsonl.gz is not a readable gzip file" in done.stderr
