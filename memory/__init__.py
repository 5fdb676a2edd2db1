"""Episodic memories of reflections: a Chroma vector store, the last-k window, and embedders.

Importing this package is cheap: chromadb loads when a ChromaMemory is made, torch and
sentence-transformers at the first SentenceTransformerEmbedder.embed call.

    >>> from memory import HashEmbedder, WindowMemory
    >>> WindowMemory().reflections()
    []
"""

from memory.chroma import ChromaMemory
from memory.embedders import HashEmbedder, SentenceTransformerEmbedder, embedder_for
from memory.window import WindowMemory

__all__ = [
    "ChromaMemory",
    "HashEmbedder",
    "SentenceTransformerEmbedder",
    "WindowMemory",
    "embedder_for",
]
