"""What the browser tests share: Debian's `chromium`, driven by Playwright (no browser download),
and `reflexion serve` started as a user starts it. A test module skips, saying why, where no
Chromium or Playwright is installed: `skip_without_chromium()` at its top."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chroma_server import free_port

CHROMIUM = os.environ.get("REFLEXION_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
# as root, and on a machine with no network: no sandbox, and none of Chromium's own calls home
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]


def skip_without_chromium() -> Any:
    """Playwright's sync API, or a module-level skip that says what to install."""
    if not Path(CHROMIUM).is_file():
        pytest.skip(
            f"no Chromium at {CHROMIUM}: apt install chromium (scripts/setup.sh does, where "
            "it can)",
            allow_module_level=True,
        )
    return pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@contextlib.contextmanager
def launched(sync_api: Any) -> Iterator[Any]:
    """Headless Chromium, closed after."""
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def follow(page: Any, name: str, exact: bool = False, role: str = "link") -> None:
    """Click a link or a form's button and wait for the page it opens (reading the page
    before the new one loads races)."""
    with page.expect_navigation():
        page.get_by_role(role, name=name, exact=exact).click()


def follow_first(page: Any, selector: str) -> None:
    """Click the first element `selector` matches and wait for the page it opens."""
    with page.expect_navigation():
        page.locator(selector).first.click()


@contextlib.contextmanager
def serving(runs: Path, *options: str) -> Iterator[str]:
    """`reflexion serve RUNS` in a process of its own; yields its address."""
    port = free_port()
    command = [sys.executable, "-m", "reflexion", "serve", str(runs), "--port", str(port)]
    proc = subprocess.Popen([*command, *options], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert "runs on http://127.0.0.1:" in proc.stdout.readline()
        _wait_for(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _wait_for(port: int) -> None:
    for _ in range(100):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    pytest.fail(f"the server did not listen on {port}")
