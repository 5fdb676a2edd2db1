"""`reflexion serve [RUN...] --port P`: a web page for run folders and their memories.

    reflexion serve runs/main                   # one run, on http://127.0.0.1:8765
    reflexion serve runs --port 9000            # every run folder under runs/
    reflexion serve runs/main --allow-edit      # lessons can be forgotten (after a confirmation)

It listens on 127.0.0.1 only, unless --host says otherwise. Without --allow-edit it changes
nothing on disk.
"""

from __future__ import annotations

import argparse
import secrets
import socket
import sys
from pathlib import Path
from typing import Any

from reflexion.cli.common import typed
from reflexion.core.errors import UsageError

LOCAL = ("127.0.0.1", "localhost", "::1")


def port_number(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        msg = f"a port is a number from 1 to 65535, got {text!r}"
        raise ValueError(msg)
    return int(text)


def add_serve_parser(sub: Any) -> None:
    p = sub.add_parser("serve", help="a web page for runs and their memories")
    p.add_argument(
        "runs", nargs="*", type=Path, help="run folders, or folders of them (default: runs)"
    )
    p.add_argument("--port", type=typed(port_number), default=8765, help="default 8765")
    p.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (this machine only)")
    p.add_argument(
        "--allow-edit", action="store_true", help="let the page forget lessons (asks first)"
    )


def cmd_serve(args: argparse.Namespace) -> int:
    from reflexion.web.app import serve
    from reflexion.web.site import Site

    site = Site.from_paths(args.runs or [Path("runs")], args.allow_edit, secrets.token_hex(16))
    if args.allow_edit and args.host not in LOCAL:
        msg = f"--allow-edit serves this machine only: drop it, or --host {args.host}"
        raise UsageError(msg)
    _check_free(args.host, args.port)
    if args.host not in LOCAL:
        print(
            f"reflexion: warning: listening on {args.host}: other machines can read these runs",
            file=sys.stderr,
        )
    mode = "forgetting allowed" if args.allow_edit else "read-only"
    where = f"[{args.host}]" if ":" in args.host else args.host
    print(f"serving {len(site.runs)} runs on http://{where}:{args.port}/ ({mode}); Ctrl-C stops")
    sys.stdout.flush()
    serve(site, args.host, args.port)
    return 0


def _check_free(host: str, port: int) -> None:
    """A port in use, or a host this machine does not have, is a one-line error up front."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            msg = f"cannot listen on {host}:{port}: {exc.strerror or exc}"
            raise UsageError(msg) from None
