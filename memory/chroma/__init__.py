"""The `chroma` backend: reflections in a Chroma collection, an embedded store on disk or a
`chroma run` server, in one store class (memory.chroma.store)."""

from memory.chroma.store import CHROMA, ChromaMemory

__all__ = ["CHROMA", "ChromaMemory"]
