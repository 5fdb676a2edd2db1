"""reflexion: LLM agents that learn from their own mistakes, measured honestly.

What a Python user needs to run an experiment:

    >>> from reflexion import RunConfig, run, make_env
    >>> results = run(RunConfig(env="quadratic", strategies=("self-refine", "reflexion-window"),
    ...                         episodes=5, out="runs/demo"))           # doctest: +SKIP
    >>> print(results.table)                                            # doctest: +SKIP

`run` (or `await arun(...)` in a running event loop) takes objects as well as names: `env=`,
`model=` (any langchain-core chat model), `memory=`, `actor=` and `strategies=`. It writes the
comparison into the run folder as `reflexion compare` does, and returns the results (a list of
TaskResult) with `.table`, `.pairs`, `.records()` and `.files` (reflexion.experiment).

Importing this package is cheap: the runner, models and memories load on first use, and torch,
chromadb, sentence-transformers and the local LLM runtime only when something needs them.
"""

# No `from __future__ import annotations` and no public helper names here: every name this
# module binds shows in `dir(reflexion)` and tab completion, where only the API belongs.
import importlib as _importlib
import typing as _typing

from reflexion.core import (
    Actor,
    Attempt,
    Call,
    Embedder,
    Env,
    Kind,
    Memory,
    Message,
    Recalled,
    RecallScope,
    Reflection,
    ReflexionError,
    Score,
    Step,
    StoreError,
    Task,
    TaskResult,
    Trial,
    Turn,
    UsageError,
)
from reflexion.core.packages import check_packages as _check_packages
from reflexion.core.version import VERSION as _VERSION

if _typing.TYPE_CHECKING:
    from envs.registry import make_env, register_env
    from memory import BACKENDS, Backend, ChromaMemory, HashEmbedder, WindowMemory
    from memory.registry import register_backend
    from reflexion.actor.chat import ChatActor
    from reflexion.agent import GraphActor, ReflexionMemory, ReflexionRetriever
    from reflexion.experiment import arun, run
    from reflexion.models.registry import load_model
    from reflexion.runner.config import RunConfig
    from reflexion.strategies import STRATEGIES, Strategy, register_strategy

__version__ = _VERSION

# name -> the module that defines it; loaded on first use (PEP 562), so `import reflexion` does
# not pull in the runner, langchain or the stores
_LAZY = {
    "RunConfig": "reflexion.runner.config",
    "run": "reflexion.experiment",  # the runner's run, and the comparison the CLI writes
    "arun": "reflexion.experiment",
    "ChatActor": "reflexion.actor.chat",  # the actor a run builds around a chat model
    "ReflexionMemory": "reflexion.agent",  # the memory in your own agent (docs/own-agent.md)
    "ReflexionRetriever": "reflexion.agent",
    "GraphActor": "reflexion.agent",
    "load_model": "reflexion.models.registry",
    "make_env": "envs.registry",
    "register_env": "envs.registry",
    "ChromaMemory": "memory",
    "WindowMemory": "memory",
    "HashEmbedder": "memory",
    "Backend": "memory",
    "BACKENDS": "memory",
    "register_backend": "memory.registry",
    "Strategy": "reflexion.strategies",
    "STRATEGIES": "reflexion.strategies",
    "register_strategy": "reflexion.strategies",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        # a foreign `memory` or `envs` (a memory.py in the working folder) would fail the import
        # below far from the cause: say which file it is instead
        _check_packages()
        value = getattr(_importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # found here from now on, without this function
        return value
    msg = f"module 'reflexion' has no attribute {name!r}"
    raise AttributeError(msg)


def __dir__() -> list[str]:
    """The public API (what `from reflexion import *` gives), not the subpackages loaded so far.

    >>> import reflexion
    >>> "run" in dir(reflexion), "importlib" in dir(reflexion)
    (True, False)
    """
    return sorted([*__all__, "__version__"])


__all__ = [
    "BACKENDS",
    "STRATEGIES",
    "Actor",
    "Attempt",
    "Backend",
    "Call",
    "ChatActor",
    "ChromaMemory",
    "Embedder",
    "Env",
    "GraphActor",
    "HashEmbedder",
    "Kind",
    "Memory",
    "Message",
    "Recalled",
    "RecallScope",
    "Reflection",
    "ReflexionError",
    "ReflexionMemory",
    "ReflexionRetriever",
    "RunConfig",
    "Score",
    "Step",
    "StoreError",
    "Strategy",
    "Task",
    "TaskResult",
    "Trial",
    "Turn",
    "UsageError",
    "WindowMemory",
    "arun",
    "load_model",
    "make_env",
    "register_backend",
    "register_env",
    "register_strategy",
    "run",
]
