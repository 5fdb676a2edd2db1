# reflexion-memory: the start-up check (reflexion/core/packages.py) looks for this line.
"""reflexion-memory's stores of reflections: a Chroma vector store, the last-k window, and
embedders, with a registry of backends by name (`--memory-backend`). Each backend is one store
class that serves the run's contract (Memory: recall, add) and the people's (Curated: list,
forget, edit, revert, audit); `open_store(where, access)` opens one.

Importing this package is cheap: chromadb loads when a ChromaMemory is made, torch and
sentence-transformers at the first SentenceTransformerEmbedder.embed call.

    >>> from memory import HashEmbedder, WindowMemory
    >>> WindowMemory().reflections()
    []
"""

from memory.backend import Access, Backend, ReadOnly, StoreSettings
from memory.chroma.connect import split_url
from memory.chroma.filters import Filters
from memory.chroma.store import ChromaMemory
from memory.embedders import (
    HashEmbedder,
    SentenceTransformerEmbedder,
    embedder_for,
)
from memory.registry import BACKENDS, open_store, register_backend
from memory.window import WindowMemory

__all__ = [
    "BACKENDS",
    "Access",
    "Backend",
    "ChromaMemory",
    "Filters",
    "HashEmbedder",
    "ReadOnly",
    "SentenceTransformerEmbedder",
    "StoreSettings",
    "WindowMemory",
    "embedder_for",
    "open_store",
    "register_backend",
    "split_url",
]
