"""The embedded local model: real weights generating real text through langchain-core."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from reflexion.actor.chat import CallCache, ChatActor
from reflexion.core.errors import UsageError
from reflexion.core.records import Task
from reflexion.models import files as model_files
from reflexion.models.files import ModelFiles
from reflexion.models.local import ChatLocalGGUF

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def small() -> ChatLocalGGUF:
    return ChatLocalGGUF.named("smollm2-135m", max_tokens=24)


def test_the_small_model_writes_text_and_counts_tokens(small: ChatLocalGGUF) -> None:
    reply = small.invoke([HumanMessage("Name a colour of the sky.")])
    assert isinstance(reply, AIMessage) and reply.text.strip()
    usage = reply.usage_metadata
    assert usage is not None and usage["input_tokens"] > 5 and 0 < usage["output_tokens"] <= 24


def test_greedy_decoding_is_repeatable(small: ChatLocalGGUF) -> None:
    prompt = [HumanMessage("Count from one to five.")]
    assert small.invoke(prompt).text == small.invoke(prompt).text


def test_a_grown_prompt_reuses_the_kv_cache_unless_decoding_is_reproducible() -> None:
    first = [HumanMessage("Here is a long story about a cat. " * 30 + "Summarise it.")]
    grown = [*first, AIMessage("A cat sleeps."), HumanMessage("Now shorter.")]
    served = {}
    for reproducible in (False, True):
        model = ChatLocalGGUF.named("smollm2-135m", max_tokens=24, reproducible=reproducible)
        model.invoke(first)
        usage = model.invoke(grown).usage_metadata
        assert usage is not None
        served[reproducible] = usage["input_token_details"]["cache_read"], usage["input_tokens"]
    assert served[False][0] >= served[False][1] // 2 and served[True][0] == 0


def test_concurrent_calls_share_one_loaded_model(small: ChatLocalGGUF) -> None:
    other = ChatLocalGGUF.named("smollm2-135m", max_tokens=8)
    assert other._server() is small._server()  # loaded once per process

    async def many() -> list[AIMessage]:
        prompts = [[HumanMessage(f"Say the number {i}.")] for i in range(3)]
        return list(await asyncio.gather(*(small.ainvoke(p) for p in prompts)))

    assert all(r.text.strip() for r in asyncio.run(many()))


def test_the_actor_runs_roles_with_their_token_limits(small: ChatLocalGGUF) -> None:
    actor = ChatActor(small, max_tokens={"generate": 4}, cache=CallCache())
    task = Task("t", "Write a haiku about rain.")
    call = asyncio.run(actor.generate(task, (), sample=0))
    assert call.error is None and call.output and call.output_tokens <= 4

    async def twice():
        return await asyncio.gather(*(actor.generate(task, (), sample=0) for _ in range(2)))

    a, b = asyncio.run(twice())
    assert a.output == b.output and [a.reused, b.reused].count(True) >= 1


def test_any_gguf_path_works_and_a_missing_one_is_a_clear_error() -> None:
    path = model_files.gguf_path("smollm2-135m")
    assert ChatLocalGGUF.named(str(path)).path == str(path)
    with pytest.raises(UsageError, match="unknown local model"):
        ChatLocalGGUF.named("/nowhere/model.gguf")


def test_reflexion_threads_sets_the_models_threads_and_a_bad_value_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs side by side each take their share of the cores (REFLEXION_THREADS=1), and the
    server is started with that many threads."""
    monkeypatch.setenv("REFLEXION_THREADS", "1")
    model = ChatLocalGGUF.named("smollm2-135m")
    assert model.threads == 1 and model.settings.threads == 1
    monkeypatch.setenv("REFLEXION_THREADS", "0")
    with pytest.raises(UsageError, match="REFLEXION_THREADS must be"):
        ChatLocalGGUF.named("smollm2-135m")
    out = tmp_path / "run"
    argv = ["--env", "game24:1", "--model", "smollm2-135m", "--out", str(out), "--no-progress"]
    proc = subprocess.run(
        [sys.executable, "-m", "reflexion", "compare", *argv],
        env={**os.environ, "REFLEXION_THREADS": "two"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    said = "REFLEXION_THREADS must be a whole number of threads, at least 1, not 'two'"
    assert proc.stderr.strip().splitlines() == [f"reflexion: error: {said}"]
    assert not out.exists()


def test_joined_parts_are_checked_against_the_pinned_sha(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("REFLEXION_CACHE", str(tmp_path / "cache"))
    parts = [tmp_path / f"part{i:02d}.bin" for i in (1, 2)]
    parts[0].write_bytes(b"GGUF" + b"a" * 1000)
    parts[1].write_bytes(b"b" * 500)
    good = hashlib.sha256(b"GGUF" + b"a" * 1000 + b"b" * 500).hexdigest()
    files = ModelFiles("toy", (), 1504, good, "toy")
    target = tmp_path / "cache" / "toy.gguf"
    model_files._join(parts, target, files)
    assert target.read_bytes().startswith(b"GGUF") and model_files._verified(target, files)

    bad = ModelFiles("toy2", (), 1504, "0" * 64, "toy")
    with pytest.raises(UsageError, match="not the pinned"):
        model_files._join(parts, tmp_path / "cache" / "toy2.gguf", bad)
    assert not list((tmp_path / "cache").glob("toy2*"))  # nothing half-made is left behind


def test_a_changed_model_file_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("REFLEXION_CACHE", str(tmp_path))
    fake = tmp_path / "m.gguf"
    fake.write_bytes(b"GGUF" + b"x" * 100)
    with pytest.raises(UsageError, match="does not match the pinned"):
        model_files._verified(fake, ModelFiles("m", (), 104, "1" * 64, "m"))


def test_a_model_that_is_not_installed_says_how_to_install_it(monkeypatch) -> None:
    files = ModelFiles("ghost", ("no-such-package-xyz==1.0",), 1, "0" * 64, "none")
    monkeypatch.setitem(model_files.MODELS, "ghost", files)
    with pytest.raises(UsageError, match="reflexion models install ghost"):
        model_files.gguf_path("ghost")


def test_a_damaged_join_in_the_cache_is_made_again(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("REFLEXION_CACHE", str(tmp_path))
    part = tmp_path / "pkg" / "data" / "part01.bin"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"GGUF" + b"z" * 60)
    files = ModelFiles("toy", (), 64, hashlib.sha256(part.read_bytes()).hexdigest(), "toy")
    monkeypatch.setitem(model_files.MODELS, "toy", files)
    monkeypatch.setattr(model_files, "_installed_files", lambda f: [part])
    first = model_files.gguf_path("toy")
    first.write_bytes(b"GGUF" + b"!" * 60)  # same size, other bytes: the marker no longer fits
    again = model_files.gguf_path("toy")
    assert again.read_bytes() == part.read_bytes()


def test_a_file_that_is_not_a_model_is_one_clear_error(tmp_path: Path, capsys) -> None:
    from reflexion.cli import main

    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF not really")
    argv = [
        "run",
        "--env",
        "humaneval:1",
        "--strategy",
        "single",
        "--model",
        str(junk),
        "--out",
        str(tmp_path / "run"),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("reflexion: error: cannot load the local model") and "\n" not in err
    assert not (tmp_path / "run").exists()


def test_a_prefilled_answer_is_continued_not_decoded(small: ChatLocalGGUF) -> None:
    """The answer's known beginning goes in as prompt: the reply holds it, and only the rest
    counts as output tokens."""
    prefix = "```python\ndef add(a, b):\n    "
    task = Task("t", "Write add(a, b).", {"answer_prefix": prefix})
    actor = ChatActor(small, max_tokens={"generate": 24})
    call = asyncio.run(actor.generate(task, (), sample=0))
    assert call.prompt[-1].role == "ai" and call.prompt[-1].content == prefix
    assert call.output.startswith(prefix) and len(call.output) > len(prefix)
    asked = asyncio.run(actor.generate(Task("t", "Write add(a, b)."), (), sample=0))
    assert call.input_tokens > asked.input_tokens  # the prefix was processed as prompt...
    assert 0 < call.output_tokens <= 24  # ...and is not in the output's count


def test_speculative_decoding_runs_and_is_checked() -> None:
    spec = ChatLocalGGUF.named("smollm2-135m", max_tokens=16, speculative="ngram")
    reply = spec.invoke([HumanMessage("Repeat: one two three one two three one two three")])
    assert reply.text.strip() and reply.response_metadata["timings"]["predicted_n"] <= 16
    with pytest.raises(UsageError, match="unknown speculative decoding 'fast'"):
        ChatLocalGGUF.named("smollm2-135m", speculative="fast").load()


def test_a_cancelled_call_stops_its_decode_and_frees_the_slot() -> None:
    one_slot = ChatLocalGGUF.named("smollm2-135m", max_tokens=300)
    short = [HumanMessage("Say hi.")]

    async def timed_short() -> float:
        start = time.perf_counter()
        await one_slot.ainvoke(short, max_tokens=4)
        return time.perf_counter() - start

    async def cancel_a_long_one() -> float:
        long = asyncio.ensure_future(one_slot.ainvoke("Write a very long story about a cat."))
        await asyncio.sleep(1.0)
        long.cancel()
        with pytest.raises(asyncio.CancelledError):
            await long
        return await timed_short()  # the slot's next request: it waits for the decode, if any

    alone = asyncio.run(timed_short())
    after = asyncio.run(cancel_a_long_one())
    assert after < 3 * alone + 2, (alone, after)  # not the rest of a 300-token story
