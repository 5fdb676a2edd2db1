"""`reflexion run` and `compare`: their options come from RunConfig's fields, where each
setting is declared once with its help, limits and default (`report` is in cli/report.py). And
`reflexion transfer`, which runs the transfer protocol of reflexion.runner.transfer.

    reflexion compare --env quadratic --strategies self-refine,reflexion --episodes 5
    reflexion transfer --env constrained:40 --strategy reflexion
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import shlex
import sys
import textwrap
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from reflexion.cli.common import EXIT_STOPPED, take_sigint, typed
from reflexion.runner.config import GROUPS, OUTPUT, RUN, RunConfig
from reflexion.runner.parsers import flag_of

if TYPE_CHECKING:
    from reflexion.core.protocols import Env
    from reflexion.report.build import Report
    from reflexion.runner.transfer import Plan

R = TypeVar("R")


def add_run_parsers(sub: Any) -> None:
    from reflexion.strategies import BUILTIN, DEFAULT

    known = ", ".join(BUILTIN)
    run = sub.add_parser("run", help="run one strategy on an env's tasks")
    one = {"required": True, "help": f"{known}, or one --import registers"}
    add_config_options(run, ("--strategy", one))
    compare = sub.add_parser(
        "compare",
        help="run several strategies on the same tasks, seeds and budget, and print a "
        "comparison table",
    )
    several = {
        "default": ",".join(DEFAULT),
        "help": f"comma-separated, of {known} (default: {', '.join(DEFAULT)}: the designs that "
        "learn across tasks are asked for by name)",
    }
    add_config_options(compare, ("--strategies", several))
    add_transfer_parser(sub)


def add_config_options(p: argparse.ArgumentParser, strategies: tuple[str, dict[str, Any]]) -> None:
    """One option per RunConfig field that has one, with the field's help and default, under
    its group's heading (GROUPS, in order); `strategies` (the command's own option) follows
    --env."""
    groups = {name: p.add_argument_group(name) for name in GROUPS}
    for f in dataclasses.fields(RunConfig):
        if f.metadata["cli"]:
            flag, kwargs = option_of(f)
            groups[f.metadata["group"]].add_argument(flag, **kwargs)
        if f.name == "env":
            groups[RUN].add_argument(strategies[0], **strategies[1])
    groups[RUN].add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first (the working folder is searched too); it may register "
        "strategies, envs or memory backends (repeatable)",
    )
    groups[OUTPUT].add_argument("--no-progress", action="store_true", help="hide the progress bar")


def option_of(f: dataclasses.Field[Any]) -> tuple[str, dict[str, Any]]:
    """A RunConfig field's flag and argparse keywords (help, default, type, choices)."""
    meta = f.metadata
    default = f.default_factory() if callable(f.default_factory) else f.default
    shown = default not in (None, "", {}, ())
    help_text = meta["help"] + (f" (default {default})" if shown else "")
    kwargs: dict[str, Any] = {"dest": f.name, "default": default, "help": help_text}
    if meta["parse"] is not None:
        kwargs["type"] = typed(meta["parse"])
    if meta["choices"] is not None:
        kwargs["choices"] = meta["choices"]  # the strings, for argparse to name
    if f.name == "env":
        kwargs |= {"required": True, "default": None}
    if isinstance(default, bool):  # a switch: it turns the default over when given
        kwargs = {"dest": f.name, "default": default, "help": meta["help"]}
        kwargs["action"] = "store_false" if default else "store_true"
    return flag_of(f), kwargs


def cmd_run(args: argparse.Namespace, strategies: list[str]) -> int:
    from reflexion.core.runfolder import RunFolder
    from reflexion.report.build import run_pricing, write_report
    from reflexion.report.summary import format_table, summarize
    from reflexion.runner.execute import execute
    from reflexion.runner.setup import default_out

    if args.out is None:  # named now, so that Ctrl-C can say which folder to resume
        args.out = str(default_out(args.env))
    names = [f.name for f in dataclasses.fields(RunConfig) if f.metadata["cli"]]
    config = RunConfig(strategies=tuple(strategies), **{n: getattr(args, n) for n in names})
    # echo: what the run loaded, what a resume found, and how far Ctrl-C let it get
    results = interruptible(execute(config, progress=not args.no_progress, echo=_note))
    out = results.folder or Path(str(config.out))
    saved = RunFolder(out).load_config() or config.to_dict()  # it has the run id
    if config.price:  # a price given now holds over the folder's (it changes no trial)
        saved |= {"price": config.price}
    if not results:
        print("no trial finished")
    elif args.command == "compare":
        # the whole folder: a resume that asked for fewer strategies keeps the others' rows
        report = write_report(out, RunFolder(out).results(), saved)
        print(report.headline)
        print(format_table(report.summaries))
        print_more(report)
        print(f"comparison: {report.files[0]}\nreport: {report.files[-1]}")
    else:
        cost = run_pricing(saved)
        summaries = summarize(results, strategies, task_tokens=config.task_tokens, pricing=cost)
        print(format_table(summaries))
    print(f"run folder: {out}")
    if results.stopped is not None:
        print(results.stopped.message(), file=sys.stderr)
        return EXIT_STOPPED
    return 0


def interruptible(run: Coroutine[Any, Any, R]) -> R:
    """asyncio.run for a run, where Ctrl-C (SIGINT) cancels the run: its trials unwind, its
    files close, and KeyboardInterrupt comes back without waiting for the worker threads still
    in a call (a model's decode, a check), which asyncio.run would wait for."""
    take_sigint()
    runner = asyncio.Runner()
    interrupted = False
    try:
        return runner.run(run)
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        if not interrupted:
            runner.close()


