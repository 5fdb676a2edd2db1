"""What every subcommand shares: a parser whose errors are one line, exit codes, and argument
types that turn a bad value into a one-line message.

    >>> one_line("bad\\nvalue")
    'bad value'
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, NoReturn

EXIT_USAGE = 2
EXIT_STOPPED = 3  # a token or time budget ran out; the same command resumes the run


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (no usage dump) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(message)}\n")


def one_line(text: str) -> str:
    """Keep an error on one line even when it quotes user input holding line breaks."""
    return " ".join(text.splitlines())  # splitlines knows every line break (\r, \x0c, ...)


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
