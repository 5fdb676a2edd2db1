"""Faulty models: transient failures are retried with backoff, the rest are recorded, the run
goes on. A fault-injecting fake chat model, and a local OpenAI-compatible server that misbehaves."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import openai
import pytest
from conftest import KeywordEnv
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from openai_stub import EMPTY, HANG, HTTP_429, HTTP_500, INVALID_JSON, StubServer
from running import RunConfig, run

from envs.registry import register_env
from reflexion.actor.backoff import RetryPolicy, is_transient
from reflexion.actor.chat import MAX_OUTPUT_CHARS, ChatActor
from reflexion.cli import main
from reflexion.core.records import Call, Task
from reflexion.core.runfolder import RunFolder

TASK = Task(
    "k0", "Write one sentence using the words: apple, river.", {"words": ["apple", "river"]}
)


class RateLimitError(Exception):
    """Named like openai's: transient by its name."""


class ServerDown(Exception):
    status_code = 503


class Slow:
    """A script entry: answer `text` after `seconds`."""

    def __init__(self, seconds: float, text: str = "late answer") -> None:
        self.seconds, self.text = seconds, text


class FaultyModel(BaseChatModel):
    """Plays `script`, one entry per call (the last one repeats): an exception to raise, a
    `Slow` answer, or the text of an answer (reporting `tokens` input and output tokens)."""

    script: list[Any]
    tokens: tuple[int, int] = (10, 3)
    calls: list[float] = []  # noqa: RUF012 - pydantic field, copied per instance

    @property
    def _llm_type(self) -> str:
        return "faulty"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        raise NotImplementedError  # async only, so a hang can be cut off

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        entry = self.script[min(len(self.calls), len(self.script) - 1)]
        self.calls.append(time.monotonic())
        if isinstance(entry, Exception):
            raise type(entry)(*entry.args)
        if isinstance(entry, Slow):
            await asyncio.sleep(entry.seconds)
            entry = entry.text
        usage = {"input_tokens": self.tokens[0], "output_tokens": self.tokens[1]}
        usage["total_tokens"] = sum(self.tokens)
        message = AIMessage(entry, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])


def generate(model: FaultyModel, **policy: Any) -> tuple[Call, list[float]]:
    """One generate call through a ChatActor; returns it and the backoff delays asked for."""
    delays: list[float] = []

    async def sleep(seconds: float) -> None:
        delays.append(seconds)

    actor = ChatActor(model, retry=RetryPolicy(sleep=sleep, **policy))
    return asyncio.run(actor.generate(TASK, (), sample=0)), delays


def test_transient_failures_are_retried_with_growing_backoff() -> None:
    model = FaultyModel(script=[RateLimitError("slow down"), ServerDown("503"), "apple river"])
    call, delays = generate(model, retries=3)
    assert (call.output, call.error, call.retries, len(model.calls)) == ("apple river", None, 2, 3)
    assert 0.5 <= delays[0] <= 0.75 and 1.0 <= delays[1] <= 1.5  # base 0.5 s, doubled, jittered


def test_a_model_that_always_fails_transiently_gives_up_after_the_retries() -> None:
    model = FaultyModel(script=[RateLimitError("slow down")])
    call, delays = generate(model, retries=3, cap_s=1.2)
    assert len(model.calls) == 4 and call.retries == 3 and call.output == ""
    assert call.error == "RateLimitError: slow down (gave up after 4 attempts)"
    assert len(delays) == 3 and delays[2] == 1.2  # 2 s, capped


def test_a_non_transient_error_is_not_retried() -> None:
    model = FaultyModel(script=[ValueError("bad request: no such model"), "apple river"])
    call, delays = generate(model, retries=3)
    assert len(model.calls) == 1 and delays == [] and call.retries == 0
    assert call.error == "ValueError: bad request: no such model (not retried: not transient)"


def test_a_call_past_the_call_timeout_is_cut_off_and_retried() -> None:
    model = FaultyModel(script=[Slow(60.0), "apple river"])
    start = time.monotonic()
    call, _ = generate(model, retries=2, call_timeout_s=0.2)
    assert call.output == "apple river" and call.retries == 1
    assert time.monotonic() - start < 30  # the hang was not waited out

    model = FaultyModel(script=[Slow(60.0)])
    call, _ = generate(model, retries=1, call_timeout_s=0.2)
    assert call.error == "TimeoutError: no answer within 0.2 s (gave up after 2 attempts)"


def test_the_backoff_really_waits() -> None:
    model = FaultyModel(script=[ConnectionResetError("reset"), TimeoutError(), "apple river"])
    actor = ChatActor(model, retry=RetryPolicy(retries=2, base_s=0.1))
    call = asyncio.run(actor.generate(TASK, (), sample=0))
    assert call.retries == 2 and call.output == "apple river"
    gaps = [b - a for a, b in zip(model.calls, model.calls[1:])]
    assert gaps[0] >= 0.1 and gaps[1] >= 0.2


