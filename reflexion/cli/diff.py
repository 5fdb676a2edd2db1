"""`reflexion diff`: two runs of the same tasks, each strategy paired by task with the
comparison's statistics and the runtime's work per role; or arms from any run folders
(RUN:STRATEGY), paired on the tasks they all finished, with their successes by a field of the
tasks' spec, by block of the stream, and by the form of their answers (reflexion.report.runs_diff).

    reflexion diff runs/before runs/after
    reflexion diff runs/sql-stream:single runs/sql-exemplars:exemplars --by difficulty
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import Any

from reflexion.core.errors import UsageError

ARM_OPTIONS = ("--by", "--blocks", "--forms")


def add_diff_parser(sub: Any) -> None:
    p = sub.add_parser(
        "diff",
        help="two runs of the same tasks, each strategy paired by task: pass rates, won and "
        "lost, McNemar p, tokens, calls and cached share per role; or arms RUN:STRATEGY from any "
        "run folders, each paired with the first on the tasks all finished",
        description=textwrap.fill(
            "Give two run folders (RUN_A, the baseline, then RUN_B) to pair each "
            "strategy they both ran; or two or more arms RUN:STRATEGY to pair each arm with the "
            "first. An arm is RUN:STRATEGY, RUN:STRATEGY@1 (the trials cut to their first answer: "
            "for resample, a single shot), or either with =LABEL when two arms share a name.",
            79,
        ),
    )
    p.add_argument(
        "runs",
        nargs="+",
        metavar="RUN[:STRATEGY]",
        help="two run folders, or two or more arms RUN:STRATEGY[@1][=LABEL]",
    )
    arms = p.add_argument_group("arms (RUN:STRATEGY)")
    arms.add_argument("--by", metavar="FIELD", help="a field of the tasks' spec to group by")
    arms.add_argument(
        "--blocks", type=int, metavar="N", help="blocks of the first run's stream order (4)"
    )
    arms.add_argument(
        "--forms",
        type=int,
        metavar="WORDS",
        help="also count final answers with more than WORDS words outside fenced blocks "
        "(reasoning) against bare ones, and how many of each were right",
    )


def is_folder(text: str) -> bool:
    """Whether a RUN[:STRATEGY] argument names a run folder alone (a folder whose own name holds
    a colon is a folder too)."""
    return ":" not in text or Path(text).is_dir()


def cmd_diff(args: argparse.Namespace) -> int:
    """Print run B against run A, or the arms' tables; bad input is a UsageError (one line,
    exit 2)."""
    from reflexion.report.runs_diff import diff_arms, diff_runs, format_diff, parse_arm

    if all(map(is_folder, args.runs)):
        given = [flag for flag in ARM_OPTIONS if getattr(args, flag[2:]) is not None]
        if given:
            verb = "is" if len(given) == 1 else "are"
            msg = f"{' and '.join(given)} {verb} for arms (RUN:STRATEGY), not two run folders"
            raise UsageError(msg)
        if len(args.runs) != 2:
            got = f"{len(args.runs)} folder{'' if len(args.runs) == 1 else 's'}"
            msg = f"give two run folders (RUN_A RUN_B), or arms RUN:STRATEGY: got {got}"
            raise UsageError(msg)
        print(format_diff(diff_runs(args.runs[0], args.runs[1])))
        return 0
    arms = [parse_arm(text) for text in args.runs]
    if len(arms) < 2:
        msg = "give at least two arms"
        raise UsageError(msg)
    blocks = 4 if args.blocks is None else args.blocks
    if blocks < 1:
        msg = f"--blocks must be at least 1, got {blocks}"
        raise UsageError(msg)
    try:
        print(diff_arms(arms, args.by, blocks, args.forms))
    except OSError as exc:  # an unreadable file in a run folder
        raise UsageError(str(exc)) from None
    return 0
