"""Shared test fixtures: a keyword env with a planted held-out secret, and a scripted chat model."""

from __future__ import annotations

import faulthandler
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage

from reflexion.core.records import Score, Task

# Offline by default: nothing in the test run may reach a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

pytest_plugins = ["chroma_server", "memory_run"]  # `chroma_server`; a run with two stores, `q`

SHM = "/dev/shm"
SHM_FREE = 1 << 30  # a full run writes about 200 MB; a container's 64 MB /dev/shm is passed over
_MADE = pytest.StashKey[str]()  # the folder this run made there, removed when it ends


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Each test's folders in memory where the machine has a writable /dev/shm: the stores and
    traces the tests write are real files all the same, without a disk's write cost (Chroma's
    writes took about twice as long on this machine's disk). `--basetemp` still wins; xdist's
    workers take theirs from the main process. The folder goes when the run ends (pass
    `--basetemp` to keep a failed test's files)."""
    if config.option.basetemp or hasattr(config, "workerinput"):
        return
    if os.path.isdir(SHM) and os.access(SHM, os.W_OK) and shutil.disk_usage(SHM).free > SHM_FREE:
        for old in Path(SHM).glob("reflexion-tests-*"):  # left by a killed run, a day ago or more
            if time.time() - old.stat().st_mtime > 86400:
                shutil.rmtree(old, ignore_errors=True)
        config.option.basetemp = tempfile.mkdtemp(prefix="reflexion-tests-", dir=SHM)
        config.stash[_MADE] = config.option.basetemp


def pytest_unconfigure(config: pytest.Config) -> None:
    made = config.stash.get(_MADE, None)
    if made:
        shutil.rmtree(made, ignore_errors=True)


# Each xdist worker's local models get their share of the cores (1 each on 2 cores): two
# llama.cpp processes that each spin on every core slow each other down many times over (a
# served-model test took 540 s beside another, against 74 s alone).
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
if _WORKERS > 1:
    os.environ.setdefault("REFLEXION_THREADS", str(max(1, (os.cpu_count() or 1) // _WORKERS)))

# pytest-timeout fails a test at 10 minutes with SIGALRM, which a thread stuck in C code (or an
# unwinding that waits on it) never sees. Five minutes later still, faulthandler's own thread
# prints every thread's stack to the real stderr and ends the worker, so the run stops with the
# test's name and where it hung (xdist does not restart the worker), never at CI's time limit.
HARD_STOP_S = 900
_STDERR: list[int] = []  # the terminal's stderr, copied while no capture holds fd 2


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    if not _STDERR:
        _STDERR.append(os.dup(2))
    faulthandler.dump_traceback_later(HARD_STOP_S, exit=True, file=_STDERR[0])
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


SECRET = "HELD-OUT-SECRET-7f3a"

# A user's env module, as a user would write it (tests save it and load it by name).
ECHO_ENV = """
from reflexion.core.records import Score, Task

class Echo:
    name = "echo"
    def tasks(self):
        return [Task("e1", "Say: ready")]
    def score(self, task, candidate):
        ok = "ready" in candidate
        return Score(float(ok), ok, "" if ok else "say the word ready")
    def evaluate(self, task, candidate):
        return self.score(task, candidate)
"""


class KeywordEnv:
    """Write text with every visible keyword. The held-out check also wants a hidden word, whose
    feedback carries SECRET: if SECRET ever shows up in a prompt, the held-out signal leaked."""

    name = "keywords"

    def __init__(self, hidden: str = "zebra") -> None:
        self.hidden = hidden
        self._tasks = [
            Task(
                "k0",
                "Write one sentence using the words: apple, river.",
                {"words": ["apple", "river"]},
            ),
            Task(
                "k1",
                "Write one sentence using the words: cloud, stone.",
                {"words": ["cloud", "stone"]},
            ),
        ]

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def score(self, task: Task, candidate: str) -> Score:
        missing = [w for w in task.spec["words"] if w not in candidate.lower()]
        found = len(task.spec["words"]) - len(missing)
        text = "all words used" if not missing else f"missing words: {', '.join(missing)}"
        return Score(found / len(task.spec["words"]), not missing, text)

    def evaluate(self, task: Task, candidate: str) -> Score:
        visible = self.score(task, candidate)
        passed = visible.solved and self.hidden in candidate.lower()
        return Score(float(passed), passed, f"{SECRET}: hidden word {self.hidden!r}")


class CountingModel(GenericFakeChatModel):
    """GenericFakeChatModel that keeps every prompt it was sent."""

    prompts: list[list[BaseMessage]] = []  # noqa: RUF012 - pydantic field, copied per instance

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.prompts.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def scripted(replies: Sequence[str]) -> CountingModel:
    """A fake chat model that answers `replies` in order and fails on one call too many."""
    messages: Iterator[AIMessage] = iter(
        AIMessage(r, usage_metadata={"input_tokens": 10, "output_tokens": 3, "total_tokens": 13})
        for r in replies
    )
    return CountingModel(messages=messages, prompts=[])


class SchemaModel(CountingModel):
    """`scripted`, as a model whose runtime takes a JSON schema: records what each call binds."""

    takes_json_schema: bool = True
    bound: list[dict[str, Any]] = []

    def bind(self, **kwargs: Any) -> Any:
        self.bound.append(kwargs)
        return super().bind(**{k: v for k, v in kwargs.items() if k != "json_schema"})


def schema_scripted(replies: Sequence[str]) -> SchemaModel:
    """A SchemaModel that answers `replies` in order."""
    return SchemaModel(messages=scripted(replies).messages, prompts=[], bound=[])


@pytest.fixture
def keyword_env() -> KeywordEnv:
    return KeywordEnv()
