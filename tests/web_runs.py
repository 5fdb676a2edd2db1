"""A run folder for the web page's tests: three strategies on the keyword env, with a model whose
answers and reflections hold HTML and a script (which the page must show as text), and a real
Chroma store on disk (hash embedder: no model to load)."""

from __future__ import annotations

from pathlib import Path

from conftest import KeywordEnv, scripted

from reflexion import RunConfig, run

HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'


def hostile_run(out: Path) -> Path:
    """Every answer holds HOSTILE and is visibly wrong (the word "river" or "stone" is
    missing), so every strategy runs its 2 episodes and reflexion stores lessons."""
    replies = [f"{HOSTILE} apple cloud, try {i}\nline two of answer {i}" for i in range(200)]
    config = RunConfig(
        strategies=("single", "self-refine", "reflexion"),
        episodes=2,
        out=str(out),
        embedder="hash-64",
        concurrency=1,
    )
    run(config, env=KeywordEnv(), model=scripted(replies))
    return out
