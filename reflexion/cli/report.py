"""`reflexion report RUN`: rebuild a run folder's comparison.json, plots, report.md and
report.html from its results; `--price IN,OUT` prices its tokens in money (a run made before the
price was known too), and `--csv FILE` writes one row per trial.

    reflexion report runs/quadratic-20261122-120000
    reflexion report runs/humaneval-20261122-120000 --price 2.5,10 --csv trials.csv
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from reflexion.cli.common import typed
from reflexion.core.errors import UsageError
from reflexion.models.prices import PRICES_TAKEN, parse_price


def add_report_parser(sub: Any) -> None:
    report = sub.add_parser(
        "report", help="rebuild a run folder's report (plots, report.md, report.html)"
    )
    report.add_argument("run", type=Path, help="a run folder with results.jsonl")
    report.add_argument(
        "--price",
        type=typed(parse_price),
        metavar="IN,OUT",
        help="US dollars per million input and output tokens (e.g. 2.5,10), or a model of the "
        f"price table (list prices of {PRICES_TAKEN}; prices change): the report's cost column "
        "(default: the run's --price, or the table's price of its API model)",
    )
    report.add_argument(
        "--csv", type=Path, metavar="FILE", help="also write one row per trial to FILE (a new file)"
    )


def cmd_report(args: argparse.Namespace) -> int:
    """Rebuild comparison.json, the plots, report.md and report.html from results.jsonl."""
    from reflexion.cli.run import print_more
    from reflexion.core.runfolder import RunFolder, not_a_run
    from reflexion.report.build import write_report
    from reflexion.report.folders import check_new_file, write_csv
    from reflexion.report.summary import format_table

    folder: Path = args.run
    results = RunFolder(folder).results()
    if not results:
        raise UsageError(not_a_run(folder))
    if args.csv is not None:
        check_new_file(args.csv)  # before anything is written
    config = RunFolder(folder).load_config() or {"env": results[0].env, "run_id": results[0].run_id}
    if args.price is not None:
        config = config | {"price": args.price}  # comparison.json records it; config.json stays
    report = write_report(folder, results, config)
    print(report.headline)
    print(format_table(report.summaries))
    print_more(report)
    print(f"report: {report.files[-1]}")
    if args.csv is not None:
        print(f"wrote {write_csv(args.csv, results)} trials to {args.csv}")
    return 0
