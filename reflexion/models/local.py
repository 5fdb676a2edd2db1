"""The embedded default model: a GGUF chat model run in this process on the CPU, as a
langchain-core `BaseChatModel`.

The runtime is xllamacpp (llama.cpp's server compiled into a prebuilt wheel): it installs in about
a second, where llama-cpp-python builds from source for ~9 minutes on 2 cores, at the same decode
speed. Its server keeps one KV cache per slot and, with `cache_prompt`, reuses the longest
prefix a new prompt shares with the last one in that slot: Self-Refine's prompt grows by
appending, so most of each refine prompt is not processed again (`cached_tokens` in the usage).
That reuse makes greedy answers depend on the order of calls, so it is off unless
`reproducible=False` (reflexion.models.reproducible).

A reply is streamed token by token, so a cancelled call (Ctrl-C, a task.cancel()) stops its
decode at the next token and frees its slot, where a blocking call would decode to the end.

    >>> model = ChatLocalGGUF.named("smollm2-135m")                       # doctest: +SKIP
    >>> model.invoke("Say hi.").text                                      # doctest: +SKIP
    'Hi! How can I help you today?'
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any, ClassVar

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from reflexion.core.errors import UsageError
from reflexion.models.server import ServerSettings, start_server

ROLES = {"system": "system", "human": "user", "ai": "assistant"}


def default_threads() -> int:
    """The CPU threads a local model uses: `$REFLEXION_THREADS`, or every core. Two runs side by
    side on one machine should each get their share (REFLEXION_THREADS=1 on 2 cores): two
    llama.cpp processes that each spin on every core run slower than one after the other."""
    asked = os.environ.get("REFLEXION_THREADS", "").strip()
    if not asked:
        return max(1, os.cpu_count() or 1)
    if not (asked.isascii() and asked.isdigit()) or int(asked) < 1:
        msg = f"REFLEXION_THREADS must be a whole number of threads, at least 1, not {asked!r}"
        raise UsageError(msg)
    return int(asked)


class ChatLocalGGUF(BaseChatModel):
    """A chat model over a local GGUF file; loaded once per process per (file, slots, context).

    `parallel` slots decode concurrent requests in one batch, which on a CPU gives more tokens per
    second in total than one request at a time; each slot has `context` tokens. `reproducible`
    (the default) computes every prompt from scratch in one slot, whatever `parallel` says, so a
    greedy answer does not depend on the calls before or beside it (reflexion.models.reproducible).
    """

    path: str
    context: int = 4096  # tokens per slot
    parallel: int = 1
    threads: int = Field(default_factory=lambda: default_threads())
    speculative: str = "none"  # "none", "ngram" or "draft:MODEL" (see reflexion.models.server)
    max_tokens: int = 512
    temperature: float = 0.0  # greedy by default
    seed: int = 0
    # every prompt processed from scratch: see reflexion.models.reproducible
    reproducible: bool = True
    # llama.cpp continues a last assistant message (reflexion.core.protocols.Prefilling)
    prefills_answers: bool = True
    # it holds a reply to a JSON schema (reflexion.core.protocols.JsonSchemaModel)
    takes_json_schema: bool = True

    _servers: ClassVar[dict[ServerSettings, Any]] = {}
    _load_lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def named(cls, name: str, **kwargs: Any) -> ChatLocalGGUF:
        """A model by its package name (see reflexion.models.files.MODELS) or a .gguf path."""
        from reflexion.models.files import MODELS, gguf_path

        if name in MODELS:
            return cls(path=str(gguf_path(name)), **kwargs)
        if name.endswith(".gguf") and Path(name).is_file():
            return cls(path=name, **kwargs)
        msg = f"unknown local model {name!r}: use one of {', '.join(MODELS)} or a .gguf file path"
        raise UsageError(msg)

    @property
    def _llm_type(self) -> str:
        return "local-gguf"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"path": self.path, "context": self.context, "temperature": self.temperature}

    def load(self) -> None:
        """Load the weights now (the runner calls this before any trial starts, so a bad file is
        one clear error and the load time is not charged to whichever trial came first)."""
        try:
            self._server()
        except RuntimeError as exc:
            msg = f"cannot load the local model {self.path}: {exc}"
            raise UsageError(msg) from None

    @property
    def settings(self) -> ServerSettings:
        # subtle: calls decoded in one batch round differently, so reproducible means one slot
        slots = 1 if self.reproducible else self.parallel
        return ServerSettings(self.path, self.context, slots, self.threads, self.speculative)

    def _server(self) -> Any:
        key = self.settings
        with self._load_lock:
            if key not in self._servers:
                self._servers[key] = start_server(key)
            return self._servers[key]

    def request(self, messages: list[BaseMessage], **kwargs: Any) -> dict[str, Any]:
        """The server request for `messages` (what a benchmark sends to a raw server too)."""
        request = {
            "messages": [{"role": ROLES.get(m.type, m.type), "content": m.text} for m in messages],
            "max_tokens": int(kwargs.get("max_tokens", self.max_tokens)),
            "temperature": float(kwargs.get("temperature", self.temperature)),
            "seed": int(kwargs.get("seed", self.seed)),
            "cache_prompt": not self.reproducible,
        }
        if kwargs.get("stop"):
            request["stop"] = kwargs["stop"]
        if kwargs.get("json_schema"):  # llama.cpp turns it into a grammar for the reply
            request["json_schema"] = kwargs["json_schema"]
        return request

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._decode(messages, threading.Event(), stop=stop, **kwargs)

    def _decode(
        self, messages: list[BaseMessage], cancel: threading.Event, **kwargs: Any
    ) -> ChatResult:
        """The reply to `messages`, streamed; setting `cancel` stops the decode at the next
        token (the reply then is what came so far)."""
        chunks: list[dict[str, Any]] = []

        def take(chunk: dict[str, Any]) -> bool:
            chunks.append(chunk)
            return cancel.is_set()  # True: the server stops this request and frees its slot

        request = self.request(messages, **kwargs) | STREAM
        self._server().handle_chat_completions(request, take)
        prefill = messages[-1].text if messages and messages[-1].type == "ai" else ""
        return _to_result(joined(chunks), prefill)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        # The server call blocks; a worker thread lets concurrent episodes share its slots.
        cancel = threading.Event()
        try:
            return await asyncio.to_thread(self._decode, messages, cancel, stop=stop, **kwargs)
        except asyncio.CancelledError:
            cancel.set()  # the thread goes on to the next token, then stops the decode
            raise


STREAM = {"stream": True, "stream_options": {"include_usage": True}}


def joined(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """A streamed reply's chunks as the one reply a plain request gets (an error as it came).

    >>> joined([{"choices": [{"delta": {"content": "Hi"}, "finish_reason": None}]},
    ...         {"choices": [{"delta": {}, "finish_reason": "stop"}]},
    ...         {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}])
    ... # doctest: +NORMALIZE_WHITESPACE
    {'choices': [{'message': {'role': 'assistant', 'content': 'Hi'}, 'finish_reason': 'stop'}],
     'usage': {'prompt_tokens': 3, 'completion_tokens': 1}, 'timings': None}
    """
    text: list[str] = []
    finish, last = None, dict[str, Any]()
    for chunk in chunks:
        if "error" in chunk or "choices" not in chunk:
            return chunk if "error" in chunk else {"error": chunk}
        for choice in chunk["choices"]:
            text.append(choice.get("delta", {}).get("content") or "")
            finish = choice.get("finish_reason") or finish
        last = chunk if "usage" in chunk or "timings" in chunk else last
    message = {"role": "assistant", "content": "".join(text)}
    return {
        "choices": [{"message": message, "finish_reason": finish}],
        "usage": last.get("usage"),
        "timings": last.get("timings"),
    }


def _to_result(reply: dict[str, Any], prefill: str = "") -> ChatResult:
    if "error" in reply:
        msg = f"local model error: {reply['error']}"
        raise RuntimeError(msg)
    choice = reply["choices"][0]
    usage = reply.get("usage") or {}
    if isinstance(usage, str):
        usage = json.loads(usage)
    prompt, completion = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
    cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0))
    content = choice["message"].get("content") or ""
    if prefill and not content.startswith(prefill):  # the reply is the whole answer, always
        content = prefill + content
    message = AIMessage(
        content=content,
        usage_metadata={
            "input_tokens": prompt,
            "output_tokens": completion,
            "total_tokens": prompt + completion,
            "input_token_details": {"cache_read": cached},
        },
        response_metadata={
            "finish_reason": choice.get("finish_reason"),
            "timings": reply.get("timings"),
        },
    )
    return ChatResult(generations=[ChatGeneration(message=message)])
