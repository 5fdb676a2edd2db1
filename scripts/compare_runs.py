"""Two run folders on the same tasks, compared per strategy and paired per task: what
`reflexion diff RUN_A RUN_B` prints (reflexion.report.diff_runs), kept under its old name.

    .venv/bin/python scripts/compare_runs.py runs/before runs/after
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reflexion import ReflexionError
from reflexion.report import diff_runs, format_diff


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("a", type=Path, metavar="RUN_A")
    parser.add_argument("b", type=Path, metavar="RUN_B")
    args = parser.parse_args()
    try:
        print(format_diff(diff_runs(args.a, args.b)))
    except ReflexionError as exc:
        print(f"compare_runs: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