def test_empty_and_huge_answers_are_kept_as_data_and_huge_ones_cut() -> None:
    call, _ = generate(FaultyModel(script=[""]))
    assert (call.output, call.error, call.retries) == ("", None, 0)
    call, _ = generate(FaultyModel(script=["#@!garbage" * 100_000]))  # 1 MB
    assert call.error is None and len(call.output) < MAX_OUTPUT_CHARS + 100
    assert call.output.endswith("[... 900000 more characters cut by reflexion]")


@pytest.mark.parametrize(
    ("exc", "transient"),
    [
        (openai.RateLimitError.__new__(openai.RateLimitError), True),
        (openai.InternalServerError.__new__(openai.InternalServerError), True),
        (openai.APITimeoutError.__new__(openai.APITimeoutError), True),
        (openai.APIConnectionError.__new__(openai.APIConnectionError), True),
        (openai.BadRequestError.__new__(openai.BadRequestError), False),
        (openai.AuthenticationError.__new__(openai.AuthenticationError), False),
        (asyncio.TimeoutError(), True),  # noqa: UP041 - the name asyncio code raises
        (ConnectionRefusedError(), True),
        (ServerDown(), True),
        (ValueError("garbage"), False),
    ],
)
def test_which_errors_are_transient(exc: Exception, transient: bool) -> None:
    assert is_transient(exc) is transient


def test_a_run_with_a_failing_model_finishes_every_task(tmp_path: Path) -> None:
    model = FaultyModel(script=[ServerDown("service unavailable")])
    cfg = RunConfig(
        env="keywords",
        strategies=("single", "self-refine"),
        out=str(tmp_path / "r"),
        episodes=2,
        retries=1,
    )
    results = run(cfg, model=model, env=KeywordEnv())
    assert sorted(r.key for r in results) == sorted(
        (s, t, 0) for s in cfg.strategies for t in ("k0", "k1")
    )
    for result in results:
        assert not result.final_passed and result.best_candidate == ""
        assert "ServerDown: service unavailable (gave up after 2 attempts)" in result.errors[0]
    generate_steps = [s for s in RunFolder(tmp_path / "r").steps() if s.kind == "generate"]
    assert generate_steps and all(
        "gave up after 2 attempts" in (s.error or "") for s in generate_steps
    )


def test_retries_are_recorded_in_the_trace(tmp_path: Path) -> None:
    model = FaultyModel(script=[RateLimitError("slow down"), "apple river"])
    cfg = RunConfig(env="keywords", strategies=("single",), out=str(tmp_path / "r"), tasks=1)
    run(cfg, model=model, env=KeywordEnv())
    [step] = [s for s in RunFolder(tmp_path / "r").steps() if s.kind == "generate"]
    assert step.data["retries"] == 1 and step.output == "apple river"


def test_a_misbehaving_openai_server_is_retried_and_recorded(tmp_path: Path) -> None:
    from langchain_openai import ChatOpenAI

    with StubServer([HTTP_429, HTTP_500, "apple river", INVALID_JSON]) as stub:
        # max_retries=0: the openai client's own retry loop stays out; only ours runs.
        model = ChatOpenAI(model="m", base_url=stub.url, api_key="unused", max_retries=0)
        cfg = RunConfig(
            env="keywords", strategies=("single",), out=str(tmp_path / "r"), concurrency=1
        )
        results = {r.task_id: r for r in run(cfg, model=model, env=KeywordEnv())}
    assert len(stub.requests) == 4  # 429 and 500 retried, invalid JSON not
    assert stub.requests[0]["messages"] == stub.requests[2]["messages"]  # the same request again
    assert results["k0"].best_candidate == "apple river" and results["k0"].errors == ()
    [error] = results["k1"].errors
    assert "JSONDecodeError" in error and "not retried" in error


def test_cli_run_against_a_hanging_and_empty_server_completes(tmp_path: Path, capsys) -> None:
    register_env("keywords", lambda arg: KeywordEnv())
    with StubServer([HTTP_429, HANG, EMPTY]) as stub:
        code = main(
            [
                "run",
                "--env",
                "keywords",
                "--strategy",
                "single",
                "--model",
                f"openai-compatible:{stub.url}#m",
                "--retries",
                "1",
                "--call-timeout",
                "0.3",
                "--concurrency",
                "1",
                "--out",
                str(tmp_path / "r"),
                "--no-progress",
            ]
        )
        requests = list(stub.requests)
    assert code == 0, capsys.readouterr().err
    assert len(requests) == 3 and {r["model"] for r in requests} == {"m"}
    results = {r.task_id: r for r in RunFolder(tmp_path / "r").results()}
    [error] = results["k0"].errors  # 429, retried once, then a hang: out of tries
    assert error.endswith("TimeoutError: no answer within 0.3 s (gave up after 2 attempts)")
    assert results["k1"].errors == () and results["k1"].best_candidate == ""  # empty: scored
    assert not results["k0"].final_passed and not results["k1"].final_passed
