"""`reflexion memory forget|edit|history|revert|import` on a real run's Chroma store: every
change kept in the store's history (`revert --to` one of it), a lesson's credit afresh after an
edit, dry runs that change nothing, and one-line errors."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from commands import cli, one_line_error, quadratic, said
from memory_run import credit_of, listed, of_strategy

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


def test_history_and_revert_take_a_prefix_of_a_forgotten_lesson(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = quadratic(tmp_path / "q")
    gone = ids(out, capsys)[0]
    assert said(["memory", "forget", str(out), gone], capsys) == "forgot 1 reflection\n"
    history = said(["memory", "history", str(out), gone[:6]], capsys)
    assert history.startswith(f"{gone}: 1 change; now: (not stored)")
    assert said(["memory", "revert", str(out), gone[:6]], capsys).startswith(f"reverted {gone}")
    assert gone in ids(out, capsys)
    err = said(["memory", "history", str(out), "zzzz"], capsys, code=2)
    assert "no reflection with id 'zzzz'" in err and "closest" not in err  # none is close


@pytest.mark.parametrize("text", ["", "   \n "])
def test_an_edit_to_no_text_is_refused_and_stores_nothing(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = quadratic(tmp_path / "q")
    first = ids(out, capsys)[0]
    before = said(["memory", "show", str(out), first], capsys)
    err = said(["memory", "edit", str(out), first, "--text", text], capsys, code=2)
    assert "the new text is empty" in err and len(err.strip().splitlines()) == 1
    assert said(["memory", "show", str(out), first], capsys) == before
    assert "0 changes" in said(["memory", "history", str(out), first], capsys)


def test_revert_to_restores_a_numbered_history_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = quadratic(tmp_path / "q")
    first = ids(out, capsys)[0]
    original = said(["memory", "show", str(out), first], capsys).split("\n\n")[1]
    for text in ("Text one.", "Text two.", "Text three."):
        said(["memory", "edit", str(out), first, "--text", text], capsys)
    history = said(["memory", "history", str(out), first], capsys)
    assert "#1 " in history and "#3 " in history and "before: Text two." in history
    back = said(["memory", "revert", str(out), first, "--to", "2"], capsys)
    assert back == f"reverted {first} to #2: Text one.\n"  # as it was before change #2
    back = said(["memory", "revert", str(out), first, "--to", "1", "--why", "start"], capsys)
    assert back == f"reverted {first} to #1: {original}\n"
    assert said(["memory", "revert", str(out), first], capsys) == f"reverted {first}: Text one.\n"
    err = said(["memory", "revert", str(out), first, "--to", "9"], capsys, code=2)
    assert "--to 9" in err and "#1 to #6" in err and len(err.strip().splitlines()) == 1


def test_2_an_edit_starts_the_lessons_credit_afresh(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = listed(q, capsys)
    rid = next(r for r in of_strategy(lines, "reflexion") if credit_of(lines[r]) > 0)
    code, _, err = cli(capsys, "memory", "edit", str(q), rid, "--text", "Try x = [0, 0].")
    assert code == 0, err
    after = listed(q, capsys)[rid]
    assert "Try x = [0, 0]." in after
    assert credit_of(after) == 0, after  # the README: "an edit starts the counts afresh"
    _, shown, _ = cli(capsys, "memory", "show", str(q), rid)
    credit = [line for line in shown.splitlines() if line.startswith("credit:")]
    assert all(credit_of(line) == 0 for line in credit), credit


def test_2_after_forget_and_revert_the_credit_agrees_with_the_recalls_shown(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = listed(q, capsys)
    rid = next(r for r in of_strategy(lines, "reflexion") if credit_of(lines[r]) > 0)
    assert cli(capsys, "memory", "forget", str(q), rid, "--why", "test")[0] == 0
    assert cli(capsys, "memory", "revert", str(q), rid)[0] == 0
    _, shown, _ = cli(capsys, "memory", "show", str(q), rid)
    recalls = sum(line.startswith("recalled by ") for line in shown.splitlines())
    credit = [line for line in shown.splitlines() if line.startswith("credit:")]
    assert credit and credit_of(credit[0]) == recalls, shown
    assert credit_of(listed(q, capsys)[rid]) == recalls, listed(q, capsys)[rid]


def test_5_forgetting_an_id_that_is_not_there_is_an_error(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = listed(q, capsys)
    code, out, err = cli(capsys, "memory", "forget", str(q), "deadbeefdeadbeef")
    line = one_line_error(code, err)
    assert "deadbeefdeadbeef" in line
    assert "forgot" not in out
    assert listed(q, capsys) == before


def test_8_forgetting_one_says_reflection_in_the_singular(
    q: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = of_strategy(listed(q, capsys), "reflexion")[0]
    code, out, err = cli(capsys, "memory", "forget", str(q), rid)
    assert code == 0, err
    assert re.search(r"\bforgot 1 reflection\b(?!s)", out), out


def test_8_history_does_not_print_revert_twice(q: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rid = of_strategy(listed(q, capsys), "reflexion")[0]
    assert cli(capsys, "memory", "forget", str(q), rid, "--why", "test")[0] == 0
    assert cli(capsys, "memory", "revert", str(q), rid)[0] == 0
    _, out, _ = cli(capsys, "memory", "history", str(q), rid)
    assert "revert" in out and "revert (revert)" not in out, out


@pytest.mark.parametrize(
    ("field", "bad"), [("episode", "two"), ("text", None)], ids=["a word for a number", "missing"]
)
def test_8_a_bad_import_line_names_its_field_and_imports_nothing(
    q: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, bad: str | None
) -> None:
    exported = tmp_path / "all.jsonl"
    assert cli(capsys, "memory", "export", str(q), "--output", str(exported))[0] == 0
    good, wrong = (json.loads(line) for line in exported.read_text().splitlines()[:2])
    if bad is None:
        del wrong[field]
    else:
        wrong[field] = bad
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text(json.dumps(good) + "\n" + json.dumps(wrong) + "\n")
    store = tmp_path / "store"
    code, _, err = cli(capsys, "memory", "import", str(store), str(jsonl), "--embedder", "hash-64")
    line = one_line_error(code, err)
    assert f"{jsonl}:2" in line and field in line, line
    if store.exists():  # nothing half-imported: the good first line is not there either
        assert not listed(store, capsys)
