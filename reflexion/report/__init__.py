"""Reports of a run: per-strategy summaries with bootstrap intervals, plots, report.md/html."""

from reflexion.report.build import write_report
from reflexion.report.summary import Summary, format_table, summarize

__all__ = ["Summary", "format_table", "summarize", "write_report"]
