"""How long a run page takes to load in `reflexion serve`, first and again: the server is started
as a user starts it, and each run's page is fetched twice over HTTP. Without a folder it first
makes one (quadratic, no model: `reflexion compare` with three strategies).

    .venv/bin/python scripts/benchmark_run_page.py                 # a quadratic run of its own
    .venv/bin/python scripts/benchmark_run_page.py runs/           # every run under runs/
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fetch(url: str) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as answer:
        answer.read()
    return time.perf_counter() - start


def wait_for(port: int, seconds: float = 60) -> None:
    """Until the server accepts connections (it prints its address just before it listens)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    msg = f"nothing listens on port {port}"
    raise SystemExit(msg)


def made_run(root: Path) -> Path:
    out = root / "quadratic"
    command = [sys.executable, "-m", "reflexion", "compare", "--env", "quadratic"]
    command += ["--strategies", "single,self-refine,reflexion", "--no-progress", "--out", str(out)]
    subprocess.run(command, check=True, capture_output=True)
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="?", type=Path, help="a run folder, or a folder of them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = args.runs or made_run(Path(tmp))
        names = [runs.name] if (runs / "config.json").is_file() else None
        names = names or sorted(p.name for p in runs.iterdir() if (p / "config.json").is_file())
        port = free_port()
        serve = [sys.executable, "-m", "reflexion", "serve", str(runs), "--port", str(port)]
        server = subprocess.Popen(serve, stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            server.stdout.readline()  # "runs on http://..."
            wait_for(port)
            base = f"http://127.0.0.1:{port}"
            print(f"index: {fetch(base + '/'):.3f} s")
            for name in names:
                first, again = fetch(f"{base}/runs/{name}"), fetch(f"{base}/runs/{name}")
                print(f"run page {name}: first {first:.3f} s, again {again:.3f} s")
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
