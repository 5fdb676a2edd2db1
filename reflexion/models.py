"""`--model` names to langchain-core chat models.

openai:NAME              ChatOpenAI (pip install 'reflexion-memory[openai]'; OPENAI_API_KEY)
python:MODULE:ATTR       any BaseChatModel: ATTR is a model object or a no-argument factory

>>> load_model("python:tests.fakes:echo_model")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING

from reflexion.errors import UsageError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

PREFIXES = ("openai", "python")


def load_model(spec: str) -> BaseChatModel:
    """Build the chat model `spec` names; a bad name is a UsageError, not a traceback."""
    prefix, _, rest = spec.partition(":")
    if prefix == "openai" and rest:
        return _openai(rest)
    if prefix == "python" and rest.count(":") == 1:
        return _python(rest)
    msg = f"unknown --model {spec!r}; use one of: openai:NAME, python:MODULE:ATTR"
    raise UsageError(msg)


def _openai(name: str) -> BaseChatModel:
    try:
        from langchain_openai import ChatOpenAI
    except ImportError:
        msg = "--model openai:... needs langchain-openai: pip install 'reflexion-memory[openai]'"
        raise UsageError(msg) from None
    try:
        model: BaseChatModel = ChatOpenAI(model=name)
    except Exception as exc:  # noqa: BLE001 - e.g. no API key: a user error, one line
        msg = f"cannot create openai model {name!r}: {exc}"
        raise UsageError(msg) from None
    return model


def _python(path: str) -> BaseChatModel:
    from langchain_core.language_models import BaseChatModel

    module_name, attr = path.split(":")
    if os.getcwd() not in sys.path:  # the console script does not put the cwd on the path
        sys.path.insert(0, os.getcwd())
    try:
        obj = getattr(importlib.import_module(module_name), attr)
        model = obj if isinstance(obj, BaseChatModel) else obj() if callable(obj) else obj
    except Exception as exc:  # noqa: BLE001 - the user's module failed: one line, not a traceback
        msg = f"cannot load model python:{path}: {type(exc).__name__}: {exc}"
        raise UsageError(msg) from None
    if not isinstance(model, BaseChatModel):
        msg = f"python:{path} is not a langchain-core BaseChatModel (got {type(model).__name__})"
        raise UsageError(msg)
    return model
