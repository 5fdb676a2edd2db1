"""What a user of the package notices from Python and the shell: `dir(reflexion)` shows the
API, `run()` returns a result with the table, pairs, records and files, a resume says what it
did, config.json carries the package version, one-time loads are timed apart, and `memory`
commands take filters and unique id prefixes."""

from __future__ import annotations

import ast
import subprocess
import sys

import reflexion


def test_dir_shows_the_public_api_and_no_helpers() -> None:
    shown = dir(reflexion)
    assert {"run", "arun", "RunConfig", "make_env", "load_model", "__version__"} <= set(shown)
    assert not {"Any", "importlib", "annotations", "TYPE_CHECKING", "VERSION"} & set(shown)
    assert not [name for name in shown if name.startswith("_") and name != "__version__"]


def test_star_import_gives_the_api_and_nothing_private() -> None:
    code = "from reflexion import *; print(sorted(k for k in dir() if not k.startswith('__')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names = set(ast.literal_eval(out.stdout))
    assert names == set(reflexion.__all__)
