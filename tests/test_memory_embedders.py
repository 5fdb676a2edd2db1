"""The embedders: determinism across processes, lazy heavy imports, resolving stored names."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memory import HashEmbedder, SentenceTransformerEmbedder, embedder_for
from reflexion.core.errors import StoreError

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "sentence_transformers", "chromadb", "transformers", "onnxruntime")


def run_python(code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_hash_embedder_is_the_same_in_another_process() -> None:
    # str hashes are salted per process; stored vectors must match the next run's queries.
    texts = ["Off by one in the loop", "", "ünïcode ✓"]
    out = run_python(f"""
        import json
        from memory import HashEmbedder
        print(json.dumps(HashEmbedder(32).embed({texts!r})))
    """)
    assert json.loads(out) == HashEmbedder(32).embed(texts)


@pytest.mark.parametrize("text", ["a lesson", "", "!!!", "the the the", "Case CASE case"])
def test_hash_vectors_are_unit_length(text: str) -> None:
    (vector,) = HashEmbedder(8).embed([text])
    assert len(vector) == 8
    assert math.fsum(x * x for x in vector) == pytest.approx(1.0)


def test_hash_embedder_ignores_case_and_punctuation() -> None:
    e = HashEmbedder()
    assert e.embed(["Fix the SIGN."]) == e.embed(["fix the sign"])
    assert e.embed(["fix the sign"]) != e.embed(["fix the loop"])


def test_embedder_for_resolves_stored_names() -> None:
    assert embedder_for("hash-32").dim == 32
    assert embedder_for("hash-32").name == "hash-32"
    st = embedder_for("all-MiniLM-L6-v2")
    assert (st.name, st.dim) == ("all-MiniLM-L6-v2", 384)


@pytest.mark.parametrize("name", ["text-embedding-3-small", "hash-0", "hash-", "hash-x", ""])
def test_embedder_for_refuses_unknown_names(name: str) -> None:
    with pytest.raises(StoreError, match="unknown embedding model") as e:
        embedder_for(name)
    assert "\n" not in str(e.value)


def test_importing_memory_and_constructing_embedders_is_cheap() -> None:
    # `import memory` runs in every CLI call and worker; torch alone takes seconds to import.
    out = run_python(f"""
        import json, sys
        import memory
        memory.SentenceTransformerEmbedder()
        memory.embedder_for("all-MiniLM-L6-v2")
        memory.WindowMemory()
        print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
    """)
    assert json.loads(out) == []


def test_sentence_transformer_embeds_no_texts_to_nothing() -> None:
    assert SentenceTransformerEmbedder().embed([]) == []
