"""Envs by name, so `--env NAME` works and a user can add their own.

    >>> from envs.registry import register_env, make_env
    >>> register_env("mine", lambda arg: MyEnv(arg))  # doctest: +SKIP
    >>> make_env("quadratic").name
    'quadratic'

A spec may carry an argument after a colon (`jsonl:tasks.jsonl`); it is passed to the factory.
"""

from __future__ import annotations

from collections.abc import Callable

from reflexion.errors import UsageError
from reflexion.protocols import Env

EnvFactory = Callable[[str | None], Env]

_REGISTRY: dict[str, EnvFactory] = {}


def register_env(name: str, factory: EnvFactory) -> None:
    """Make `--env name` (or `--env name:ARG`) build an Env with `factory(ARG or None)`."""
    _REGISTRY[name] = factory


def env_names() -> list[str]:
    _load_builtins()
    return sorted(_REGISTRY)


def make_env(spec: str) -> Env:
    """Build the env named by `spec` ("name" or "name:arg"); unknown names are a UsageError."""
    _load_builtins()
    name, _, arg = spec.partition(":")
    if name not in _REGISTRY:
        msg = f"unknown env {name!r}; known: {', '.join(sorted(_REGISTRY))}"
        raise UsageError(msg)
    return _REGISTRY[name](arg or None)


def _load_builtins() -> None:
    # subtle: imported here, not at module top, so the registry module stays import-cycle free
    # and a built-in env's heavier imports happen only when envs are first listed or made.
    if "quadratic" not in _REGISTRY:
        from envs.quadratic import QuadraticEnv

        register_env("quadratic", QuadraticEnv.from_spec)
    if "humaneval" not in _REGISTRY:
        register_env("humaneval", _humaneval)
    if "jsonl" not in _REGISTRY:
        register_env("jsonl", _jsonl)


def _humaneval(arg: str | None) -> Env:
    from envs.humaneval import HumanEvalEnv

    return HumanEvalEnv.from_spec(arg)


def _jsonl(arg: str | None) -> Env:
    from envs.jsonl import JsonlEnv

    return JsonlEnv.from_spec(arg)
