"""`--model` names to langchain-core chat models.

- `qwen2.5-coder-1.5b` (the default), `qwen2.5-coder-0.5b`, `smollm2-135m`, or a path to any
  `.gguf` file: a local model run in this process (see reflexion.models.local).
- `openai:NAME`: ChatOpenAI (pip install 'reflexion-memory[openai]'; OPENAI_API_KEY).
- `openai-compatible:URL`: any OpenAI-compatible server (vLLM, llama.cpp server, Ollama);
  `URL#MODEL` names the served model.
- `python:MODULE:ATTR`: any BaseChatModel; ATTR is a model object or a no-argument factory.

    >>> load_model("openai-compatible:http://127.0.0.1:8080/v1#qwen").model_name  # doctest: +SKIP
    'qwen'
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from reflexion.core.errors import UsageError
from reflexion.core.loading import load_object

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


def load_model(spec: str, speculative: str = "none", reproducible: bool = True) -> BaseChatModel:
    """Build the chat model `spec` names; a bad name is a UsageError, not a traceback.
    `speculative` (see reflexion.models.server) and `reproducible` (see
    reflexion.models.reproducible) apply to a local model only."""
    from reflexion.models.files import MODELS

    prefix, _, rest = spec.partition(":")
    if spec in MODELS or spec.endswith(".gguf"):
        from reflexion.models.local import ChatLocalGGUF

        return ChatLocalGGUF.named(spec, speculative=speculative, reproducible=reproducible)
    if speculative != "none":
        msg = f"--speculative {speculative} needs a local model, not {spec!r}"
        raise UsageError(msg)
    if prefix == "openai" and rest:
        return _openai(rest)
    if prefix == "openai-compatible" and rest:
        url, _, name = rest.partition("#")
        return _openai(name or "default", base_url=url)
    if prefix == "python" and rest:
        return _python(rest)
    check_model_name(spec)
    raise AssertionError(spec)  # unreachable: every name check_model_name accepts is built above


def check_model_name(spec: str, flag: str = "--model") -> None:
    """Refuse a name `load_model` cannot know (a one-line UsageError), without loading anything.

    >>> check_model_name("python:my_module:model")
    >>> check_model_name("gpt-9", "--curator-model")
    Traceback (most recent call last):
    reflexion.core.errors.UsageError: unknown --curator-model 'gpt-9'; use one of: ...
    """
    from reflexion.models.files import MODELS

    prefix, _, rest = spec.partition(":")
    known = prefix in ("openai", "openai-compatible", "python") and bool(rest)
    if spec in MODELS or spec.endswith(".gguf") or known:
        return
    msg = (
        f"unknown {flag} {spec!r}; use one of: {', '.join(MODELS)}, a .gguf path, openai:NAME, "
        "openai-compatible:URL, python:MODULE:ATTR"
    )
    raise UsageError(msg)


def _openai(name: str, base_url: str | None = None) -> BaseChatModel:
    try:
        from langchain_openai import ChatOpenAI
    except ImportError:
        msg = "--model openai:... needs langchain-openai: pip install 'reflexion-memory[openai]'"
        raise UsageError(msg) from None
    extra: dict[str, Any] = {}
    if base_url is not None:
        # A local server needs no key, but the client insists on one.
        extra = {"base_url": base_url, "api_key": os.environ.get("OPENAI_API_KEY", "unused")}
    try:
        # max_retries=0: our RetryPolicy is the one retry loop (with backoff and a call timeout)
        model: BaseChatModel = ChatOpenAI(model=name, max_retries=0, **extra)
    except Exception as exc:  # noqa: BLE001 - e.g. no API key: a user error, one line
        msg = f"cannot create openai model {name!r}: {exc}"
        raise UsageError(msg) from None
    return model


def _python(path: str) -> BaseChatModel:
    from langchain_core.language_models import BaseChatModel

    obj = load_object(path, "model")
    try:
        model = obj if isinstance(obj, BaseChatModel) else obj() if callable(obj) else obj
    except Exception as exc:  # noqa: BLE001 - the user's factory failed: one line
        msg = f"cannot load model python:{path}: {type(exc).__name__}: {exc}"
        raise UsageError(msg) from None
    if not isinstance(model, BaseChatModel):
        msg = f"python:{path} is not a langchain-core BaseChatModel (got {type(model).__name__})"
        raise UsageError(msg)
    return model
