"""How well the visible signal predicted the held-out verdict, attempt by attempt: false
positives (the signal said solved, the held-out tests failed) and false negatives (the signal
said not solved, the held-out tests passed), per strategy and signal. With `--signal
self-tests` this is the error rate of the model's own tests (Reflexion reports 1.4% false
positives on HumanEval and 16.3% on MBPP).

    >>> rows = signal_errors(results)                          # doctest: +SKIP
    >>> rows[0].signal, rows[0].false_positives                # doctest: +SKIP
    ('self-tests', 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reflexion.core.records import Record, TaskResult


@dataclass(frozen=True)
class SignalErrors(Record):
    """One strategy's attempts scored by one signal, against their held-out verdicts."""

    strategy: str
    signal: str  # visible, self-tests, both, or "visible (no usable self-tests)"
    attempts: int
    said_solved: int
    false_positives: int  # said solved, failed held-out
    false_negatives: int  # said not solved, passed held-out

    @property
    def false_positive_rate(self) -> float:
        """Share of these attempts that were false positives."""
        return self.false_positives / self.attempts if self.attempts else 0.0

    @property
    def false_negative_rate(self) -> float:
        return self.false_negatives / self.attempts if self.attempts else 0.0


def signal_errors(results: Sequence[TaskResult]) -> list[SignalErrors]:
    """One row per strategy and signal, in order of appearance; attempts recorded before the
    visible verdict was kept (no `solved` on the point) are left out."""
    counts: dict[tuple[str, str], list[int]] = {}
    for r in results:
        for p in r.curve:
            if p.solved is None:
                continue
            row = counts.setdefault((r.strategy, p.signal or "visible"), [0, 0, 0, 0])
            row[0] += 1
            row[1] += p.solved
            row[2] += p.solved and not p.passed
            row[3] += p.passed and not p.solved
    return [SignalErrors(s, sig, *row) for (s, sig), row in counts.items()]


SIGNAL_COLUMNS = ("strategy", "signal", "attempts", "said solved", "false pos.", "false neg.")


def signal_rows(rows: Sequence[SignalErrors]) -> list[tuple[str, ...]]:
    """The table's cells; rates are shares of the attempts that signal scored.

    >>> signal_rows([SignalErrors("reflexion", "self-tests", 40, 30, 3, 2)])[0][4:]
    ('3 (7.5%)', '2 (5.0%)')
    """
    return [
        (
            r.strategy,
            r.signal,
            str(r.attempts),
            str(r.said_solved),
            f"{r.false_positives} ({r.false_positive_rate:.1%})",
            f"{r.false_negatives} ({r.false_negative_rate:.1%})",
        )
        for r in rows
    ]


def format_signals(rows: Sequence[SignalErrors]) -> str:
    from reflexion.report.summary import align

    return align(SIGNAL_COLUMNS, signal_rows(rows))


SIGNALS_TEXT = (
    "Every attempt, scored by the signal the strategy saw (visible: the task's own visible "
    "tests; self-tests: the model's; both), against its held-out verdict. A false positive said "
    "solved and failed held-out; a false negative said not solved and passed. Rates are shares "
    "of the attempts in the row. 'visible (no usable self-tests)' counts attempts whose task got "
    "no usable self-test, so the visible tests scored them."
)
