"""`reflexion models serve`: the local model as an OpenAI-compatible HTTP server, answering the
`openai` client and langchain-openai, and stopped by Ctrl-C (a request in flight too); bad
options are one line. (A `compare` through it, interrupted and resumed, is in test_ctrl_c.py.)"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "reflexion", "models", "serve"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--port", "http"], "a port is a whole number from 0 to 65535, not 'http'"),
        (["--port", "70000"], "a port is a whole number from 0 to 65535, not '70000'"),
        (["--parallel", "0"], "slots are a whole number from 1 to 64, not '0'"),
        (["no-such-model"], "unknown local model 'no-such-model'"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(args: list[str], said: str) -> None:
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_help_says_how_to_use_the_server() -> None:
    done = subprocess.run([*CLI, "--help"], capture_output=True, text=True, timeout=60)
    for words in ("OpenAI-compatible", "--model openai-compatible:", "Ctrl-C", "--parallel N"):
        assert words in done.stdout


@pytest.mark.slow
def test_the_served_model_answers_openai_clients_and_ctrl_c_stops_it(tmp_path: Path) -> None:
    from langchain_core.messages import HumanMessage
    from openai import APIConnectionError, OpenAI

    from reflexion.models.registry import load_model

    printed = tmp_path / "serve.out"
    server = subprocess.Popen(
        [*CLI, "smollm2-135m", "--port", "0", "--parallel", "2"],
        stdout=printed.open("w"),
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while "--model " not in printed.read_text():
            assert server.poll() is None and time.monotonic() < deadline, server.stderr.read()
            time.sleep(0.1)
        head, line = printed.read_text().splitlines()[:2]
        assert "2 slots" in head
        spec = line.removeprefix("--model ")
        url, _, name = spec.removeprefix("openai-compatible:").partition("#")
        assert url.startswith("http://127.0.0.1:") and name == "smollm2-135m"

        client = OpenAI(base_url=url, api_key="unused", timeout=60)
        assert [m.id for m in client.models.list()] == ["smollm2-135m"]
        reply = client.chat.completions.create(
            model=name,
            messages=[{"role": "user", "content": "Name a colour."}],
            max_tokens=6,
            temperature=0,
        )
        assert reply.choices[0].message.content
        assert reply.usage is not None and 0 < reply.usage.completion_tokens <= 6
        chat = load_model(spec).bind(max_tokens=6)  # what --model builds: langchain-openai
        answer = chat.invoke([HumanMessage("Name a colour.")])
        assert answer.text and answer.usage_metadata and answer.usage_metadata["output_tokens"] <= 6

        def tell_a_story() -> None:  # Ctrl-C comes mid-decode; the server drops the request
            with contextlib.suppress(APIConnectionError):
                story = [{"role": "user", "content": "Write a very long story."}]
                client.with_options(max_retries=0).chat.completions.create(
                    model=name, messages=story, max_tokens=500
                )

        threading.Thread(target=tell_a_story, daemon=True).start()
        time.sleep(1.0)
    finally:
        sent = time.monotonic()
        os.killpg(server.pid, signal.SIGINT)
        code = server.wait(timeout=30)
    assert code == 0 and time.monotonic() - sent < 5
    with pytest.raises(OSError):  # the port is closed
        urllib.request.urlopen(f"{url}/models", timeout=5)