def resume_command(argv: Sequence[str], out: str | None) -> str:
    """The command that resumes an interrupted run: the same one, with its run folder (`out`,
    None while it has none yet).

    >>> resume_command(["compare", "--env", "sql:4"], "runs/sql-4-20261201-120000")
    'reflexion compare --env sql:4 --out runs/sql-4-20261201-120000'
    """
    given = any(a == "--out" or a.startswith("--out=") for a in argv)
    return shlex.join(["reflexion", *argv, *(() if given or out is None else ("--out", out))])


def _note(line: str) -> None:
    print(line, file=sys.stderr, flush=True)  # beside the progress bar; stdout holds the table


def print_more(report: Report) -> None:
    """Under the main table: the wall time the run really took, the paired comparisons (two
    strategies or more), how the visible signal did against held-out when the model's own tests
    were part of it, and what memory cost and did (reflexion.report.memory) when the trace
    tells."""
    from reflexion.report.memory import format_memory
    from reflexion.report.paired import format_pairs
    from reflexion.report.signals import format_signals

    if report.spent:
        print(f"\n{report.spent}")
    if report.pairs:
        print(f"\npaired, on the same tasks:\n{format_pairs(report.pairs)}")
    if any(s.signal != "visible" for s in report.signals):
        print(
            f"\nthe visible signal against held-out, per attempt:\n{format_signals(report.signals)}"
        )
    if report.memory:
        print(f"\n{format_memory(report.memory)}")


def add_transfer_parser(sub: Any) -> None:
    from reflexion.models import DEFAULT_MODEL

    p = sub.add_parser(
        "transfer",
        help="do lessons carry across tasks? learn on part A of an env's tasks, then run part B "
        "with the learned memory and with an empty one, both frozen, and pair the two",
        description=textwrap.fill(
            "Learn on part A of an env's tasks (a strategy that keeps lessons, in a stream with "
            "global recall, into OUT/store), then run the disjoint part B twice with the memory "
            "frozen (recall only): from the learned store (OUT/with) and from an empty one "
            "(OUT/empty), and print their paired comparison, the learned lessons by kind, and "
            "means by position in the stream. The same command resumes it.",
            79,
        ),
    )
    p.add_argument("--env", default="constrained:40", help="the env (default constrained:40)")
    p.add_argument("--strategy", default="reflexion", help="one that keeps lessons")
    p.add_argument(
        "--split",
        help="parity (the default: even positions of the env's task list learn, odd ones are "
        "tested) or first-N (the first N learn); OUT/split.json records the two id lists",
    )
    p.add_argument("--learn", type=int, metavar="N", help="the same as --split first-N")
    p.add_argument("--episodes", type=int, default=3, help="episodes a task (default 3)")
    p.add_argument(
        "--model", help=f"learns on part A (default {DEFAULT_MODEL}, or the env's scripted actor)"
    )
    p.add_argument(
        "--test-model",
        help="runs part B; several, comma-separated, run it each from the one learned store "
        "(another model's runs are OUT/with.MODEL and OUT/empty.MODEL; default: --model)",
    )
    p.add_argument("--embedder", help="the memory's embedder (default: the run's default)")
    p.add_argument("--out", default="runs/transfer", help="the folder (default runs/transfer)")


def cmd_transfer(args: argparse.Namespace) -> int:
    """Check the request, print the plan, run its parts (or resume them), and print the
    paired comparison of each part-B model's two runs; bad input is one line, exit 2."""
    import time

    from reflexion.runner import transfer

    request = transfer.Transfer(
        env=args.env,
        strategy=args.strategy,
        split=transfer.split_of(args.split, args.learn),
        episodes=args.episodes,
        model=args.model,
        test_models=transfer.models_of(args.test_model),
        embedder=args.embedder,
        out=args.out,
    )
    plan = transfer.prepare(request)
    print(transfer.plan_text(plan))
    start = time.perf_counter()
    transfer.run_plan(plan, run_part)
    print(f"\n{time.perf_counter() - start:.0f} s this call; ", end="")
    print(transfer.format_kinds(Path(request.out) / "store"))
    print_transfer(plan)
    return 0


def run_part(config: RunConfig, env: Env) -> None:
    """Run (or resume) one part of a transfer, and write its report, as `compare` does."""
    from reflexion.core.runfolder import RunFolder
    from reflexion.report.build import write_report
    from reflexion.runner.execute import execute
    from reflexion.runner.setup import Injected

    done = interruptible(execute(config, Injected(env=env), progress=True))
    if done.folder is not None and (results := RunFolder(done.folder).results()):
        write_report(done.folder, results, RunFolder(done.folder).load_config() or {})


def print_transfer(plan: Plan) -> None:
    """For each part-B model: its learned-memory run against its empty-memory run, paired by
    task, in final success and in final visible score, and both by quarter of the stream."""
    from reflexion.report.folders import arm
    from reflexion.report.paired import format_pairs, pair, paired_scores
    from reflexion.report.stream import by_quarter, final_score

    strategy, order = plan.transfer.strategy, [t.id for t in plan.split.test]
    for warm, cold in plan.tests:
        empty = arm(str(cold.out), strategy, "empty memory")
        learned = arm(str(warm.out), strategy, "learned memory")
        print(f"\npart B run by {warm.model or 'the scripted actor'}:")
        print(format_pairs([pair([*empty, *learned], "empty memory", "learned memory")]))
        sides = [{r.task_id: final_score(r) for r in rs} for rs in (empty, learned)]
        if scores := paired_scores(sides[0], sides[1], ("empty", "learned")):
            print(f"\nfinal visible score, paired: {scores}")
        arms = {"empty memory": empty, "learned memory": learned}
        print("\n" + by_quarter(order, arms, "final success", lambda r: float(r.final_passed)))
        print("\n" + by_quarter(order, arms, "final visible score", final_score))
