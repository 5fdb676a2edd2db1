"""llama.cpp's server (xllamacpp) started in this process, from a few settings: the GGUF file,
slots, context, threads, and speculative decoding.

Speculative decoding drafts a few tokens cheaply and has the model check them in one batch:
`ngram` drafts from text already in the context (prompt lookup), `draft:MODEL` with a smaller
model that shares the tokenizer (qwen2.5-coder-0.5b for the 1.5B). Greedy outputs may differ
slightly from plain decoding, since a batch rounds differently. The default is plain decoding;
when a draft pays is in docs/models.md (scripts/benchmark_speculative.py measures it).

    >>> ServerSettings("model.gguf", threads=2, speculative="ngram").speculative
    'ngram'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from reflexion.core.errors import UsageError

DRAFT_TOKENS = 3  # most tokens a draft model proposes per step (llama.cpp's default)


@dataclass(frozen=True)
class ServerSettings:
    """What makes one server: requests with equal settings share it."""

    path: str
    context: int = 4096  # tokens per slot
    parallel: int = 1  # slots
    threads: int = 1
    speculative: str = "none"  # "none", "ngram", or "draft:MODEL" (a name or a .gguf path)


def check_speculative(mode: str) -> None:
    """A one-line UsageError for a mode that is none of the three."""
    if mode in ("none", "ngram") or (mode.startswith("draft:") and len(mode) > len("draft:")):
        return
    msg = f"unknown speculative decoding {mode!r}: use none, ngram or draft:MODEL"
    raise UsageError(msg)


def server_params(settings: ServerSettings) -> Any:
    """xllamacpp's CommonParams for `settings`."""
    xllamacpp = _runtime()
    params = xllamacpp.CommonParams()
    params.model.path = settings.path
    params.n_ctx = settings.context * settings.parallel  # llama.cpp splits it between slots
    params.n_parallel = settings.parallel
    params.cpuparams.n_threads = settings.threads
    params.cpuparams_batch.n_threads = settings.threads
    # llama.cpp logs every slot event to stderr; REFLEXION_LLAMA_LOG=1 keeps it for debugging.
    params.verbosity = 3 if os.environ.get("REFLEXION_LLAMA_LOG") else -1
    _speculate(params, settings, xllamacpp.common_speculative_type)
    return params


def start_server(settings: ServerSettings) -> Any:
    """A loaded server (the weights are read now)."""
    return _runtime().Server(server_params(settings))


def serve_http(settings: ServerSettings, host: str, port: int, name: str) -> Any:
    """A loaded server that answers OpenAI-compatible requests (`/v1/chat/completions`,
    `/v1/models`, with the model called `name`) on host:port over HTTP: llama.cpp's own HTTP
    server, built into xllamacpp. Port 0 takes a free one; `.listening_address` says where.

    >>> serve_http(ServerSettings("model.gguf"), "127.0.0.1", 0, "m").listening_address
    ... # doctest: +SKIP
    'http://127.0.0.1:40123'
    """
    params = server_params(settings)
    params.hostnames = [host]
    params.port = port
    params.model_alias = {name}
    try:
        return _runtime().Server(params)
    except RuntimeError:
        msg = f"cannot serve {settings.path} on {host}:{port}: is the port taken?"
        raise UsageError(msg) from None


def _speculate(params: Any, settings: ServerSettings, kinds: Any) -> None:
    check_speculative(settings.speculative)
    if settings.speculative == "ngram":
        params.speculative.types = [kinds.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE]
    elif settings.speculative.startswith("draft:"):
        from reflexion.models.files import MODELS, gguf_path

        name = settings.speculative.removeprefix("draft:")
        draft = params.speculative.draft
        draft.mparams.path = str(gguf_path(name)) if name in MODELS else name
        draft.n_max = DRAFT_TOKENS
        draft.cpuparams.n_threads = draft.cpuparams_batch.n_threads = settings.threads
        params.speculative.types = [kinds.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE]


def _runtime() -> Any:
    try:
        import xllamacpp
    except ImportError:
        msg = "the local model needs xllamacpp: pip install xllamacpp"
        raise UsageError(msg) from None
    return xllamacpp
