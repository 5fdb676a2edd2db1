"""Two run folders on the same tasks, compared per strategy and paired per task: what
`reflexion diff RUN_A RUN_B` prints (reflexion.report.diff_runs), kept under its old name.

    .venv/bin/python scripts/compare_runs.py runs/before runs/after
"""

from __future__ import annotations

import sys

from reflexion.cli import main

if __name__ == "__main__":
    sys.exit(main(["diff", *sys.argv[1:]]))
