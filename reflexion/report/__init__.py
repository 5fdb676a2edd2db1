"""Reports of a run: per-strategy summaries with bootstrap intervals, plots, report.md/html; and
the named functions scripts build their tables from (arms, pairs, signals, rates, run folders,
two runs diffed)."""

from reflexion.report.build import write_report
from reflexion.report.folders import (
    arm,
    arm_table,
    differing_settings,
    first_attempt,
    run_config,
    run_results,
    run_steps,
)
from reflexion.report.paired import all_pairs, compare_paired, format_pairs, mcnemar_p, pair
from reflexion.report.runs_diff import RunsDiff, diff_runs, format_diff
from reflexion.report.signals import format_signals, signal_errors
from reflexion.report.stats import (
    RESAMPLES,
    bootstrap_mean,
    bootstrap_rows,
    episode_curve,
    success_rate,
)
from reflexion.report.summary import Summary, align, format_table, summarize

__all__ = [
    "RESAMPLES",
    "RunsDiff",
    "Summary",
    "align",
    "all_pairs",
    "arm",
    "arm_table",
    "bootstrap_mean",
    "bootstrap_rows",
    "compare_paired",
    "diff_runs",
    "differing_settings",
    "episode_curve",
    "first_attempt",
    "format_diff",
    "format_pairs",
    "format_signals",
    "format_table",
    "mcnemar_p",
    "pair",
    "run_config",
    "run_results",
    "run_steps",
    "signal_errors",
    "success_rate",
    "summarize",
    "write_report",
]
