"""The `reflexion` command: run, compare, report, and inspect memory.

    reflexion compare --env quadratic --strategies self-refine,reflexion --episodes 5
    reflexion report runs/quadratic-20261122-120000
    reflexion memory list runs/quadratic-20261122-120000

Bad input is one line on stderr and exit code 2; nothing already written is touched. A run
stopped by --max-tokens-total or --timeout exits 3; the same command resumes it.
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
EXIT_STOPPED = 3  # a token or time budget ran out; the same command resumes the run


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (no usage dump) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(message)}\n")


def one_line(text: str) -> str:
    """Keep an error on one line even when it quotes user input holding line breaks."""
    return " ".join(text.splitlines())  # splitlines knows every line break (\r, \x0c, ...)


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


def role_limits(text: str) -> dict[str, int]:
    """ "generate=512,reflect=128" -> {"generate": 512, "reflect": 128}."""
    out: dict[str, int] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        role, _, value = item.partition("=")
        try:
            out[role.strip()] = int(value)
        except ValueError:
            msg = f"expected ROLE=N pairs, got {item!r}"
            raise argparse.ArgumentTypeError(msg) from None
    return out


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
    report = sub.add_parser(
        "report", help="rebuild a run folder's report (plots, report.md, report.html)"
    )
    report.add_argument("run", type=Path, help="a run folder with results.jsonl")
    from reflexion.memory_cli import add_memory_parser

    add_memory_parser(sub)
    from reflexion.models_cli import add_models_parser

    add_models_parser(sub)
    return parser


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--env",
        required=True,
        help="quadratic (no LLM), humaneval[:N|:spread-N], jsonl:PATH, or one you registered",
    )
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
        help="a local model (qwen2.5-coder-1.5b, the default; qwen2.5-coder-0.5b; smollm2-135m; "
        "a .gguf path), openai:NAME, openai-compatible:URL[#MODEL], or python:MODULE:ATTR; "
        "quadratic's scripted actor needs none",
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
    p.add_argument(
        "--temperature",
        type=float,
        default=0.8,
        help="sampling temperature of best-of-N samples after the first; every other "
        "call decodes greedily (default 0.8)",
    )
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    p.add_argument(
        "--max-tokens",
        type=role_limits,
        default={},
        help="per-role output limits, e.g. generate=512,reflect=128 (defaults: "
        "generate/refine/correct 512, feedback 256, reflect 192)",
    )
    p.add_argument(
        "--retries",
        type=int,
        default=3,
        help="more tries of a model call that failed transiently (timeout, lost connection, "
        "HTTP 429 or 5xx), with exponential backoff from 0.5 s; then the attempt fails "
        "(default 3)",
    )
    p.add_argument(
        "--call-timeout",
        type=float,
        default=600.0,
        help="seconds one model call may take; a slower one counts as a transient failure "
        "(default 600)",
    )
    p.add_argument(
        "--max-tokens-total",
        type=int,
        help="stop once this invocation's model calls used N tokens: no new trial starts, "
        "trials in flight are cancelled, finished ones are kept; exit code 3, and the same "
        "command (a larger budget allowed) resumes the run",
    )
    p.add_argument(
        "--timeout",
        type=float,
        help="stop after this many seconds, as --max-tokens-total does (exit code 3)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def cmd_run(args: argparse.Namespace, strategies: Sequence[str]) -> int:
    from reflexion.report import format_table, summarize, write_report
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
        temperature=args.temperature,
        seed=args.seed,
        max_tokens=args.max_tokens,
        retries=args.retries,
        call_timeout=args.call_timeout,
        max_tokens_total=args.max_tokens_total,
        timeout_s=args.timeout,
    )
    results = run(config, progress=not args.no_progress)
    if not results:
        print("no trial finished")
    elif args.command == "compare":
        saved = RunFolder(out).load_config() or config.to_dict()  # it has the run id
        report = write_report(out, results, saved)
        print(format_table(report.summaries))
        print(f"comparison: {report.files[0]}\nreport: {report.files[-1]}")
    else:
        print(format_table(summarize(results, strategies)))
    print(f"run folder: {out}")
    if results.stopped is not None:
        print(results.stopped.message(), file=sys.stderr)
        return EXIT_STOPPED
    return 0


def cmd_report(folder: Path) -> int:
    """Rebuild comparison.json, the plots, report.md and report.html from results.jsonl."""
    from reflexion.errors import UsageError
    from reflexion.report import format_table, write_report
    from reflexion.runfolder import RunFolder

    results = RunFolder(folder).results()
    if not results:
        msg = f"{folder} has no finished trials (no results.jsonl): not a run folder"
        raise UsageError(msg)
    config = RunFolder(folder).load_config() or {"env": results[0].env, "run_id": results[0].run_id}
    report = write_report(folder, results, config)
    print(format_table(report.summaries))
    print(f"report: {report.files[-1]}")
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
        if args.command == "report":
            return cmd_report(args.run)
        if args.command == "models":
            from reflexion.models_cli import cmd_models

            return cmd_models(args)
        from reflexion.memory_cli import cmd_memory

        return cmd_memory(args)
    except ReflexionError as exc:
        print(f"reflexion: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `reflexion memory list RUN | head`: the reader left, not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's exit flush quiet
        return 0
    except KeyboardInterrupt:
        print("reflexion: interrupted; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
