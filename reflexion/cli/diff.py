"""`reflexion diff RUN_A RUN_B`: two runs of the same tasks, each strategy paired by task with
the comparison's statistics, and the runtime's work per role (reflexion.report.runs_diff).

    reflexion diff runs/before runs/after
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_diff_parser(sub: Any) -> None:
    p = sub.add_parser(
        "diff",
        help="two runs of the same tasks, each strategy paired by task: pass rates, won and "
        "lost, McNemar p, tokens, calls and cached share per role",
    )
    p.add_argument("a", type=Path, metavar="RUN_A", help="a run folder (the baseline)")
    p.add_argument("b", type=Path, metavar="RUN_B", help="a run folder of the same tasks")


def cmd_diff(args: argparse.Namespace) -> int:
    """Print run B against run A; a bad pair of folders is a UsageError (one line, exit 2)."""
    from reflexion.report.runs_diff import diff_runs, format_diff

    print(format_diff(diff_runs(args.a, args.b)))
    return 0
