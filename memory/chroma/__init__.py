"""Reflections in a Chroma collection: an embedded store on disk, or a `chroma run` server."""

from memory.chroma.store import ChromaMemory

__all__ = ["ChromaMemory"]
