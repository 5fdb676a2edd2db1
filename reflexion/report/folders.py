"""What a run folder holds, read for a report or a script: its results, its trace and its
settings (config.json).

    >>> run_results("runs/demo")[0].strategy  # doctest: +SKIP
    'single'
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reflexion.core.records import Step, TaskResult
from reflexion.loop.config import RESULT_FIELDS
from reflexion.loop.runfolder import RunFolder


def run_results(folder: str | Path) -> list[TaskResult]:
    """Every finished trial's result (results.jsonl), in the order written.

    >>> [r.task_id for r in run_results("runs/demo")][:2]  # doctest: +SKIP
    ['q1', 'q1']
    """
    return RunFolder(Path(folder)).results()


def run_steps(folder: str | Path) -> list[Step]:
    """Every trace step (trace.jsonl), in the order written.

    >>> {s.kind for s in run_steps("runs/demo")} >= {"generate", "score"}  # doctest: +SKIP
    True
    """
    return RunFolder(Path(folder)).steps()


def run_config(folder: str | Path) -> dict[str, Any]:
    """The run's settings as config.json holds them; {} when the folder has none.

    >>> run_config("runs/demo")["episodes"]  # doctest: +SKIP
    5
    """
    return dict(RunFolder(Path(folder)).load_config() or {})


def differing_settings(a: str | Path, b: str | Path, ignore: Sequence[str] = ()) -> list[str]:
    """The settings that change a trial's result (those a resume must agree on) on which two
    run folders differ, `ignore` aside.

    >>> differing_settings("runs/a", "runs/b", ignore=("env",))  # doctest: +SKIP
    ['episodes']
    """
    first, second = run_config(a), run_config(b)
    return [f for f in RESULT_FIELDS if f not in ignore and first.get(f) != second.get(f)]
