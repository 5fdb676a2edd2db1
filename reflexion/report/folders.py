"""What run folders hold, read for a report or a script: a run's results (and, for pandas or a
CSV file, one flat record per trial), its trace and its settings (config.json); and arms of an
experiment that span several runs on the same tasks (settings such as --feedback or --signal
hold for a whole run): each arm is one strategy of one run folder, renamed, so the paired
statistics can set any arm against any other.

    >>> run_results("runs/demo")[0].strategy  # doctest: +SKIP
    'single'
    >>> write_csv(Path("trials.csv"), run_results("runs/demo"))         # doctest: +SKIP
    48
    >>> results = arm("runs/abl-a", "reflexion", "full reflexion")       # doctest: +SKIP
    >>> {r.strategy for r in results}                                   # doctest: +SKIP
    {'full reflexion'}
"""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reflexion.core.errors import UsageError
from reflexion.core.records import Step, TaskResult
from reflexion.core.runfolder import RunFolder
from reflexion.report.paired import Pair, direction, pair
from reflexion.report.stats import success_rate
from reflexion.report.summary import align
from reflexion.runner.config import RESULT_FIELDS


def run_results(folder: str | Path) -> list[TaskResult]:
    """Every finished trial's result (results.jsonl), in the order written.

    >>> [r.task_id for r in run_results("runs/demo")][:2]  # doctest: +SKIP
    ['q1', 'q1']
    """
    return RunFolder(Path(folder)).results()


def run_steps(folder: str | Path) -> list[Step]:
    """Every trace step (trace.jsonl), in the order written.

    >>> {s.kind for s in run_steps("runs/demo")} >= {"generate", "score"}  # doctest: +SKIP
    True
    """
    return RunFolder(Path(folder)).steps()


def run_config(folder: str | Path) -> dict[str, Any]:
    """The run's settings as config.json holds them; {} when the folder has none.

    >>> run_config("runs/demo")["episodes"]  # doctest: +SKIP
    5
    """
    return dict(RunFolder(Path(folder)).load_config() or {})


def differing_settings(a: str | Path, b: str | Path, ignore: Sequence[str] = ()) -> list[str]:
    """The settings that change a trial's result (those a resume must agree on) on which two
    run folders differ, `ignore` aside.

    >>> differing_settings("runs/a", "runs/b", ignore=("env",))  # doctest: +SKIP
    ['episodes']
    """
    first, second = run_config(a), run_config(b)
    return [f for f in RESULT_FIELDS if f not in ignore and first.get(f) != second.get(f)]


def trial_record(r: TaskResult) -> dict[str, Any]:
    """One trial as a flat dict (for pandas.DataFrame, or a CSV row)."""
    row = {k: v for k, v in r.to_dict().items() if k not in ("curve", "errors")}
    return row | {"tokens": r.input_tokens + r.output_tokens, "errors": "; ".join(r.errors)}


def check_new_file(path: Path) -> None:
    """A UsageError (one line) unless `path` can be made: never overwrite a file."""
    if path.exists():
        msg = f"{path} exists: --csv writes a new file (remove it, or name another)"
        raise UsageError(msg)
    if not path.parent.is_dir():
        msg = f"cannot write {path}: no folder {path.parent}"
        raise UsageError(msg)


def write_csv(path: Path, results: Sequence[TaskResult]) -> int:
    """Write one row per trial, with a header, to the new file `path`; the rows written."""
    check_new_file(path)
    rows = [trial_record(r) for r in results]
    header = list(dict.fromkeys(k for row in rows for k in row))
    try:
        with path.open("x", encoding="utf-8", newline="") as f:  # "x": never overwrite a file
            writer = csv.DictWriter(f, fieldnames=header)
            writer.writeheader()
            writer.writerows(rows)
    except OSError as exc:
        msg = f"cannot write {path}: {exc.strerror or exc}"
        raise UsageError(msg) from None
    return len(rows)


