"""A LangGraph agent as the Actor of `compare`: each role of the loop (generate, feedback, refine,
correct, reflect) is one invocation of the graph, on the prompt a chat model would get from
ChatActor (reflexion.actor.prompts). The graph may call tools and loop as it likes; its answer
is its last message's text. Tokens are summed from the usage metadata of the messages it
returns (the prompt's messages carry none), so a model that reports usage is costed as in any
run. Any Runnable from {"messages": [...]} to {"messages": [...]} will do. A graph run counts as
one model call, however often the graph asked its model; a best-of-N sample after the first (and
a sampled feedback or refinement of `self-refine-sampled`) gets the same prompt as a greedy one,
and the graph's model decides how it samples; the trace records the sample number.

    >>> from reflexion import RunConfig, run                                    # doctest: +SKIP
    >>> results = run(RunConfig(env="constrained", strategies=("single", "reflexion")),
    ...               actor=GraphActor(graph))                                 # doctest: +SKIP

A graph that raises fails its attempt only: the error is recorded on the call, as a chat
model's failure is, and the run goes on.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig

from reflexion.actor import prompts
from reflexion.actor.chat import cap_output, tracing_config
from reflexion.actor.memory_text import place
from reflexion.core.lesson_records import Recalled
from reflexion.core.records import Attempt, Call, Message, Task, Turn


class GraphActor:
    """The loop's roles, each one run of `graph` (a compiled LangGraph graph, or any Runnable
    taking and returning {"messages": [...]}). `config` is merged into each run's config (a
    `recursion_limit`, callbacks); `memory_tokens` bounds the lessons in a prompt, as
    --memory-tokens does.

        >>> actor = GraphActor(create_react_agent(model, tools))  # doctest: +SKIP
    """

    def __init__(
        self,
        graph: Runnable[Any, Any],
        *,
        config: RunnableConfig | None = None,
        memory_tokens: int = prompts.MEMORY_TOKENS,
    ) -> None:
        self.graph = graph
        self.config = config or {}
        self.memory_tokens = memory_tokens

    async def generate(self, task: Task, lessons: Sequence[Recalled], sample: int) -> Call:
        placed = place([r.reflection for r in lessons], self.memory_tokens)
        call = await self._run("generate", prompts.placed_messages(task, placed))
        left_out = tuple(placed.left_out)
        return dataclasses.replace(
            call, memory_tokens=placed.tokens, sample=sample, left_out=left_out
        )

    async def feedback(self, task: Task, history: Sequence[Turn], sample: int = 0) -> Call:
        call = await self._run("feedback", prompts.feedback_messages(task, history))
        return dataclasses.replace(call, sample=sample)

    async def refine(self, task: Task, history: Sequence[Turn], sample: int = 0) -> Call:
        msgs = prompts.refine_messages(task, history, prompts.refine_request)
        return dataclasses.replace(await self._run("refine", msgs), sample=sample)

    async def correct(self, task: Task, history: Sequence[Turn]) -> Call:
        msgs = prompts.refine_messages(task, history, prompts.correct_request)
        return await self._run("correct", msgs)

    async def reflect(self, task: Task, attempt: Attempt) -> Call:
        return await self._run("reflect", prompts.reflect_messages(task, attempt))

    async def _run(self, role: str, messages: list[BaseMessage]) -> Call:
        """One run of the graph; its failure is data on the call (STYLE habit 6)."""
        prompt = tuple(Message(m.type, m.text) for m in messages)
        config: RunnableConfig = {**tracing_config(role), **self.config}
        start = time.perf_counter()
        try:
            state = await self.graph.ainvoke({"messages": messages}, config=config)
            returned = list(state["messages"])
            if not returned:
                msg = "the graph returned no messages"
                raise ValueError(msg)
        except Exception as exc:  # noqa: BLE001 - the agent's failure fails this attempt only
            latency = time.perf_counter() - start
            return Call(role, prompt, "", latency_s=latency, error=f"{type(exc).__name__}: {exc}")
        latency = time.perf_counter() - start
        used = [dict(getattr(m, "usage_metadata", None) or {}) for m in returned]
        return Call(
            role,
            prompt,
            cap_output(_text(returned[-1])),
            input_tokens=sum(int(u.get("input_tokens", 0)) for u in used),
            output_tokens=sum(int(u.get("output_tokens", 0)) for u in used),
            latency_s=latency,
        )


def _text(message: Any) -> str:
    """A message's text (a BaseMessage's, or a dict's "content" as a graph may return it)."""
    if isinstance(message, BaseMessage):
        return message.text
    return str(message.get("content", "")) if isinstance(message, dict) else str(message)
