"""The LLM actor: each role is one call of a langchain-core chat model, timed and token-counted.

>>> from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
>>> from langchain_core.messages import AIMessage
>>> import asyncio
>>> actor = ChatActor(GenericFakeChatModel(messages=iter([AIMessage("5")])))
>>> asyncio.run(actor.generate(Task("t", "Add 2 and 3."), (), sample=0)).output
'5'
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from reflexion import prompts
from reflexion.records import Attempt, Call, Message, Recalled, Task, Turn

ROLE_NAMES = {"system": "system", "human": "human", "ai": "ai"}


class ChatActor:
    """Runs every role against one chat model (or a second one for best-of-N samples).

    `sampling_model` is used for best-of-N samples after the first, so a greedy default model can
    be paired with a sampling one; without it, samples come from `model`.
    """

    def __init__(self, model: BaseChatModel, sampling_model: BaseChatModel | None = None) -> None:
        self.model = model
        self.sampling_model = sampling_model or model

    async def generate(self, task: Task, lessons: Sequence[Recalled], sample: int) -> Call:
        texts = [r.reflection.text for r in lessons]
        model = self.model if sample == 0 else self.sampling_model
        return await self._call("generate", prompts.generate_messages(task, texts), model)

    async def feedback(self, task: Task, history: Sequence[Turn]) -> Call:
        return await self._call("feedback", prompts.feedback_messages(task, history))

    async def refine(self, task: Task, history: Sequence[Turn]) -> Call:
        msgs = prompts.refine_messages(task, history, prompts.REFINE_REQUEST)
        return await self._call("refine", msgs)

    async def correct(self, task: Task, history: Sequence[Turn]) -> Call:
        msgs = prompts.refine_messages(task, history, prompts.CORRECT_REQUEST)
        return await self._call("correct", msgs)

    async def reflect(self, task: Task, attempt: Attempt) -> Call:
        return await self._call("reflect", prompts.reflect_messages(task, attempt))

    async def _call(
        self, role: str, messages: list[BaseMessage], model: BaseChatModel | None = None
    ) -> Call:
        prompt = tuple(Message(ROLE_NAMES.get(m.type, m.type), str(m.content)) for m in messages)
        start = time.perf_counter()
        try:
            reply = await (model or self.model).ainvoke(messages)
        except Exception as exc:  # noqa: BLE001 - a failing model is data on the attempt, not a crash
            latency = time.perf_counter() - start
            error = f"{type(exc).__name__}: {exc}".strip()
            return Call(role, prompt, "", latency_s=latency, error=error)
        latency = time.perf_counter() - start
        usage = getattr(reply, "usage_metadata", None) or {}
        return Call(
            role,
            prompt,
            reply.text,
            input_tokens=int(usage.get("input_tokens", 0)),
            output_tokens=int(usage.get("output_tokens", 0)),
            latency_s=latency,
        )