def arm(folder: str | Path, strategy: str, label: str) -> list[TaskResult]:
    """The results of `strategy` in the run folder, as the arm `label`."""
    results = [r for r in RunFolder(Path(folder)).results() if r.strategy == strategy]
    return [dataclasses.replace(r, strategy=label) for r in results]


def first_attempt(folder: str | Path, strategy: str, label: str) -> list[TaskResult]:
    """The trials of `strategy` cut to their first answer, as the arm `label`: its held-out
    verdict is the first point of the curve, its answer and cost the first `generate` call's
    alone (not the self-tests written before it), and its wall time that call's latency (the
    check's time left out; an answer reused from the run's cache takes the time of the call that
    made it). For a within-task strategy (`resample`, `reflexion`, `self-refine`) the first
    answer comes from the task's own prompt, so under greedy decoding this is a single shot on
    the same tasks; a design's first prompt also holds what its memory showed."""
    run = RunFolder(Path(folder))
    firsts = [s for s in run.steps() if s.kind == "generate" and s.episode == 1]
    # a trial's steps are all in the trace once it has a result (resumes set aside the partial
    # ones), so each finished trial has one first call
    calls = {(s.task_id, s.seed): s for s in firsts if s.strategy == strategy}
    # what a reused answer cost the call that made it: another strategy's first (greedy)
    # answer; later samples share the prompt but are drawn anew, never reused
    took = {(s.task_id, s.seed, s.prompt): s.latency_s for s in firsts if not s.data.get("reused")}
    out = []
    for r in run.results():
        call = calls.get((r.task_id, r.seed))
        if r.strategy != strategy or not r.curve or call is None:
            continue
        reused = bool(call.data.get("reused"))
        wall = took.get((r.task_id, r.seed, call.prompt), 0.0) if reused else call.latency_s
        first = r.curve[0]
        out.append(
            dataclasses.replace(
                r,
                strategy=label,
                best_candidate=call.output,
                final_passed=first.passed,
                any_passed=first.passed,
                best_score=first.score,
                best_episode=first.episode,
                attempts=1,
                curve=(first,),
                input_tokens=call.input_tokens,
                output_tokens=call.output_tokens,
                llm_calls=1,
                reused_calls=int(reused),
                wall_s=wall,
                errors=(call.error,) if call.error else (),
            )
        )
    return out


ARM_COLUMNS: tuple[str, ...] = ("arm", "tasks", "pass@1 [95% CI]", "vs base [95% CI]", "won")
ARM_COLUMNS += ("lost", "McNemar p", "tokens vs base", "published", "expected", "direction")


def arm_table(
    results: Sequence[TaskResult],
    base: str,
    rows: Sequence[tuple[str, str, str]],  # arm, its published number, the expected direction
) -> str:
    """Each arm's pass@1 and its paired comparison with `base`, and whether the published
    direction ("higher", "lower" or "same" than base; "" for base itself) held."""
    cells = []
    for name, published, expected in rows:
        mine = [r for r in results if r.strategy == name]
        rate = success_rate(mine, lambda r: r.final_passed)
        p: Pair | None = pair(results, base, name) if name != base else None
        cells.append(
            (
                name,
                str(len({r.task_id for r in mine})),
                f"{rate.value:.1%} [{rate.low * 100:.0f}-{rate.high * 100:.0f}]",
                "" if p is None else _points(p),
                "" if p is None else str(p.won),
                "" if p is None else str(p.lost),
                "" if p is None else f"{p.p_value:.3f}",
                "" if p is None or p.token_ratio is None else f"{p.token_ratio:.2f}x",
                published,
                expected or "(base)",
                "" if p is None else direction(p, expected),
            )
        )
    return align(ARM_COLUMNS, cells)


def _points(p: Pair) -> str:
    return (
        f"{p.difference * 100:+.1f} [{p.difference_low * 100:+.1f}, {p.difference_high * 100:+.1f}]"
    )
