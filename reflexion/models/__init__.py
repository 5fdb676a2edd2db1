"""Models: `--model` names to langchain-core chat models, the local GGUF model run in this
process, and the files of the models that ship as PyPI packages. Importing this is cheap: the
chat model classes load with the first `load_model`, or the first use of their name here.

    >>> from reflexion.models import DEFAULT_MODEL, ChatLocalGGUF  # doctest: +SKIP
    >>> ChatLocalGGUF.named(DEFAULT_MODEL)  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from reflexion.models.files import DEFAULT_MODEL, MODELS
from reflexion.models.registry import check_model_name, load_model

if TYPE_CHECKING:
    from reflexion.models.fake import FixedChatModel
    from reflexion.models.local import ChatLocalGGUF
    from reflexion.models.server import start_server

# name -> the module that defines it, loaded on first use (PEP 562): langchain and the local
# runtime stay out of `import reflexion.models`
_LAZY = {
    "ChatLocalGGUF": "reflexion.models.local",
    "FixedChatModel": "reflexion.models.fake",
    "start_server": "reflexion.models.server",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    msg = f"module 'reflexion.models' has no attribute {name!r}"
    raise AttributeError(msg)


__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "ChatLocalGGUF",
    "FixedChatModel",
    "check_model_name",
    "load_model",
    "start_server",
]
