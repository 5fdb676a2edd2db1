"""The `reflexion` command as a user meets it: tables, memory inspection, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reflexion.cli import main
from reflexion.core.runfolder import RunFolder

FAST = ["--embedder", "hash-64", "--no-progress"]


def test_compare_prints_the_table_and_writes_comparison_json(tmp_path: Path, capsys) -> None:
    out = tmp_path / "cmp"
    code = main(
        [
            "compare",
            "--env",
            "quadratic",
            "--strategies",
            "self-refine,reflexion,reflexion-window",
            "--episodes",
            "5",
            "--out",
            str(out),
            *FAST,
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    header, *rows = printed.splitlines()[1:5]  # under the headline
    assert header.split()[:3] == ["strategy", "trials", "final"]
    assert [r.split()[0] for r in rows] == ["self-refine", "reflexion", "reflexion-window"]
    data = json.loads((out / "comparison.json").read_text())
    assert [s["strategy"] for s in data["strategies"]] == [
        "self-refine",
        "reflexion",
        "reflexion-window",
    ]
    assert all(s["trials"] == 8 for s in data["strategies"])
    assert data["config"]["run_id"] == json.loads((out / "config.json").read_text())["run_id"]


def test_memory_commands_show_reflections_with_provenance(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    assert (
        main(
            [
                "run",
                "--env",
                "quadratic",
                "--strategy",
                "reflexion",
                "--episodes",
                "3",
                "--tasks",
                "2",
                "--out",
                str(out),
                *FAST,
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["memory", "list", str(out)]) == 0
    listing = capsys.readouterr().out.splitlines()
    remembered = [s for s in RunFolder(out).steps() if s.kind == "remember"]
    assert len(remembered) >= 2
    assert listing[0].startswith(f"{len(remembered)} reflections")
    assert len(listing) == 1 + len(remembered)
    # oldest first; the two tasks run side by side, so either may have written first
    first = next(line for line in listing[1:] if "quadratic/q0" in line)
    first_id = first.split()[0]
    assert "reflexion seed 0 ep 1" in first

    assert main(["memory", "show", str(out), first_id]) == 0
    shown = capsys.readouterr().out
    assert "task_id: q0" in shown and "recalled by reflexion task q0 seed 0 episode 2" in shown
    assert "from this task, this run)" in shown  # the recall's provenance

    assert main(["memory", "search", str(out), "next x", "--k", "2"]) == 0
    hits = capsys.readouterr().out.splitlines()
    assert len(hits) == 2 and all(0.0 <= float(h.split()[0]) <= 1.0001 for h in hits)

    md = tmp_path / "lessons.md"
    assert main(["memory", "export", str(out), "--format", "md", "--output", str(md)]) == 0
    assert md.read_text().count("\n## ") == len(remembered)
    assert main(["memory", "export", str(out)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()[1:]
    assert {json.loads(x)["task_id"] for x in lines} == {"q0", "q1"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--env", "nope", "--strategy", "single"], "unknown env 'nope'"),
        (["run", "--env", "quadratic", "--strategy", "magic"], "unknown strategy 'magic'"),
        (["compare", "--env", "quadratic", "--strategies", ","], "no strategy given"),
        (["run", "--env", "quadratic", "--strategy", "single", "--episodes", "0"], "at least 1"),
        (["run", "--env", "quadratic", "--strategy", "single", "--episodes", "x"], "whole number"),
        (["run", "--env", "quadratic:0", "--strategy", "single"], "between 1 and 100"),
        (
            ["run", "--env", "quadratic", "--strategy", "single", "--model", "gpt"],
            "unknown --model",
        ),
        (
            ["run", "--env", "quadratic", "--strategy", "single", "--model", "python:no.such:m"],
            "cannot load model",
        ),
        (["memory", "list", "/no/such/dir"], "does not exist"),
        (["memory", "search", "/tmp", "x", "--k", "0"], "at least 1"),
        (
            ["run", "--env", "quadratic", "--strategy", "single", "--model", "python:json:loads"],
            "cannot load model python:json:loads: TypeError",
        ),
        (
            ["run", "--env", "quadratic", "--strategy", "single", "--seeds", "99999999999"],
            "between 1 and 1000",
        ),
        (["run", "--env", "quadratic", "--strategy", "single", "--tasks", "9"], "more than the 8"),
        (
            ["run", "--env", "quadratic", "--strategy", "single", "--signal", "self-tests"],
            "--signal self-tests needs an env of code tasks",
        ),
        (["run", "--env", "quadratic", "--strategy", "single", "--feedback", "loud"], "invalid"),
        (
            ["run", "--env", "quadratic", "--strategy", "single", "--self-tests", "0"],
            "at least 1",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys, argv, message) -> None:
    if argv[0] != "memory":
        argv = [*argv, "--out", str(tmp_path / "o")]
    assert exit_code(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()  # nothing written


def exit_code(argv: list[str]) -> int | str | None:
    """main()'s return code, or the code argparse exited with."""
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def test_a_store_that_is_not_chroma_is_refused(tmp_path: Path, capsys) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "chroma.sqlite3").write_bytes(b"this is not a database" * 100)
    assert main(["memory", "list", str(store)]) == 2
    err = capsys.readouterr().err
    assert "reflexion: error:" in err and len(err.strip().splitlines()) == 1
    assert (store / "chroma.sqlite3").read_bytes() == b"this is not a database" * 100


