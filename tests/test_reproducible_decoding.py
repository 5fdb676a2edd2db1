"""Reproducible decoding of the real local model: the same greedy prompt gets the same answer
whatever the server answered before it and however many calls are in flight."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import BaseMessage

from envs import make_env
from reflexion import ChatActor
from reflexion.models.local import ChatLocalGGUF
from reflexion.models.reproducible import answer_all

pytestmark = pytest.mark.slow


def code_prompts(model: ChatLocalGGUF, n: int) -> list[list[BaseMessage]]:
    """HumanEval prompts as the runner sends them: one long shared prefix, then the task."""
    actor = ChatActor(model)
    return [actor.prompt(task) for task in make_env(f"humaneval:{n}").tasks()]


@pytest.mark.parametrize("slots", [1, 4])
def test_the_same_prompts_in_two_orders_and_concurrencies_get_the_same_answers(
    slots: int,
) -> None:
    # without the mode, a slot reuses the prefix of the call before, and several slots decode
    # concurrent calls in one batch: both change greedy answers of this model on these prompts
    model = ChatLocalGGUF.named("smollm2-135m", max_tokens=32, parallel=slots)
    prompts = code_prompts(model, 6)
    forward = asyncio.run(answer_all(model, prompts, range(6), concurrency=1))
    backward = asyncio.run(answer_all(model, prompts, range(5, -1, -1), concurrency=4))
    assert all(forward) and forward == backward
    # and no prompt token was served from the slot's cache, which is what made them differ
    usage = model.invoke(prompts[0]).usage_metadata
    assert usage is not None and usage["input_token_details"]["cache_read"] == 0
