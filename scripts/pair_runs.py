"""Arms taken from different run folders, paired on the tasks they share: for a strategy run
again after a fix, against a baseline that need not be run again.

    .venv/bin/python scripts/pair_runs.py runs/sql-stream:single runs/sql-exemplars2:exemplars \\
        --by difficulty --blocks 4

Each ARM is RUN:STRATEGY, or RUN:STRATEGY=LABEL when two arms share a strategy's name;
RUN:STRATEGY@1 is the strategy's trials cut to their first answer (for `resample`, a single shot:
its first answer is the greedy one), costed from the run's trace.jsonl. It prints the arms'
table (`reflexion report`'s columns), each arm against the first, paired by task with the
package's McNemar test and bootstrap interval, and each arm's successes by a field of the
task's spec (`--by`, e.g. the SQL env's `difficulty`, or its `needs`, a list: a task counts
under each item) and by block of the first folder's stream order; with `--forms WORDS`, how many
final answers reasoned in words around their query or program and how many of those were right.
Only the tasks every arm finished are counted, so a run still under way is paired on what it has
done, and the header says how many that is.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from envs import make_env
from reflexion import ReflexionError, TaskResult
from reflexion.report import (
    align,
    arm,
    first_attempt,
    format_pairs,
    format_table,
    pair,
    run_config,
    summarize,
)

FENCED = re.compile(r"```.*?(?:```|$)", re.DOTALL)  # a fenced block, closed or cut off


def parse_arm(text: str) -> tuple[Path, str, str]:
    """RUN:STRATEGY[@1][=LABEL]; the strategy keeps its @1.

    >>> parse_arm("runs/a:exemplars=fixed"), parse_arm("runs/a:resample@1")[1:]
    ((PosixPath('runs/a'), 'exemplars', 'fixed'), ('resample@1', 'resample@1'))
    """
    folder, sep, rest = text.rpartition(":")
    strategy, _, label = rest.partition("=")
    name, at, cut = strategy.partition("@")
    if not sep or not folder or not name:
        msg = f"an arm is RUN:STRATEGY, RUN:STRATEGY@1 or either with =LABEL, got {text!r}"
    elif at and cut != "1":
        msg = f"only @1 (the first answer) can follow a strategy, got {text!r}"
    elif label.endswith("@1"):
        msg = f"@1 goes before =LABEL (RUN:STRATEGY@1=LABEL), got {text!r}"
    else:
        return Path(folder), strategy, label or strategy
    raise argparse.ArgumentTypeError(msg)


def load_arm(folder: Path, strategy: str, label: str) -> list[TaskResult]:
    """The arm's finished trials; STRATEGY@1 cuts each to its first answer."""
    if not folder.is_dir():
        msg = f"{folder}: no such run folder"
        raise ReflexionError(msg)
    name, at, _ = strategy.partition("@")
    results = first_attempt(folder, name, label) if at else arm(folder, name, label)
    if not results:
        where = " with its first answer in trace.jsonl" if at else ""
        msg = f"{folder}: no finished {name} trial{where}"
        raise ReflexionError(msg)
    return results


def shared(arms: Sequence[list[TaskResult]]) -> list[list[TaskResult]]:
    """Each arm cut to the tasks every arm finished."""
    common = set.intersection(*({r.task_id for r in results} for results in arms))
    return [[r for r in results if r.task_id in common] for results in arms]


def groups_of(value: object) -> tuple[str, ...]:
    """The groups a task's spec value puts it in: a list's every item (the SQL env's `needs`:
    a question that needs cents and a join counts under both), else the value itself.

    >>> groups_of(["cents", "join"]), groups_of("easy"), groups_of(None)
    (('cents', 'join'), ('easy',), ('?',))
    """
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value) or ("(none)",)
    return ("?",) if value is None else (str(value),)


def by_field(
    results: Sequence[TaskResult], labels: Sequence[str], spec: dict[str, tuple[str, ...]]
) -> str:
    groups = sorted({g for gs in spec.values() for g in gs})
    cells = []
    for label in labels:
        mine = [r for r in results if r.strategy == label]
        row = [label]
        for g in groups:
            picked = [r for r in mine if g in spec.get(r.task_id, ())]
            row.append(f"{sum(r.final_passed for r in picked)}/{len(picked)}")
        cells.append(row)
    return align(("arm", *groups), cells)


