"""Loading a user's object named `MODULE:ATTR` (`--model python:...`, `--env python:...`).

The working folder is searched for MODULE, but only AFTER everything else on sys.path: a file
there named like one of our packages (`memory.py`, `envs.py`) must not replace them.

    >>> load_object("collections:OrderedDict", "thing").__name__
    'OrderedDict'
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from reflexion.core.errors import UsageError


def _search_working_folder() -> None:
    cwd = os.getcwd()
    if cwd not in sys.path:  # the console script does not search the working folder
        sys.path.append(cwd)  # subtle: last, so it never shadows an installed package


def import_module(name: str) -> Any:
    """Import a user's module (`--import NAME`: it may register strategies, envs or memory
    backends); a missing or failing one is a one-line UsageError."""
    _search_working_folder()
    try:
        return importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - the user's module failed: one line, not a traceback
        msg = f"cannot import {name}: {type(exc).__name__}: {exc}"
        raise UsageError(msg) from None


def load_object(spec: str, what: str) -> Any:
    """The attribute ATTR of module MODULE (`spec` is "MODULE:ATTR"); a bad spec, a missing
    module or attribute, or a module that fails on import is a one-line UsageError."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr or ":" in attr:
        msg = f"{what} python:{spec}: expected python:MODULE:ATTR"
        raise UsageError(msg)
    _search_working_folder()
    try:
        return getattr(importlib.import_module(module_name), attr)
    except Exception as exc:  # noqa: BLE001 - the user's module failed: one line, not a traceback
        msg = f"cannot load {what} python:{spec}: {type(exc).__name__}: {exc}"
        raise UsageError(msg) from None
