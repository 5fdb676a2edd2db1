"""A `chroma run` server on loopback for the tests that share one store between clients."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_chroma(tmp_path_factory.mktemp("server")) as url:
        yield url


@contextlib.contextmanager
def running_chroma(folder: Path) -> Iterator[str]:
    """`chroma run` with its data and log in `folder`, on a free loopback port: its URL."""
    chroma = Path(sys.executable).parent / "chroma"
    port = free_port()
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "chroma.log"
    cmd = [
        str(chroma),
        "run",
        "--path",
        str(folder / "data"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_until_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"chroma run exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"chroma run did not answer within 30 s:\n{log.read_text()}")
