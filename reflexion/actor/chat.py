"""The LLM actor: each role is one call of a langchain-core chat model, timed and token-counted.

    >>> from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    >>> from langchain_core.messages import AIMessage
    >>> import asyncio
    >>> actor = ChatActor(GenericFakeChatModel(messages=iter([AIMessage("5")])))
    >>> asyncio.run(actor.generate(Task("t", "Add 2 and 3."), (), sample=0)).output
    '5'

Greedy calls are deterministic, so an identical greedy prompt is answered once per run and the
answer reused (e.g. the first answer of `single`, `self-refine` and `reflexion` is one prompt).
A reused call still counts in the strategy's cost (its tokens, calls and time are what the strategy
would spend on its own: `alone_s`, the time of the call that made the answer); it is marked
`reused` in the trace, with the time it really took (`latency_s`: none, or the wait for an
identical call under way).

A call that fails transiently (timeout, lost connection, 429, 5xx) is retried
(reflexion.actor.backoff); one that fails for good is recorded on the attempt as `Call.error`, and
the run goes on. An answer is kept as it came (empty or garbage: the env fails it), cut at
MAX_OUTPUT_CHARS. Each call carries LangChain tags and metadata (strategy, task, seed, episode,
role), so LangSmith or any callback handler can group them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from reflexion.actor import ROLE_TOKENS, prompts, structured
from reflexion.actor.backoff import RetryPolicy
from reflexion.actor.memory_text import CHARS_PER_TOKEN, Lesson, place
from reflexion.core.lesson_records import Curation, Kind, Recalled, Reflection
from reflexion.core.protocols import JsonSchemaModel, Prefilling
from reflexion.core.records import Attempt, Call, Message, Task, Turn, alone_total
from reflexion.strategies import LESSONS
from reflexion.trial.recorded import CALL_INFO

MAX_OUTPUT_CHARS = 100_000  # a runaway answer must not fill the trace, the memory or a prompt


class CallCache:
    """Answers to greedy prompts, shared by every trial of a run. Concurrent identical requests
    wait for the first one instead of calling the model again."""

    def __init__(self) -> None:
        self._futures: dict[str, asyncio.Future[Call]] = {}

    async def get_or_call(self, key: str, make: Any) -> tuple[Call, bool]:
        future = self._futures.get(key)
        if future is not None:
            try:
                call: Call = await asyncio.shield(future)
            except Exception:  # noqa: BLE001 - the first asker's failure: ask ourselves
                return await make(), False
            if not call.error:
                return call, True
            return await make(), False  # an error is not an answer: ask again, uncached
        future = asyncio.get_running_loop().create_future()
        self._futures[key] = future
        try:
            call = await make()
        except BaseException as exc:
            del self._futures[key]
            future.set_exception(exc)
            future.exception()  # subtle: mark it retrieved, so no "never retrieved" warning
            raise
        if call.error:  # a failure is not an answer: the next asker tries again
            del self._futures[key]
        future.set_result(call)
        return call, False


class ChatActor:
    """Runs every role against one chat model.

    Every role decodes greedily, except best-of-N samples after the first (and the feedback and
    refinements of `self-refine-sampled`), which use `temperature` and a seed derived from
    `seed` and the sample number.
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        temperature: float = 0.8,
        seed: int = 0,
        max_tokens: Mapping[str, int] | None = None,
        cache: CallCache | None = None,
        retry: RetryPolicy | None = None,
        reflection: str = "free",
        memory_tokens: int = prompts.MEMORY_TOKENS,
        programs: Callable[[Task, str], str | None] | None = None,
        code_rounds: int = 0,
        curator: BaseChatModel | None = None,
        curation: Curation = Curation.JSON,
    ) -> None:
        self.memory_tokens = memory_tokens  # the bound on memory text in one prompt
        self.model = model
        self.reflection = reflection  # free (prose) or structured (reflexion.actor.structured)
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = {**ROLE_TOKENS, **(max_tokens or {})}
        self.chosen = frozenset(max_tokens or {})  # the roles whose limit the caller set
        self.cache = cache
        self.retry = retry or RetryPolicy()
        self.programs = programs  # the env's run_program (see _answer), or None: no rounds
        self.code_rounds = code_rounds
        self.curator = curator  # writes the memory for other tasks (distill); None: `model`
        self.curation = curation  # json (held to the design's schema) or text (free lines)

    @property
    def memory_chars(self) -> int:
        """The most memory text one prompt shows, in characters (see memory_text.place)."""
        return self.memory_tokens * CHARS_PER_TOKEN

    async def generate(self, task: Task, lessons: Sequence[Recalled], sample: int) -> Call:
        placed = place([r.reflection for r in lessons], self.memory_tokens)
        msgs = self._prefilled(task, prompts.placed_messages(task, placed))
        call = await self._answer("generate", task, msgs, self.sampling(sample))
        left_out = tuple(placed.left_out)
        return dataclasses.replace(
            call, memory_tokens=placed.tokens, sample=sample, left_out=left_out
        )

    def prompt(self, task: Task, lessons: Sequence[Lesson] = ()) -> list[BaseMessage]:
        """The messages `generate` sends for a first answer to `task` with `lessons` in memory,
        before the answer's known beginning is added for a model that continues it.

        >>> from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        >>> actor = ChatActor(GenericFakeChatModel(messages=iter([])))
        >>> [m.type for m in actor.prompt(Task("t", "Add 2 and 3."), ["Check the sign."])]
        ['system', 'human']
        """
        return prompts.generate_messages(task, lessons, self.memory_tokens)

    def sampling(self, sample: int) -> dict[str, Any] | None:
        """Sample n > 0 decodes at --temperature with a seed of its own; 0 is greedy."""
        if not sample:
            return None
        return {"temperature": self.temperature, "seed": self.seed * 1000 + sample}

    async def feedback(self, task: Task, history: Sequence[Turn], sample: int = 0) -> Call:
        msgs = prompts.feedback_messages(task, history)
        call = await self._call("feedback", msgs, self.sampling(sample))
        return dataclasses.replace(call, sample=sample)  # the trace says which were sampled

    async def refine(self, task: Task, history: Sequence[Turn], sample: int = 0) -> Call:
        msgs = prompts.refine_messages(task, history, prompts.refine_request)
        call = await self._answer(
            "refine", task, self._prefilled(task, msgs), self.sampling(sample)
        )
        return dataclasses.replace(call, sample=sample)

    async def correct(self, task: Task, history: Sequence[Turn]) -> Call:
        msgs = prompts.refine_messages(task, history, prompts.correct_request)
        return await self._answer("correct", task, self._prefilled(task, msgs))

    async def _answer(
        self,
        role: str,
        task: Task,
        messages: list[BaseMessage],
        sampling: dict[str, Any] | None = None,
    ) -> Call:
        """An answer, under Dynamic Cheatsheet's code protocol where the env runs programs:
        while the reply holds a program (at most `code_rounds` times), it runs in the env's
        sandbox, the model is shown what it printed and answers again. The last reply is the
        answer; its prompt holds the whole exchange, and its cost every round's."""
        call = await self._call(role, messages, sampling)
        for done in range(1, self.code_rounds + 1):
            if self.programs is None or call.error:
                break
            printed = await asyncio.to_thread(self.programs, task, call.output)
            if printed is None:  # no program: this is the answer
                break
            ran = prompts.PROGRAM_RAN.format(printed=printed)
            messages = [*messages, AIMessage(call.output), HumanMessage(ran)]
            call = added(call, await self._call(role, messages, sampling), done)
        return call

    def _prefilled(self, task: Task, messages: list[BaseMessage]) -> list[BaseMessage]:
        """The messages asking for an answer, with the answer's known beginning as the start of
        the model's reply when the model can continue it (see Prefilling)."""
        prefix = task.spec.get("answer_prefix")
        if not prefix or not isinstance(self.model, Prefilling) or not self.model.prefills_answers:
            return messages
        return [*messages, AIMessage(prefix)]

    async def write_tests(self, task: Task, subject: str, count: int) -> Call:
        """Unit tests of the task's function, from what `subject` shows (its visible prompt)."""
        entry = str(task.spec.get("entry_point", "the function"))
        msgs = prompts.tests_messages(subject, entry, count)
        if isinstance(self.model, Prefilling) and self.model.prefills_answers:
            msgs.append(AIMessage(prompts.TESTS_PREFIX))
        return await self._call("tests", msgs)

    async def act(self, messages: list[BaseMessage], sample: int = 0) -> Call:
        """One step of a rollout (reflexion.actor.rollout): the next command, greedily for the
        first play, sampled for a later sample of best-of-N or a sampled refinement's play."""
        return await self._call("act", messages, self.sampling(sample))

    async def distill(
        self, task: Task, kind: Kind, attempts: Sequence[Attempt], board: Sequence[Reflection]
    ) -> Call:
        """Experience for other tasks from this task's attempts, asked in the words of the design
        whose lessons are of `kind` (reflexion.actor.prompts.distill_messages); under --curation
        json the reply is held to the design's schema where the model's runtime allows, and
        there, unless --max-tokens sets `distill`, it gets room for the longest reply the schema
        admits (structured.reply_tokens: a cut reply is unparsed)."""
        msgs = prompts.distill_messages(
            task, kind, attempts, board, self.curation, self.memory_chars
        )
        asked, chat = LESSONS[kind].distill, self.curator or self.model
        sampled = None
        if asked is not None and asked.temperature:  # subtle: the seed no answer's sample takes
            sampled = {"temperature": asked.temperature, "seed": self.seed * 1000}
        if asked is None or self.curation != Curation.JSON:
            return await self._call("distill", msgs, sampled, model=self.curator)
        schema = asked.schema(board)
        params = structured.schema_params(chat, schema)
        if params and "distill" not in self.chosen:  # room for the longest reply it admits
            params["max_tokens"] = structured.reply_tokens(schema, self.max_tokens["distill"])
        return await self._call("distill", msgs, params | (sampled or {}), model=self.curator)

    async def propose(self, task: Task, sample: int) -> Call:
        """A first answer that may revise itself inside `<refine>` before its final form (PASR's
        format, prompted: reflexion.strategies.proactive reads it). Under the code protocol its
        program runs, as any answer's does (`_answer`): the task's prompt says it will."""
        msgs = prompts.proactive_messages(task)
        call = await self._answer("propose", task, msgs, self.sampling(sample))
        return dataclasses.replace(call, sample=sample)

    async def reflect(self, task: Task, attempt: Attempt) -> Call:
        if self.reflection != "structured":
            return await self._call("reflect", prompts.reflect_messages(task, attempt))
        # a model whose runtime takes a JSON schema is held to it; any other is parsed tolerantly
        schema = (
            {"json_schema": structured.SCHEMA} if isinstance(self.model, JsonSchemaModel) else {}
        )
        call = await self._call("reflect", prompts.reflect_messages(task, attempt, True), schema)
        return dataclasses.replace(call, output=structured.lesson_text(call.output))

    async def _call(
        self,
        role: str,
        messages: list[BaseMessage],
        sampling: dict[str, Any] | None = None,
        model: BaseChatModel | None = None,
    ) -> Call:
        params: dict[str, Any] = {"max_tokens": self.max_tokens[role], "temperature": 0.0}
        params |= sampling or {}
        prompt = tuple(Message(m.type, m.text) for m in messages)
        chat = model or self.model
        if self.cache is None or params["temperature"] > 0:
            return await self._invoke(role, prompt, messages, params, chat)
        # subtle: which model answers is part of the key (a curator's reply is not the model's)
        key = json.dumps([[m.role, m.content] for m in prompt] + [params, id(chat)])
        asked = time.perf_counter()
        call, reused = await self.cache.get_or_call(
            key, lambda: self._invoke(role, prompt, messages, params, chat)
        )
        if not reused:
            return call
        return Call(
            role,
            prompt,
            call.output,
            call.input_tokens,
            call.output_tokens,
            time.perf_counter() - asked,  # the wait for an identical call still under way
            call.error,
            cached_tokens=call.cached_tokens,
            reused=True,
            alone_s=call.latency_s,
        )

    async def _invoke(
        self,
        role: str,
        prompt: tuple[Message, ...],
        msgs: list[BaseMessage],
        params: dict[str, Any],
        chat: BaseChatModel,
    ) -> Call:
        start = time.perf_counter()
        bound, config = chat.bind(**params), tracing_config(role)
        outcome = await self.retry.call(lambda: bound.ainvoke(msgs, config=config))
        latency, reply = time.perf_counter() - start, outcome.value
        if reply is None:
            error = outcome.error or "the model returned nothing"
            return Call(role, prompt, "", latency_s=latency, error=error, retries=outcome.retries)
        usage: dict[str, Any] = dict(getattr(reply, "usage_metadata", None) or {})
        details = usage.get("input_token_details") or {}
        return Call(
            role,
            prompt,
            cap_output(reply.text),
            input_tokens=int(usage.get("input_tokens", 0)),
            output_tokens=int(usage.get("output_tokens", 0)),
            latency_s=latency,
            cached_tokens=int(details.get("cache_read", 0) or 0),
            retries=outcome.retries,
        )


