"""Our packages on disk: a guard for our top-level names, and the folder for files made once.

A guard for our top-level names. `memory` and `envs` are also names of unrelated packages on
PyPI, and a file `memory.py` in the folder a script runs from would hide ours: imports would
then fail far from the cause ("'memory' is not a package"). `check_packages()` finds that at
start-up and names the file.

    >>> check_packages()  # ours are the ones that import

`cache_dir()` is where reflexion keeps files it makes once and reuses (joined model files,
generated games):

    >>> cache_dir().name in ("reflexion", "cache") or True
    True
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from reflexion.core.errors import UsageError

OURS = ("memory", "envs")
MARK = "reflexion-memory"  # in the first line of each of our packages' __init__.py (a comment)


def foreign_package(name: str) -> str | None:
    """Where `import name` would load from, when that is not our package; else None."""
    root = Path(__file__).resolve().parents[2]  # the folder that holds reflexion/
    module = sys.modules.get(name)
    try:
        spec = module.__spec__ if module is not None else importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return "nothing (the package is not installed)"
    if spec.origin is None or not spec.has_location:
        return f"a namespace package ({', '.join(spec.submodule_search_locations or [])})"
    path = Path(spec.origin).resolve()
    if path == root / name / "__init__.py" and _marked(path):
        return None
    return str(path)


def check_packages() -> None:
    """Raise a one-line UsageError when `memory` or `envs` would not import as ours."""
    for name in OURS:
        found = foreign_package(name)
        if found is not None:
            others = _other_distributions(name)
            fix = (
                f"it comes from the unrelated PyPI package {others[0]!r}: `pip uninstall "
                f"{others[0]}`, or use another environment"
                if others
                else "rename or move it, or run from another folder"
            )
            msg = f"`import {name}` would load {found}, not reflexion-memory's {name}: {fix}"
            raise UsageError(msg)


def _other_distributions(name: str) -> list[str]:
    """Installed distributions other than ours that provide the top-level name `name`."""
    import importlib.metadata

    found = importlib.metadata.packages_distributions().get(name, [])
    return [d for d in found if d.lower().replace("_", "-") != MARK]


def _marked(init: Path) -> bool:
    """Ours, not another distribution's files installed over the same folder."""
    try:
        with init.open(encoding="utf-8") as f:
            return MARK in f.readline()
    except OSError:
        return False


def cache_dir() -> Path:
    """`$REFLEXION_CACHE`, or ~/.cache/reflexion."""
    return Path(os.environ.get("REFLEXION_CACHE", Path.home() / ".cache" / "reflexion"))
