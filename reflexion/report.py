"""Per-strategy summaries of a run: the comparison table and comparison.json.

>>> print(format_table(summarize(results)))        # doctest: +SKIP
strategy      trials  final  any   mean best  LLM calls  tokens  wall s
self-refine        8  62.5%  62.5%  -0.0213          0       0    0.01
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from reflexion.records import Record, TaskResult


@dataclass(frozen=True)
class Summary(Record):
    strategy: str
    trials: int
    final_success: float  # held-out pass rate of the candidate each strategy returns
    any_success: float  # held-out pass rate of any attempt (optimistic)
    mean_best_score: float  # mean best VISIBLE score
    mean_attempts: float
    llm_calls: int
    tokens: int
    wall_s: float  # summed over trials (trials overlap when run concurrently)


def summarize(results: Sequence[TaskResult], order: Sequence[str] = ()) -> list[Summary]:
    """One Summary per strategy, in `order` first, then in order of appearance."""
    names = list(dict.fromkeys([*order, *(r.strategy for r in results)]))
    out = []
    for name in names:
        rs = [r for r in results if r.strategy == name]
        if not rs:
            continue
        n = len(rs)
        out.append(
            Summary(
                strategy=name,
                trials=n,
                final_success=sum(r.final_passed for r in rs) / n,
                any_success=sum(r.any_passed for r in rs) / n,
                mean_best_score=sum(r.best_score for r in rs) / n,
                mean_attempts=sum(r.attempts for r in rs) / n,
                llm_calls=sum(r.llm_calls for r in rs),
                tokens=sum(r.input_tokens + r.output_tokens for r in rs),
                wall_s=round(sum(r.wall_s for r in rs), 3),
            )
        )
    return out


COLUMNS = (
    "strategy",
    "trials",
    "final",
    "any",
    "mean best",
    "attempts",
    "LLM calls",
    "tokens",
    "wall s",
)


def format_table(summaries: Sequence[Summary]) -> str:
    rows = [
        (
            s.strategy,
            str(s.trials),
            f"{s.final_success:.1%}",
            f"{s.any_success:.1%}",
            f"{s.mean_best_score:.4g}",
            f"{s.mean_attempts:.2f}",
            str(s.llm_calls),
            str(s.tokens),
            f"{s.wall_s:.2f}",
        )
        for s in summaries
    ]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(COLUMNS)]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(COLUMNS, widths, strict=True))
        )
    ]
    for row in rows:
        lines.append(
            "  ".join(
                v.ljust(w) if i == 0 else v.rjust(w)
                for i, (v, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    return "\n".join(lines)


def write_comparison(folder: Path, summaries: Sequence[Summary], config: dict[str, object]) -> Path:
    path = folder / "comparison.json"
    data = {"config": config, "strategies": [s.to_dict() for s in summaries]}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path
