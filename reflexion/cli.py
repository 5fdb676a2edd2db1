"""The `reflexion` command: run, compare, and inspect memory.

    reflexion compare --env quadratic --strategies self-refine,reflexion --episodes 5
    reflexion memory list runs/quadratic-20261122-120000

Bad input is one line on stderr and exit code 2; nothing already written is touched.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from reflexion.errors import ReflexionError

EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (no usage dump) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        msg = f"expected a whole number, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if value < 1:
        msg = f"expected a number of at least 1, got {value}"
        raise argparse.ArgumentTypeError(msg)
    return value


def build_parser() -> Parser:
    parser = Parser(prog="reflexion", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    run = sub.add_parser("run", help="run one strategy on an env's tasks")
    run.add_argument(
        "--strategy",
        required=True,
        help="single, resample, correct, self-refine, reflexion or reflexion-window",
    )
    _run_options(run)
    compare = sub.add_parser(
        "compare",
        help="run several strategies on the same tasks, seeds "
        "and budget, and print a comparison table",
    )
    compare.add_argument(
        "--strategies",
        default="single,resample,correct,self-refine,reflexion,reflexion-window",
        help="comma-separated (default: all six)",
    )
    _run_options(compare)
    from reflexion.memory_cli import add_memory_parser

    add_memory_parser(sub)
    return parser


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--env", required=True, help="env name (quadratic, or one you registered)")
    p.add_argument(
        "--episodes",
        type=positive,
        default=4,
        help="most candidates per task for every strategy (default 4)",
    )
    p.add_argument("--tasks", type=positive, help="run only the first N tasks")
    p.add_argument("--seeds", type=positive, default=1, help="seeds 0..N-1 (default 1)")
    p.add_argument(
        "--model",
        help="openai:NAME or python:MODULE:ATTR (envs with a scripted "
        "actor, like quadratic, need none)",
    )
    p.add_argument(
        "--out", type=Path, help="run folder (default runs/ENV-TIME); an existing one is resumed"
    )
    p.add_argument("--concurrency", type=positive, default=4, help="trials in flight (default 4)")
    p.add_argument("--k", type=positive, default=3, help="reflections recalled per episode")
    p.add_argument(
        "--scope",
        choices=("task", "global"),
        default="task",
        help="recall from the same task only, or from any task by similarity",
    )
    p.add_argument(
        "--memory",
        type=Path,
        help="a Chroma store folder to share across runs (default: OUT/memory)",
    )
    p.add_argument("--chroma-url", help="use a Chroma server (http://host:port) instead")
    p.add_argument(
        "--embedder",
        default="all-MiniLM-L6-v2",
        help="embedding model of the memory (hash-N: a test-only hash embedder)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def cmd_run(args: argparse.Namespace, strategies: Sequence[str]) -> int:
    from reflexion.report import format_table, summarize, write_comparison
    from reflexion.runfolder import RunFolder
    from reflexion.runner import RunConfig, run

    out = args.out or Path("runs") / f"{_slug(args.env)}-{time.strftime('%Y%m%d-%H%M%S')}"
    config = RunConfig(
        env=args.env,
        strategies=tuple(strategies),
        out=str(out),
        episodes=args.episodes,
        tasks=args.tasks,
        seeds=args.seeds,
        k=args.k,
        scope=args.scope,
        model=args.model,
        memory=str(args.memory) if args.memory else None,
        chroma_url=args.chroma_url,
        embedder=args.embedder,
        concurrency=args.concurrency,
    )
    results = run(config, progress=not args.no_progress)
    summaries = summarize(results, strategies)
    print(format_table(summaries))
    if args.command == "compare":
        saved = RunFolder(out).load_config() or config.to_dict()  # it has the run id
        path = write_comparison(out, summaries, saved)
        print(f"comparison: {path}")
    print(f"run folder: {out}")
    return 0


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)[:40]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "run":
            return cmd_run(args, [args.strategy])
        if args.command == "compare":
            from reflexion.strategies import parse_strategies

            return cmd_run(args, [s.value for s in parse_strategies(args.strategies)])
        from reflexion.memory_cli import cmd_memory

        return cmd_memory(args)
    except ReflexionError as exc:
        print(f"reflexion: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `reflexion memory list RUN | head`: the reader left, not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's exit flush quiet
        return 0
    except KeyboardInterrupt:
        print("reflexion: interrupted; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
