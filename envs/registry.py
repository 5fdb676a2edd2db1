"""Envs by name, so `--env NAME` works and a user can add their own.

    >>> from envs.registry import register_env, make_env
    >>> register_env("mine", lambda arg: MyEnv(arg))  # doctest: +SKIP
    >>> make_env("quadratic").name
    'quadratic'

A spec may carry an argument after a colon (`jsonl:tasks.jsonl`); it is passed to the factory.
`python:MODULE:ATTR` loads a user's env without registering it: ATTR is an env object, or a
class or function that makes one with no arguments.
"""

from __future__ import annotations

from collections.abc import Callable

from reflexion.core.errors import UsageError, did_you_mean
from reflexion.core.loading import load_object
from reflexion.core.protocols import Env

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
        guess = did_you_mean(name, sorted(_REGISTRY))
        msg = f"unknown env {name!r}{guess}; known: {', '.join(sorted(_REGISTRY))}"
        raise UsageError(msg)
    return _REGISTRY[name](arg or None)


def _load_builtins() -> None:
    for name, factory in BUILTINS.items():
        _REGISTRY.setdefault(name, factory)


def _python(arg: str | None) -> Env:
    obj = load_object(arg or "", "env")
    # subtle: a class has the protocol's attributes too, so it passes isinstance(obj, Env)
    if isinstance(obj, type) or (not isinstance(obj, Env) and callable(obj)):
        try:
            obj = obj()
        except Exception as exc:  # noqa: BLE001 - the user's factory failed: one line
            msg = f"cannot make env python:{arg}: {type(exc).__name__}: {exc}"
            raise UsageError(msg) from None
    if not isinstance(obj, Env):
        msg = (
            f"python:{arg} is not an env (got {type(obj).__name__}): an env has name, tasks(), "
            "score(task, candidate) and evaluate(task, candidate)"
        )
        raise UsageError(msg)
    return obj


def _humaneval(arg: str | None) -> Env:
    from envs.humaneval import HumanEvalEnv

    return HumanEvalEnv.from_spec(arg)


def _jsonl(arg: str | None) -> Env:
    from envs.jsonl import JsonlEnv

    return JsonlEnv.from_spec(arg)


def _constrained(arg: str | None) -> Env:
    from envs.constrained import ConstrainedEnv

    return ConstrainedEnv.from_spec(arg)


def _textworld(arg: str | None) -> Env:
    from envs.textgames import TextWorldEnv

    return TextWorldEnv.from_spec(arg)


def _cooking(arg: str | None) -> Env:
    from envs.textgames import cooking_env

    return cooking_env(arg)


def _game24(arg: str | None) -> Env:
    from envs.game24 import Game24Env

    return Game24Env.from_spec(arg)


def _sql(arg: str | None) -> Env:
    from envs.sql import SqlEnv

    return SqlEnv.from_spec(arg)


def _quadratic(arg: str | None) -> Env:
    from envs.quadratic import QuadraticEnv

    return QuadraticEnv.from_spec(arg)


# subtle: each factory imports its env when first called, so the registry stays import-cycle
# free and a built-in env's heavier imports happen only when that env is made.
BUILTINS: dict[str, EnvFactory] = {
    "quadratic": _quadratic,
    "humaneval": _humaneval,
    "jsonl": _jsonl,
    "constrained": _constrained,
    "textworld": _textworld,
    "cooking": _cooking,
    "game24": _game24,
    "sql": _sql,
    "python": _python,
}
BUILTIN = tuple(BUILTINS)
