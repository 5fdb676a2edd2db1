"""Models: `--model` names to langchain-core chat models, the local GGUF model run in this
process, and the files of the models that ship as PyPI packages. Importing this is cheap: the
chat model classes load with the first `load_model`."""

from reflexion.models.files import DEFAULT_MODEL, MODELS
from reflexion.models.registry import load_model

__all__ = ["DEFAULT_MODEL", "MODELS", "load_model"]
