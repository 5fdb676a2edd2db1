"""`reflexion memory forget|edit|history|revert|import` on a real run's Chroma store: every
change kept in the store's history, dry runs that change nothing, and one-line errors."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from reflexion.cli import main

FAST = ["--embedder", "hash-64", "--no-progress"]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    argv = ["run", "--env", "quadratic", "--strategy", "reflexion", "--tasks", "3", "--out"]
    assert main([*argv, str(out), *FAST]) == 0
    return out


def ids(run: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    assert main(["memory", "list", str(run)]) == 0
    return [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]


def out_of(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 0) -> str:
    capsys.readouterr()
    assert main(argv) == code
    captured = capsys.readouterr()
    return captured.out if code == 0 else captured.err


def test_forget_with_a_dry_run_then_revert_brings_it_back(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = ids(run_dir, capsys)
    assert len(before) >= 3
    dry = out_of(["memory", "forget", str(run_dir), "--task", "q0", "--dry-run"], capsys)
    q0 = [line.split()[0] for line in dry.splitlines()[1:]]
    said = f"{len(q0)} reflection{'s' if len(q0) != 1 else ''}"
    assert dry.startswith(f"would forget {said} (dry run") and q0
    assert ids(run_dir, capsys) == before  # a dry run changes nothing
    done = out_of(["memory", "forget", str(run_dir), "--task", "q0", "--why", "bad"], capsys)
    assert done.strip() == f"forgot {said}"
    assert sorted(ids(run_dir, capsys)) == sorted(set(before) - set(q0))
    history = out_of(["memory", "history", str(run_dir), q0[0]], capsys)
    assert "1 change; now: (not stored)" in history and "forget (bad); before: " in history
    assert out_of(["memory", "revert", str(run_dir), q0[0]], capsys).startswith(f"reverted {q0[0]}")
    assert q0[0] in ids(run_dir, capsys)


def test_edit_embeds_the_new_text_and_keeps_the_old(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = ids(run_dir, capsys)[0]
    new = "Always check the sign of the gradient step first."
    out_of(["memory", "edit", str(run_dir), first, "--text", new, "--why", "clearer"], capsys)
    assert new in out_of(["memory", "show", str(run_dir), first], capsys)
    hits = out_of(["memory", "search", str(run_dir), new, "--k", "1"], capsys)
    assert first in hits  # found by its new text: it was embedded again
    history = out_of(["memory", "history", str(run_dir), first], capsys)
    assert "edit (clearer); before: x = " in history and f"now: {new}" in history
    out_of(["memory", "revert", str(run_dir), first], capsys)
    assert new not in out_of(["memory", "show", str(run_dir), first], capsys)


def test_export_import_export_gives_the_same_file(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "a.jsonl"
    second = tmp_path / "b.jsonl"
    out_of(["memory", "export", str(run_dir), "--output", str(first)], capsys)
    store = tmp_path / "moved"
    argv = ["memory", "import", str(store), str(first), "--embedder", "hash-64"]
    count = len(first.read_text().splitlines())
    assert out_of(argv, capsys).strip() == f"imported {count} reflections"
    out_of(["memory", "export", str(store), "--output", str(second)], capsys)
    assert second.read_bytes() == first.read_bytes()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["forget"], "needs reflection ids, or --task, --run or --before"),
        (["forget", "--before", "yesterday"], "--before wants a date like 2026-11-23"),
        (["edit", "nope", "--text", "x"], "no reflection with id 'nope'"),
        (["revert", "nope"], "no reflection with id 'nope'"),
        (["history", "nope"], "no reflection with id 'nope'"),
        (["forget", "nope"], "no reflection with id 'nope'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    run_dir: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    err = out_of(["memory", argv[0], str(run_dir), *argv[1:]], capsys, code=2)
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_bad_import_file_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "r1"}) + "\n")
    store = tmp_path / "store"
    err = out_of(["memory", "import", str(store), str(bad)], capsys, code=2)
    assert f"{bad}:1: not a reflection" in err and not store.exists()


def test_why_shows_the_query_the_recalled_the_cut_off_and_what_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "g"
    argv = ["run", "--env", "quadratic", "--strategy", "reflexion", "--tasks", "4"]
    argv += ["--k", "1", "--scope", "global", "--order", "stream", "--out", str(out), *FAST]
    assert main(argv) == 0
    text = out_of(["memory", "why", str(out), "q2", "1"], capsys)
    header = "reflexion seed 0, task q2, episode 1, reflection lessons: k=1, scope global"
    assert text.startswith(header)
    assert "query: Find x in R^3 that maximises" in text  # the task prompt it searched with
    recalled = text.split("recalled:\n")[1].split("cut off")[0]
    assert recalled.count("  1. ") == 1 and "from another task, this run" in recalled
    cut = text.split("cut off:\n")[1].split("then:")[0]
    assert "ranked 2 (k=1)" in cut  # an earlier task's other lesson, below k
    assert "then: the attempt scored" in text
    err = out_of(["memory", "why", str(out), "q9", "1"], capsys, code=2)
    assert "no task 'q9' in" in err and "closest: quadratic/q" in err
    err = out_of(["memory", "why", str(out), "q2", "9"], capsys, code=2)
    assert "no recall of task 'q2' at episode 9" in err


def credited(tmp_path: Path, **more: Any) -> dict[str, tuple[str, Any]]:
    """Reflexion on one keywords task over 3 episodes, reflecting L1 then L2: each lesson's
    id and credit, by its text. Episode 1 scores 0.5; episode 2 ("nothing") 0; episode 3
    ("apple river") 1, unless its prompt is episode 2's again (the cached answer)."""
    from conftest import KeywordEnv, scripted
    from running import RunConfig, run

    from memory.chroma.store import ChromaMemory

    model = scripted(["apple", "L1: say more words", "nothing", "L2: say both", "apple river"])
    config = RunConfig(
        env="keywords", strategies=("reflexion",), out=str(tmp_path / "r"), episodes=3,
        tasks=1, embedder="hash-64", **more,
    )  # fmt: skip
    run(config, model=model, env=KeywordEnv())
    with ChromaMemory.open(tmp_path / "r" / "memory") as m:
        return {r.text: (r.id, m.credits()[r.id]) for r in m.reflections()}