def test_the_installed_command_reports_errors_without_a_traceback(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("reflexion")
    proc = subprocess.run(
        [str(exe), "run", "--env", "nope", "--strategy", "single"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 2
    known = "constrained, cooking, game24, humaneval, jsonl, python, quadratic, sql, textworld"
    assert proc.stderr.strip() == f"reflexion: error: unknown env 'nope'; known: {known}"
    assert "Traceback" not in proc.stderr


def test_an_unwritable_out_folder_is_one_line(tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("keep me")
    argv = ["run", "--env", "quadratic", "--strategy", "single", "--out", str(blocker / "run")]
    assert exit_code(argv) == 2
    err = capsys.readouterr().err
    assert "cannot write the run folder" in err and len(err.strip().splitlines()) == 1
    assert blocker.read_text() == "keep me"


def test_window_only_runs_can_be_inspected_and_export_never_overwrites(
    tmp_path: Path, capsys
) -> None:
    out = tmp_path / "run"
    argv = ["run", "--env", "quadratic", "--strategy", "reflexion-window", "--tasks", "3", "--out"]
    assert main([*argv, str(out), *FAST]) == 0
    capsys.readouterr()
    assert main(["memory", "list", str(out)]) == 0
    listing = capsys.readouterr().out.splitlines()
    remembered = [s for s in RunFolder(out).steps() if s.kind == "remember"]
    assert (
        listing[0] == f"{len(remembered)} reflections in {out / 'window.jsonl'} (reflexion-window)"
    )
    assert main(["memory", "search", str(out), "gradient", "--k", "1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1
    target = out / "results.jsonl"
    before = target.read_bytes()
    assert exit_code(["memory", "export", str(out), "--output", str(target)]) == 2
    assert "cannot write" in capsys.readouterr().err and target.read_bytes() == before


def test_version_and_help_defaults(capsys) -> None:
    from reflexion import __version__

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"reflexion {__version__}"
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "reflections recalled per episode (default 3)" in shown
    assert "most candidates per task for every strategy (default 4)" in shown
    assert "--memory-backend" in shown and "--import MODULE" in shown
    # every role's output limit is listed with its default, the self-tests' and a game's included
    assert "tests 384, act 24, distill 512, propose 768;" in shown and "reflect 192" in shown
    assert "a curator's reply held to a schema gets room for the longest one it admits)" in shown


def test_the_memory_backend_is_chosen_apart_from_the_strategy(tmp_path: Path, capsys) -> None:
    out = tmp_path / "w"
    argv = ["run", "--env", "quadratic", "--strategy", "reflexion", "--memory-backend", "window"]
    assert main([*argv, "--episodes", "3", "--out", str(out), *FAST]) == 0
    assert (out / "window.jsonl").exists() and not (out / "memory").exists()
    listing = capsys.readouterr().out
    assert main(["memory", "list", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"{len(read_window(out))} reflections in ")
    assert main([*argv[:-1], "nope", "--out", str(tmp_path / "n"), *FAST]) == 2
    assert "unknown memory backend 'nope'; known: chroma, window" in capsys.readouterr().err
    assert not (tmp_path / "n").exists() and "reflexion" in listing


def read_window(out: Path) -> list[str]:
    return [line for line in (out / "window.jsonl").read_text().splitlines() if line]


def test_run_takes_one_strategy_and_folders_are_recorded_tidily(tmp_path: Path, capsys) -> None:
    argv = ["run", "--env", "quadratic", "--strategy", "single,reflexion"]
    assert main([*argv, "--out", str(tmp_path / "x")]) == 2
    assert "use compare for several" in capsys.readouterr().err
    store = tmp_path / "store"
    first = ["run", "--env", "quadratic", "--strategy", "reflexion", "--tasks", "1", *FAST]
    assert main([*first, "--memory", f"{store}/", "--out", f"{tmp_path}/./r/"]) == 0
    saved = json.loads((tmp_path / "r" / "config.json").read_text())
    assert (saved["memory"], saved["out"]) == (str(store), str(tmp_path / "r"))
    assert main([*first, "--memory", str(store), "--out", str(tmp_path / "r")]) == 0  # resumes


def test_speculative_decoding_is_for_local_models(tmp_path: Path, capsys) -> None:
    argv = ["run", "--env", "quadratic", "--strategy", "single", "--out", str(tmp_path / "s")]
    assert main([*argv, "--speculative", "fast"]) == 2
    assert "unknown speculative decoding 'fast'" in capsys.readouterr().err
    assert main([*argv, "--speculative", "ngram", "--model", "openai:gpt-4o-mini"]) == 2
    assert "--speculative ngram needs a local model" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_memory_mode_copy_learns_in_the_run_folder_and_leaves_the_store(
    tmp_path: Path, capsys
) -> None:
    from memory.chroma.store import ChromaMemory

    store = tmp_path / "store"
    learn = ["run", "--env", "quadratic", "--strategy", "reflexion", "--tasks", "2", *FAST]
    assert main([*learn, "--memory", str(store), "--out", str(tmp_path / "a")]) == 0
    with ChromaMemory.open(store) as m:
        before = sorted(r.id for r in m.reflections())
    assert before  # the first run learned something into the shared store
    # two more tasks: those have no lessons yet (task scope), so this run learns new ones;
    # the first two start from the copied lessons (a warm start, on purpose)
    again = ["run", "--env", "quadratic", "--strategy", "reflexion", "--tasks", "4", *FAST]
    again += ["--warm-start"]
    copy = [*again, "--memory", str(store), "--memory-mode", "copy", "--out", str(tmp_path / "b")]
    assert main(copy) == 0
    with ChromaMemory.open(store) as m:
        assert sorted(r.id for r in m.reflections()) == before  # the store stayed as it was
    with ChromaMemory.open(tmp_path / "b" / "memory") as m:
        ids = {r.id for r in m.reflections()}
    assert set(before) < ids  # the copy holds the store's lessons and the new run's
    hits = [h for st in RunFolder(tmp_path / "b").steps() if st.kind == "recall"
            for h in st.data["hits"]]  # fmt: skip
    sources = {h["task_id"]: h["source"] for h in hits}
    assert sources["q0"] == sources["q1"] == "this task, another run"  # the copied lessons
    assert sources["q2"] == "this task, this run"  # learned in this run
    assert main(copy) == 0  # a resume copies nothing twice
    capsys.readouterr()
    assert main(["memory", "list", str(tmp_path / "b")]) == 0
    assert len([x for x in capsys.readouterr().out.splitlines() if " | " in x]) == len(ids)
    nothing = [*again, "--memory", str(tmp_path / "empty"), "--memory-mode", "copy"]
    assert main([*nothing, "--out", str(tmp_path / "c")]) == 2
    assert "--memory-mode copy: nothing to copy" in capsys.readouterr().err
    assert main([*again, "--memory-mode", "copy", "--out", str(tmp_path / "d")]) == 2
    assert "needs a store to copy" in capsys.readouterr().err


def test_an_ordered_stream_runs_one_task_at_a_time_and_recalls_earlier_tasks(
    tmp_path: Path,
) -> None:
    out = tmp_path / "s"
    argv = ["compare", "--env", "quadratic", "--strategies", "single,reflexion", "--tasks", "4"]
    argv += ["--order", "stream", "--scope", "global", "--out", str(out), *FAST]
    assert main(argv) == 0
    steps = RunFolder(out).steps()
    order = [s.task_id for s in steps]
    # every step of a task comes before any step of the next one
    assert order == sorted(order, key=["q0", "q1", "q2", "q3"].index)
    first_recalls = [s for s in steps if s.kind == "recall" and s.episode == 1]
    later = [h for s in first_recalls if s.task_id != "q0" for h in s.data["hits"]]
    # at its first episode a later task already recalls the lessons of the tasks before it
    assert later and {h["source"] for h in later} == {"another task, this run"}
    assert all(h["task_id"] < s.task_id for s in first_recalls for h in s.data["hits"])
    assert exit_code([*argv[:-5], "--order", "sideways", "--out", str(tmp_path / "x")]) == 2


def test_memory_of_a_run_without_memory_says_so(tmp_path: Path, capsys) -> None:
    out = tmp_path / "plain"
    argv = ["compare", "--env", "quadratic", "--strategies", "single,self-refine", "--tasks", "1"]
    assert main([*argv, "--out", str(out), *FAST]) == 0
    capsys.readouterr()
    assert main(["memory", "list", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("makes one") and (
        "has no memory: its strategies (single, self-refine) keep no lessons; "
        "a run of reflexion, reflexion-window, exemplars," in err
    )
    assert len(err.splitlines()) == 1 and "chroma.sqlite3" not in err


def test_an_old_run_folder_ranked_by_similarity_and_resumes_only_so(tmp_path: Path, capsys) -> None:
    out = tmp_path / "old"
    argv = ["run", "--env", "quadratic", "--strategy", "reflexion", "--tasks", "1", *FAST]
    assert main([*argv, "--out", str(out)]) == 0
    saved = json.loads((out / "config.json").read_text())
    del saved["rank"]  # as a folder written before --rank existed
    (out / "config.json").write_text(json.dumps(saved))
    capsys.readouterr()
    assert main([*argv, "--out", str(out)]) == 2  # the default ranking would change it
    assert "was run with rank='similarity'" in capsys.readouterr().err
    assert main([*argv, "--rank", "similarity", "--out", str(out)]) == 0
    new = tmp_path / "new"
    assert main([*argv, "--out", str(new)]) == 0
    # the same weights written another way are the same setting
    assert main([*argv, "--rank", "recency=0.2,task=0.25", "--out", str(new)]) == 0
    assert main([*argv, "--rank", "task=nan", "--out", str(tmp_path / "x")]) == 2


def test_memory_mode_copy_leaves_the_window_memory_alone_and_refuses_an_empty_store(
    tmp_path: Path, capsys
) -> None:
    from memory import HashEmbedder
    from memory.chroma.store import ChromaMemory

    store = tmp_path / "store"
    learn = ["run", "--env", "quadratic", "--strategy", "reflexion", "--tasks", "1", *FAST]
    assert main([*learn, "--memory", str(store), "--out", str(tmp_path / "a")]) == 0
    both = ["compare", "--env", "quadratic", "--strategies", "reflexion,reflexion-window"]
    both += ["--tasks", "2", "--memory", str(store), "--memory-mode", "copy", *FAST]
    assert main([*both, "--out", str(tmp_path / "b")]) == 0
    assert (tmp_path / "b" / "window.jsonl").exists() and (tmp_path / "b" / "memory").exists()
    ChromaMemory(tmp_path / "empty", embedder=HashEmbedder()).close()
    capsys.readouterr()
    empty = [*learn, "--memory", str(tmp_path / "empty"), "--memory-mode", "copy"]
    assert main([*empty, "--out", str(tmp_path / "c")]) == 2
    assert "nothing to copy (no reflections in the store at" in capsys.readouterr().err


def help_sections(argv: list[str], capsys) -> dict[str, list[str]]:
    """`--help` of a command: heading -> the flags listed under it."""
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    sections: dict[str, list[str]] = {}
    heading = ""
    for line in capsys.readouterr().out.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            heading = line[:-1]
            sections[heading] = []
        elif line.startswith("  -") and heading:
            sections[heading].append(line.split()[0].rstrip(","))
    return sections


def test_compare_help_lists_every_option_under_its_group(capsys) -> None:
    import dataclasses

    from reflexion.runner.config import GROUPS, RunConfig
    from reflexion.runner.parsers import flag_of

    fields = [f for f in dataclasses.fields(RunConfig) if f.metadata["cli"]]
    assert [f.name for f in fields if f.metadata["group"] not in GROUPS] == []
    sections = help_sections(["compare"], capsys)
    assert [h for h in sections if h in GROUPS] == list(GROUPS)  # in this order
    assert sections["options"] == ["-h"]  # nothing left in the flat list
    for f in fields:
        assert flag_of(f) in sections[f.metadata["group"]], f.name
    assert sections["what to run"][:2] == ["--env", "--strategies"]
    assert "--collection" in sections["memory"] and "--no-progress" in sections["output"]
    assert help_sections(["run"], capsys)["what to run"][:2] == ["--env", "--strategy"]


def test_every_subcommand_ends_its_help_with_an_example_that_parses(capsys) -> None:
    import shlex

    from reflexion.cli.common import EXAMPLES, subcommands
    from reflexion.cli.main import build_parser

    commands = dict(subcommands(build_parser()))
    assert sorted(commands) == sorted(EXAMPLES)  # none without one, none for a lost command
    assert {"run", "compare", "report", "diff", "memory why", "serve"} <= set(commands)
    for words, example in EXAMPLES.items():
        argv = shlex.split(example)[1:]
        assert argv[: len(words.split())] == words.split(), words
        build_parser().parse_args(argv)  # an example that no longer parses exits here
        with pytest.raises(SystemExit):
            main([*words.split(), "--help"])
        assert capsys.readouterr().out.rstrip().endswith(f"example:\n  {example}"), words


def test_a_collection_name_chroma_would_refuse_is_one_line(tmp_path: Path, capsys) -> None:
    argv = ["run", "--env", "quadratic", "--strategy", "reflexion", "--collection", "a b"]
    assert exit_code([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "--collection: expected a collection name" in err and "'a b'" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def test_an_unknown_curator_model_is_one_line_naming_its_option(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    argv = ["compare", "--env", "game24:1", "--strategies", "insights", "--no-progress"]
    argv += ["--model", "smollm2-135m", "--curator-model", "nonsense", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("reflexion: error: unknown --curator-model 'nonsense'")
    assert len(err.splitlines()) == 1 and not out.exists()  # refused before anything is written
