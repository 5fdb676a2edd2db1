"""`reflexion diff RUN_A RUN_B` as a user meets it: each strategy of two runs paired by task with
the comparison's statistics, the tasks that changed, the runtime's work per role; two runs of
different tasks refused in one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import KeywordEnv, scripted
from running import RunConfig, run

from reflexion.cli import main

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--embedder", "hash-64", "--no-progress"]
# k0 wants apple, river and (held out) zebra; k1 cloud, stone and zebra. A stream answers k0
# first, so run A passes k0 and fails k1, run B the other way round, and C passes both.
REPLIES = {
    "a": ["apple river zebra", "cloud"],
    "b": ["apple", "cloud stone zebra"],
    "c": ["apple river zebra", "cloud stone zebra"],
}


def keywords_run(tmp_path: Path, name: str) -> Path:
    config = RunConfig(
        env="keywords",
        strategies=("single",),
        out=str(tmp_path / name),
        episodes=1,
        embedder="hash-64",
        order="stream",
    )
    run(config, model=scripted(REPLIES[name]), env=KeywordEnv())
    return tmp_path / name


def diff(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int | str | None, str, str]:
    capsys.readouterr()
    try:
        code: int | str | None = main(["diff", *argv])
    except SystemExit as stop:
        code = stop.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_diff_pairs_each_strategy_by_task_and_names_the_tasks_that_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, c = keywords_run(tmp_path, "a"), keywords_run(tmp_path, "c")
    code, printed, _ = diff([str(a), str(c)], capsys)
    assert code == 0
    assert printed.startswith(f"A = {a}\nB = {c}\nenv keywords; settings that differ: none\n")
    # the comparison's own cells (pair_rows): +50 points, 1 won, 0 lost, 1 tied, McNemar p 1.0
    row = next(line for line in printed.splitlines() if line.startswith("single "))
    cells = re.split(r"\s{2,}", row)
    assert cells[:4] == ["single", "2", "50.0%", "100.0%"]
    assert cells[4].startswith("+50.0 pts [") and cells[5:9] == ["1", "0", "1", "1.000"]
    assert cells[9].startswith("1.00x [")  # one call of the same size per task in each run
    assert "single: won k1; lost none" in printed


def test_diff_shows_the_runtimes_work_per_role(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = keywords_run(tmp_path, "a"), keywords_run(tmp_path, "b")
    code, printed, _ = diff([str(a), str(b)], capsys)
    assert code == 0
    assert "single: won k1; lost k0" in printed
    work = printed.split("served from its cache:\n")[1].splitlines()
    assert work[0].split()[:4] == ["strategy", "role", "calls", "A"]
    # single asks each task once: 2 calls, 3 output and 10 prompt tokens each (scripted usage)
    assert work[1].split() == ["single", "generate", "2", "2", "6", "6", "20", "20", "0.0%", "0.0%"]
    assert len(work) == 2


def test_work_leaves_out_calls_the_runs_cache_answered_and_counts_cached_prompt_tokens() -> None:
    from reflexion.core.records import Step
    from reflexion.report.runs_diff import work_by_role, work_rows

    def call(kind: str, tokens: int, **data: object) -> Step:
        return Step("s", "R", "reflexion", "t", 0, 1, kind, (), "", tokens, 5, 0.1, dict(data))

    steps = [
        call("generate", 100, cached_tokens=80),
        call("generate", 100, reused=True),  # the run's cache answered: no runtime work
        call("reflect", 50),
        Step("s", "R", "reflexion", "t", 0, 1, "score", data={"value": 1.0}),  # not a call
    ]
    work = work_by_role(steps, "reflexion")
    assert sorted(work) == ["generate", "reflect"]
    assert (work["generate"].calls, work["generate"].processed) == (1, 20)
    [row] = work_rows([(work["generate"], work["reflect"])])
    assert row[2:] == ("1", "1", "5", "5", "20", "50", "80.0%", "0.0%")


def test_two_runs_of_different_tasks_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = keywords_run(tmp_path, "a")
    quad = tmp_path / "quad"
    argv = ["run", "--env", "quadratic", "--strategy", "single", "--tasks", "2"]
    assert main([*argv, "--out", str(quad), "--embedder", "hash-64", "--no-progress"]) == 0
    code, printed, err = diff([str(a), str(quad)], capsys)
    assert code == 2 and printed == ""
    assert err == f"reflexion: error: {a} ran keywords and {quad} ran quadratic: different tasks\n"
    more = tmp_path / "quad3"
    argv = ["run", "--env", "quadratic", "--strategy", "single", "--tasks", "3"]
    assert main([*argv, "--out", str(more), "--embedder", "hash-64", "--no-progress"]) == 0
    code, printed, err = diff([str(quad), str(more)], capsys)  # the same env, more tasks
    assert code == 2 and printed == "" and len(err.splitlines()) == 1
    assert err.endswith(
        "ran 2 tasks and " + f"{more} ran 3; 1 is not in both (e.g. q2): different tasks\n"
    )
    code, _, err = diff([str(a), str(tmp_path / "nothing")], capsys)
    assert code == 2 and err.endswith("nothing does not exist\n") and len(err.splitlines()) == 1
    code, _, err = diff([str(a)], capsys)
    assert code == 2 and "RUN_B" in err and len(err.splitlines()) == 1


def test_diff_says_which_run_was_not_made_in_reproducible_decoding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--env", "quadratic", "--strategy", "single", "--tasks", "2", *FAST]
    made = {}
    for name, extra in (("on", []), ("off", ["--no-reproducible"]), ("old", [])):
        made[name] = tmp_path / name
        assert main([*argv, *extra, "--out", str(made[name])]) == 0
    saved = {name: json.loads((f / "config.json").read_text()) for name, f in made.items()}
    assert saved["on"]["reproducible"] is True and saved["off"]["reproducible"] is False
    # a folder from a version before the setting: its config.json has no such key
    del saved["old"]["reproducible"]
    (made["old"] / "config.json").write_text(json.dumps(saved["old"]))
    note = "not made in reproducible decoding"
    code, printed, _ = diff([str(made["on"]), str(made["on"])], capsys)
    assert code == 0 and note not in printed
    code, printed, _ = diff([str(made["on"]), str(made["off"])], capsys)
    assert code == 0 and f"\nrun B {note} (--no-reproducible" in printed
    assert "settings that differ: reproducible\n" in printed
    code, printed, _ = diff([str(made["old"]), str(made["off"])], capsys)
    assert code == 0 and f"\nrun A and run B {note}" in printed
    # resuming the old folder keeps its mode: the default is refused, --no-reproducible resumes
    assert main([*argv, "--out", str(made["old"])]) == 2
    assert "reproducible=False, not True" in capsys.readouterr().err
    assert main([*argv, "--no-reproducible", "--out", str(made["old"])]) == 0


def test_the_diff_agrees_with_the_paired_test_on_the_same_verdicts(tmp_path: Path) -> None:
    from reflexion.report import compare_paired, diff_runs, run_results

    a, b = keywords_run(tmp_path, "a"), keywords_run(tmp_path, "b")
    [single] = diff_runs(a, b).strategies
    assert (single.pair.won, single.pair.lost, single.pair.tied) == (1, 1, 0)
    assert (single.won, single.lost) == (("k1",), ("k0",))
    verdicts = [{r.task_id: r.final_passed for r in run_results(f)} for f in (a, b)]
    paired = compare_paired(*verdicts)
    assert single.pair.p_value == paired.p_value == 1.0
    assert single.pair.difference == paired.difference == 0.0
    assert (single.pass_a, single.pass_b) == (paired.rate_a, paired.rate_b) == (0.5, 0.5)
