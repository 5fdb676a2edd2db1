"""Command-line values of a run's settings, parsed: each raises ValueError with a message that
says what was expected (argparse shows it as a one-line error).

    >>> role_limits("generate=512, reflect=128")
    {'generate': 512, 'reflect': 128}
"""

from __future__ import annotations

from pathlib import Path


def positive(text: str) -> int:
    """A whole number of at least 1 (a command-line value).

    >>> positive("3")
    3
    """
    try:
        value = int(text)
    except ValueError:
        msg = f"expected a whole number, got {text!r}"
        raise ValueError(msg) from None
    if value < 1:
        msg = f"expected a number of at least 1, got {value}"
        raise ValueError(msg)
    return value


def path_text(text: str) -> str:
    """A folder as the run records it: `./store/` and `store` are one folder.

    >>> path_text("./store/")
    'store'
    """
    return str(Path(text))


def role_limits(text: str) -> dict[str, int]:
    """ "generate=512,reflect=128" -> {"generate": 512, "reflect": 128}."""
    out: dict[str, int] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        role, _, value = item.partition("=")
        try:
            out[role.strip()] = int(value)
        except ValueError:
            msg = f"expected ROLE=N pairs, got {item!r}"
            raise ValueError(msg) from None
    return out
