# reflexion-memory: the start-up check (reflexion/core/packages.py) looks for this line.
"""reflexion-memory's stores of reflections: a Chroma vector store, the last-k window, and
embedders, with a registry of backends by name (`--memory-backend`).

Importing this package is cheap: chromadb loads when a ChromaMemory is made, torch and
sentence-transformers at the first SentenceTransformerEmbedder.embed call.

    >>> from memory import HashEmbedder, WindowMemory
    >>> WindowMemory().reflections()
    []
"""

from memory.backend import Backend, StoreSettings
from memory.chroma.store import ChromaMemory
from memory.embedders import HashEmbedder, SentenceTransformerEmbedder, embedder_for
from memory.registry import BACKENDS, get_backend, register_backend
from memory.window import WindowMemory

__all__ = [
    "BACKENDS",
    "Backend",
    "ChromaMemory",
    "HashEmbedder",
    "SentenceTransformerEmbedder",
    "StoreSettings",
    "WindowMemory",
    "embedder_for",
    "get_backend",
    "register_backend",
]
