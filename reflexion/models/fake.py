"""A chat model that answers a fixed text after a fixed delay: for measuring what the runner
itself costs, with no model in the way (scripts/benchmark_runner.py), and for trying a pipeline
without a model.

    >>> import asyncio
    >>> model = FixedChatModel(reply="x = 1", delay_s=0.0)
    >>> asyncio.run(model.ainvoke("hi")).text
    'x = 1'
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class FixedChatModel(BaseChatModel):
    """Answers `reply` to everything, `delay_s` seconds later (an `asyncio.sleep`: a remote model
    that is busy elsewhere, not our CPU), with a token count of one per word."""

    reply: str = "ok"
    delay_s: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "fixed"

    def _result(self, messages: list[BaseMessage]) -> ChatResult:
        words = sum(len(m.text.split()) for m in messages)
        usage = {"input_tokens": words, "output_tokens": len(self.reply.split())}
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        message = AIMessage(self.reply, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        time.sleep(self.delay_s)
        return self._result(messages)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return self._result(messages)