def prose_words(answer: str) -> int:
    """Words of an answer outside its fenced blocks: the reasoning around a query or program.

    >>> prose_words("First the join.\\n```sql\\nSELECT 1\\n```")
    3
    """
    return len(FENCED.sub("", answer).split())


def by_form(results: Sequence[TaskResult], labels: Sequence[str], words: int) -> str:
    """Each arm's final answers that reason (more than `words` words outside fenced blocks)
    against bare ones, how many of each were right, and the mean output tokens."""
    cells = []
    for label in labels:
        mine = [r for r in results if r.strategy == label]
        reasoned = [r for r in mine if prose_words(r.best_candidate) > words]
        bare = [r for r in mine if prose_words(r.best_candidate) <= words]
        out = sum(r.output_tokens for r in mine) / max(1, len(mine))
        right = [sum(r.final_passed for r in part) for part in (reasoned, bare)]
        cells.append(
            [label, f"{right[0]}/{len(reasoned)}", f"{right[1]}/{len(bare)}", f"{out:.0f}"]
        )
    head = ("arm, final answers", f"reasoned (> {words} words), right", "bare, right")
    return align((*head, "output tokens / trial"), cells)


def by_block(
    results: Sequence[TaskResult], labels: Sequence[str], order: Sequence[str], blocks: int
) -> str:
    done = {r.task_id for r in results}
    ordered = [t for t in order if t in done]
    size = max(1, -(-len(ordered) // blocks))
    spans = [ordered[i : i + size] for i in range(0, len(ordered), size)]
    header = [f"{i * size + 1}-{i * size + len(span)}" for i, span in enumerate(spans)]
    cells = []
    for label in labels:
        passed = {r.task_id for r in results if r.strategy == label and r.final_passed}
        cells.append([label, *(f"{len(passed & set(span))}/{len(span)}" for span in spans)])
    return align(("arm, questions in stream order", *header), cells)


def tables(arms: list[list[TaskResult]], labels: list[str], args: argparse.Namespace) -> str:
    """What `main` prints for the arms, cut to their shared tasks."""
    results = [r for a in arms for r in a]
    first = run_config(args.arms[0][0])
    parts = [f"{len({r.task_id for r in results})} tasks finished by every arm"]
    parts[0] += "\n" + format_table(summarize(results, labels))
    parts.append(format_pairs([pair(results, labels[0], label) for label in labels[1:]]))
    if args.by:
        env = make_env(str(first["env"]))
        spec = {t.id: groups_of(t.spec.get(args.by)) for t in env.tasks()}
        parts.append(by_field(results, labels, spec))
    order = first.get("stream_order") or list(dict.fromkeys(r.task_id for r in arms[0]))
    parts.append(by_block(results, labels, [str(t) for t in order], args.blocks))
    if args.forms is not None:
        parts.append(by_form(results, labels, args.forms))
    return "\n\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("arms", nargs="+", type=parse_arm, metavar="RUN:STRATEGY[@1][=LABEL]")
    parser.add_argument("--by", help="a field of the tasks' spec to group by (e.g. difficulty)")
    parser.add_argument("--blocks", type=int, default=4, help="blocks of the stream order")
    parser.add_argument(
        "--forms",
        type=int,
        metavar="WORDS",
        help="also count final answers with more than WORDS words outside fenced blocks "
        "(reasoning) against bare ones, and how many of each were right",
    )
    args = parser.parse_args(argv)
    if len(args.arms) < 2:
        parser.error("give at least two arms")
    if args.blocks < 1:
        parser.error(f"--blocks must be at least 1, got {args.blocks}")
    labels = [label for _, _, label in args.arms]
    if len(set(labels)) < len(labels):
        parser.error("two arms have the same name: add =LABEL to one")
    try:
        arms = shared([load_arm(*spec) for spec in args.arms])
        if not arms[0]:
            msg = "the arms share no finished task"
            raise ReflexionError(msg)
        print(tables(arms, labels, args))
    except (ReflexionError, OSError) as exc:
        print(f"pair_runs: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
