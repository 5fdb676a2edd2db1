"""What every subcommand shares: a parser whose errors are one line, exit codes, argument
types that turn a bad value into a one-line message, a count printed with its noun, and the
example that ends each one's help (kept in one place, so that a test can parse every example
with the real parser and check that no subcommand is left without one).

    >>> one_line("bad\\nvalue")
    'bad value'
    >>> EXAMPLES["diff"]
    'reflexion diff runs/before runs/after'
"""

from __future__ import annotations

import argparse
import signal
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

EXIT_USAGE = 2
EXIT_STOPPED = 3  # a token or time budget ran out; the same command resumes the run
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as a shell reports it)


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (no usage dump) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(message)}\n")


def one_line(text: str) -> str:
    """Keep an error on one line even when it quotes user input holding line breaks."""
    return " ".join(text.splitlines())  # splitlines knows every line break (\r, \x0c, ...)


def take_sigint() -> None:
    """Let Ctrl-C (SIGINT) raise KeyboardInterrupt even where the process started with it
    ignored, as a script's `reflexion compare ... &` does: a run or a server that someone signals
    on purpose (`kill -INT`) should stop, not go on to the end."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def typed(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse `type` from a parser that raises ValueError with a message: argparse shows
    only its own generic text for a ValueError, and ours for an ArgumentTypeError."""

    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


R = "runs/quadratic-20261122-120000"  # a run folder, as `compare` names them

EXAMPLES = {
    "run": "reflexion run --env quadratic --strategy reflexion --episodes 5",
    "compare": "reflexion compare --env humaneval:20 --strategies single,reflexion --episodes 4",
    "report": f"reflexion report {R}",
    "diff": "reflexion diff runs/before runs/after",
    "transfer": "reflexion transfer --env game24:100 --strategy insights --episodes 1 "
    "--test-model qwen2.5-coder-1.5b,qwen2.5-coder-0.5b --out runs/tr-g24",
    "memory": f"reflexion memory list {R}",
    "memory list": f"reflexion memory list {R} --kind rule",
    "memory show": f"reflexion memory show {R} 3f9a0c1d2e4b5a69",
    "memory search": f"reflexion memory search {R} 'off by one in the loop bound' --limit 3",
    "memory export": f"reflexion memory export {R} --format md --output lessons.md",
    "memory forget": f"reflexion memory forget {R} 3f9a0c1d2e4b5a69 --why misleading",
    "memory edit": f"reflexion memory edit {R} 3f9a0c1d2e4b5a69 --text 'Check n = 0 first.'",
    "memory history": f"reflexion memory history {R} 3f9a0c1d2e4b5a69",
    "memory revert": f"reflexion memory revert {R} 3f9a0c1d2e4b5a69",
    "memory import": "reflexion memory import runs/store lessons.jsonl",
    "memory audit": f"reflexion memory audit {R} --sample 10",
    "memory prune": f"reflexion memory prune {R} --harmful --dry-run",
    "memory why": f"reflexion memory why {R} q3 2 --strategy reflexion",
    "models": "reflexion models list",
    "models list": "reflexion models list",
    "models install": "reflexion models install qwen2.5-coder-0.5b",
    "models prepare": "reflexion models prepare qwen2.5-coder-1.5b",
    "models serve": "reflexion models serve smollm2-135m --port 8080 --parallel 2",
    "serve": "reflexion serve runs --port 8765",
}


def subcommands(
    parser: argparse.ArgumentParser, path: str = ""
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every subcommand's parser, at any depth, by its words ("memory list").

    >>> from reflexion.cli.main import build_parser
    >>> "memory why" in dict(subcommands(build_parser()))
    True
    """
    for action in parser._actions:  # argparse keeps its subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                words = f"{path} {name}".strip()
                yield words, sub
                yield from subcommands(sub, words)


def add_examples(parser: argparse.ArgumentParser) -> None:
    """End each subcommand's help with its example, as written (not rewrapped)."""
    for words, sub in subcommands(parser):
        if words in EXAMPLES:
            sub.epilog = f"example:\n  {EXAMPLES[words]}"
            sub.formatter_class = argparse.RawDescriptionHelpFormatter


def plural(n: int, word: str) -> str:
    """A count with its noun, as a subcommand prints it.

    >>> plural(1, "reflection"), plural(2, "change")
    ('1 reflection', '2 changes')
    """
    return f"{n} {word}{'' if n == 1 else 's'}"
