"""The `reflexion` command line (see reflexion.cli.main)."""

from reflexion.cli.main import main

__all__ = ["main"]
