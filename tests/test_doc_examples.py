"""The examples in the docstrings of `reflexion`, `memory` and `envs` hold, as a reader would
type them: every module through `doctest` (an example that no longer holds is a wrong doc).
Examples that need a run folder, a model or a server are marked `+SKIP` where they stand."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from collections.abc import Iterator

import pytest

PACKAGES = ("reflexion", "memory", "envs")


def module_names() -> Iterator[str]:
    """Every module of the packages, `__main__` aside (importing it runs the command line)."""
    for package in PACKAGES:
        yield package
        path = importlib.import_module(package).__path__
        for info in pkgutil.walk_packages(path, f"{package}."):
            if not info.name.endswith("__main__"):
                yield info.name


@pytest.mark.parametrize("name", sorted(module_names()))
def test_the_examples_in_a_modules_docstrings_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} fail"