def tracing_config(role: str) -> RunnableConfig:
    """LangChain's config for one call: a run name, tags and metadata saying which strategy,
    task, seed, episode and role made it, so LangSmith (or any callback) can group the calls.

    >>> tracing_config("reflect")["tags"]
    ['reflexion', 'role:reflect']
    """
    info = CALL_INFO.get({})
    tags = ["reflexion", f"role:{role}", *(f"{k}:{v}" for k, v in info.items() if k != "env")]
    return {"run_name": f"reflexion.{role}", "tags": tags, "metadata": {**info, "role": role}}


def cap_output(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """`text`, or its first `limit` characters and a marker saying how much was cut.

    >>> cap_output("abcdef", limit=2)
    'ab\\n[... 4 more characters cut by reflexion]'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters cut by reflexion]"


def added(before: Call, after: Call, rounds: int) -> Call:
    """`after`, the answer a code round asked for, costing what both calls cost."""
    return dataclasses.replace(
        after,
        input_tokens=before.input_tokens + after.input_tokens,
        output_tokens=before.output_tokens + after.output_tokens,
        latency_s=before.latency_s + after.latency_s,
        alone_s=alone_total([before, after]),
        cached_tokens=before.cached_tokens + after.cached_tokens,
        retries=before.retries + after.retries,
        reused=before.reused and after.reused,
        code_rounds=rounds,
    )
