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
from reflexion.report.paired import all_pairs, compare_paired, format_pairs, pair
from reflexion.report.runs_diff import RunsDiff, diff_runs, format_diff
from reflexion.report.signals import format_signals, signal_errors
from reflexion.report.stats import bootstrap_mean, episode_curve, success_rate
from reflexion.report.summary import Summary, format_table, summarize

__all__ = [
    "RunsDiff",
    "Summary",
    "all_pairs",
    "arm",
    "arm_table",
    "bootstrap_mean",
    "compare_paired",
    "diff_runs",
    "differing_settings",
    "episode_curve",
    "first_attempt",
    "format_diff",
    "format_pairs",
    "format_signals",
    "format_table",
    "pair",
    "run_config",
    "run_results",
    "run_steps",
    "signal_errors",
    "success_rate",
    "summarize",
    "write_report",
]