def test_each_lesson_is_credited_with_what_followed_its_recalls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reflexion.core.curation import Credit

    # with L1 recalled, episode 2 fell (L1 hurt); with L1 and L2, episode 3 rose (both helped)
    by_text = {text: credit for text, (_, credit) in credited(tmp_path).items()}
    assert by_text == {
        "L1: say more words": Credit(recalls=2, helped=1, hurt=1, same=0),
        "L2: say both": Credit(recalls=1, helped=1, hurt=0, same=0),
    }
    listing = out_of(["memory", "list", str(tmp_path / "r")], capsys)
    assert "[recalled 2: helped 1, hurt 1, same 0]" in listing


def test_a_lesson_that_memory_tokens_kept_out_of_the_prompt_is_not_credited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reflexion.core.curation import Credit

    # --memory-tokens 5 holds 20 characters: L1 (18) fits, L2 (12) does not fit beside it. So
    # episode 3's prompt is episode 2's again (the model's answer too), and only L1 was shown
    lessons = credited(tmp_path, memory_tokens=5)
    assert {text: credit for text, (_, credit) in lessons.items()} == {
        "L1: say more words": Credit(recalls=2, helped=0, hurt=1, same=1),
        "L2: say both": Credit(recalls=0, helped=0, hurt=0, same=0),
    }
    why = out_of(["memory", "why", str(tmp_path / "r"), "k0", "3"], capsys)
    marked = [
        line for line in why.splitlines() if "(not in the prompt: over --memory-tokens)" in line
    ]
    assert len(marked) == 1 and lessons["L2: say both"][0] in marked[0]


def test_a_vague_reflection_is_stored_with_a_flag_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from conftest import KeywordEnv, scripted
    from running import RunConfig, run

    from reflexion.core.runfolder import RunFolder

    vague_text = "I will try harder and be more careful next time."
    specific = "I left out river; the sentence needs both apple and river."
    model = scripted(["apple", vague_text, "apple", specific, "apple river zebra"])
    config = RunConfig(
        env="keywords", strategies=("reflexion",), out=str(tmp_path / "r"), episodes=3,
        tasks=1, embedder="hash-64",
    )  # fmt: skip
    run(config, model=model, env=KeywordEnv())
    remembered = {
        s.output: s.data for s in RunFolder(tmp_path / "r").steps() if s.kind == "remember"
    }
    assert (
        remembered[vague_text]["flag"] == "names nothing from the task or from what the check found"
    )
    assert "flag" not in remembered[specific]
    listing = out_of(["memory", "list", str(tmp_path / "r")], capsys)
    flagged = [line for line in listing.splitlines() if "[vague: " in line]
    assert len(flagged) == 1 and "I will try harder" in flagged[0]


def test_a_near_duplicate_lesson_is_merged_with_both_provenances(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from conftest import KeywordEnv, scripted
    from running import RunConfig, run

    from memory.chroma.store import ChromaMemory
    from reflexion.core.runfolder import RunFolder

    lesson = "I left out river; the sentence needs both apple and river."
    model = scripted(["apple", lesson, "apple", lesson, "apple river zebra"])
    config = RunConfig(
        env="keywords", strategies=("reflexion",), out=str(tmp_path / "r"), episodes=3,
        tasks=1, embedder="hash-64", dedup=0.95,
    )  # fmt: skip
    run(config, model=model, env=KeywordEnv())
    steps = RunFolder(tmp_path / "r").steps()
    first, second = [s.data for s in steps if s.kind == "remember"]
    assert second["merged_into"] == first["id"] and second["similarity"] >= 0.95
    with ChromaMemory.open(tmp_path / "r" / "memory") as m:
        assert [r.id for r in m.reflections()] == [first["id"]]  # stored once
    shown = out_of(["memory", "show", str(tmp_path / "r"), first["id"]], capsys)
    assert f"merged in: {second['id']} (k0, reflexion seed 0 episode 2" in shown
    history = out_of(["memory", "history", str(tmp_path / "r"), first["id"]], capsys)
    assert f"merge (merged {second['id']})" in history
    # --dedup 1 merges only identical text: a different lesson is stored
    other = ["apple", lesson, "apple", "Use river too.", "apple river zebra"]
    run(dataclasses.replace(config, out=str(tmp_path / "s"), dedup=1.0),
        model=scripted(other), env=KeywordEnv())  # fmt: skip
    with ChromaMemory.open(tmp_path / "s" / "memory") as m:
        assert len(m.reflections()) == 2
