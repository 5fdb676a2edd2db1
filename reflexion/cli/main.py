"""The `reflexion` command: run, compare, transfer, report, inspect memory, and serve models.

    reflexion compare --env quadratic --strategies self-refine,reflexion --episodes 5
    reflexion report runs/quadratic-20261122-120000
    reflexion diff runs/before runs/after
    reflexion transfer --env constrained:40 --out runs/transfer
    reflexion memory list runs/quadratic-20261122-120000
    reflexion serve runs
    reflexion models serve smollm2-135m --port 8080

Bad input is one line on stderr and exit code 2; nothing already written is touched. A run
stopped by --max-tokens-total or --timeout exits 3; the same command resumes it. Ctrl-C stops a
run within seconds (a local model's decode is cancelled, a served model's request abandoned),
says how far it got and the command that resumes it, and exits 130.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from reflexion.cli.common import EXIT_INTERRUPTED, EXIT_USAGE, Parser, one_line
from reflexion.core.errors import ReflexionError, UsageError
from reflexion.core.packages import check_packages
from reflexion.core.version import VERSION

# each command's words, and the module that adds its parser (and the parsers of its kin)
COMMAND_MODULES = {
    "run": "run",
    "compare": "run",
    "transfer": "run",
    "report": "report",
    "diff": "diff",
    "memory": "memory",
    "models": "models",
    "serve": "serve",
}
ADDERS = {
    "run": "add_run_parsers",
    "report": "add_report_parser",
    "diff": "add_diff_parser",
    "memory": "add_memory_parser",
    "models": "add_models_parser",
    "serve": "add_serve_parser",
}


def build_parser(argv: Sequence[str] | None = None) -> Parser:
    """The parser of every command; for an `argv` that names one (`memory forget ...`), of that
    command's group alone, so a command builds only its own options. Help, errors and parsing
    are the same either way."""
    from reflexion.cli.common import add_examples

    parser = Parser(prog="reflexion", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {VERSION}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    words = list(argv or ())
    named = COMMAND_MODULES.get(words[0]) if words else None
    for module in [named] if named else dict.fromkeys(COMMAND_MODULES.values()):
        adder = getattr(importlib.import_module(f"reflexion.cli.{module}"), ADDERS[module])
        if module == "memory" and len(words) > 1:
            adder(sub, words[1])  # the group's verbs live in four modules: the one asked for
        else:
            adder(sub)
    add_examples(parser)
    return parser


def dispatch(args: argparse.Namespace) -> int:
    if args.command in ("run", "compare"):
        from reflexion.cli.run import cmd_run
        from reflexion.core.loading import import_module
        from reflexion.strategies import parse_strategies

        for name in args.imports:
            import_module(name)

        text = args.strategy if args.command == "run" else args.strategies
        strategies = [s.name for s in parse_strategies(text)]
        if args.command == "run" and len(strategies) > 1:
            msg = f"run takes one strategy, got {text!r}: use compare for several"
            raise UsageError(msg)
        return cmd_run(args, strategies)
    if args.command == "transfer":
        from reflexion.cli.run import cmd_transfer

        return cmd_transfer(args)
    if args.command == "report":
        from reflexion.cli.report import cmd_report

        return cmd_report(args)
    if args.command == "diff":
        from reflexion.cli.diff import cmd_diff

        return cmd_diff(args)
    if args.command == "models":
        from reflexion.cli.models import cmd_models

        return cmd_models(args)
    if args.command == "serve":
        from reflexion.cli.serve import cmd_serve

        return cmd_serve(args)
    from reflexion.cli.memory import cmd_memory

    return cmd_memory(args)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        check_packages()  # a foreign `memory` or `envs` would break imports far from the cause
    except ReflexionError as exc:
        print(f"reflexion: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(argv).parse_args(argv)
    try:
        return dispatch(args)
    except ReflexionError as exc:
        print(f"reflexion: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `reflexion memory list RUN | head`: the reader left, not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's exit flush quiet
        return 0
    except KeyboardInterrupt:
        if args.command not in ("run", "compare"):
            print("reflexion: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        from reflexion.cli.run import resume_command

        print(f"resume with: {resume_command(argv, args.out)}", file=sys.stderr)
        # Every record is flushed and the run folder closed; what is left are worker threads
        # in a model call or a check, which the interpreter's exit would wait for, and a
        # model server it would tear down under them. The next run sets their trials aside.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    sys.exit(main())
