"""Reproducible decoding of the local model: the same prompt gives the same greedy answer whatever
the server answered before it and however many calls are in flight.

llama.cpp's server keeps one KV cache per slot and, with `cache_prompt`, reuses the longest prefix
a new prompt shares with what the slot holds. That prefix was computed in another batch (with the
earlier prompt's tokens), and a batch of another size rounds differently, so a near-tie between
two tokens can go the other way; one changed token changes the rest of the answer. The order of
calls decides which prefix a slot holds, so concurrency, which reorders calls, changes answers.
`ChatLocalGGUF(reproducible=True)`, the default, sends `cache_prompt: false`: every prompt is
computed from scratch, in batches that depend on the prompt alone. The runner's local model has
one slot, so the server takes one call at a time; several slots decode several calls in one
batch, which rounds differently again, so a reproducible model with more than one slot takes
its calls one at a time as well. docs/models.md gives the cost and the noise without the mode.

    >>> model = ChatLocalGGUF.named("smollm2-135m")                       # doctest: +SKIP
    >>> prompts = [[HumanMessage("A fruit?")], [HumanMessage("A tree?")]]  # doctest: +SKIP
    >>> first = asyncio.run(answer_all(model, prompts, [0, 1], concurrency=1))  # doctest: +SKIP
    >>> first == asyncio.run(answer_all(model, prompts, [1, 0], concurrency=2))  # doctest: +SKIP
    True
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage


async def answer_all(
    model: BaseChatModel,
    prompts: Sequence[Sequence[BaseMessage]],
    order: Sequence[int],
    concurrency: int = 1,
    **kwargs: Any,
) -> list[str]:
    """The greedy answers to `prompts`, in the prompts' order, asked in `order` (indexes into
    `prompts`) with at most `concurrency` calls in flight; `kwargs` go to each call (max_tokens).

    >>> asyncio.run(answer_all(model, prompts, [1, 0], 2, max_tokens=16))  # doctest: +SKIP
    ['An apple.', 'An oak tree.']
    """
    gate = asyncio.Semaphore(concurrency)
    answers: dict[int, str] = {}

    async def ask(i: int) -> None:
        async with gate:
            reply = await model.ainvoke(list(prompts[i]), temperature=0.0, **kwargs)
            answers[i] = reply.text

    await asyncio.gather(*(ask(i) for i in order))
    return [answers[i] for i in range(len(prompts))]
