"""`reflexion transfer` (and scripts/transfer.py, its entry point): the split, the frozen part-B
runs (on another model too), what it prints, and its refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import CountingModel, scripted
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from test_report_stats import trial

from memory import ChromaMemory
from reflexion.cli import main
from reflexion.core.errors import UsageError
from reflexion.core.records import Task, TaskResult
from reflexion.report.paired import paired_scores
from reflexion.report.stream import by_quarter, final_score
from reflexion.runner import transfer as protocol
from reflexion.runner.transfer import split_tasks

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "transfer.py"
KEYWORDS = "python:conftest:KeywordEnv"  # k0 (apple, river), then k1 (cloud, stone)
FAST = ["--embedder", "hash-64", "--episodes", "2"]

# The models the runs loaded (by --model python:test_transfer:...), in the order they were made:
# the learner for part A, then a tester for the warm part-B run and one for the cold one.
MADE: dict[str, list[CountingModel]] = {"learner": [], "part_b": [], "weaker": []}
RULE = "Use every listed word."
LEARNER, PART_B = "python:test_transfer:learner", "python:test_transfer:part_b"
WEAKER = "python:test_transfer:weaker"


def learner() -> CountingModel:
    """Fails k0 once, then passes, then adds a rule to the insights list."""
    add = {"op": "add", "text": RULE}
    model = scripted(["apple", "apple river", json.dumps({"reason": "", "operations": [add]})])
    MADE["learner"].append(model)
    return model


def part_b() -> CountingModel:
    """Fails k1 once, then passes, then asks to change the list (a frozen run must not)."""
    edits = [{"op": "upvote", "rule": 1}, {"op": "add", "text": "Another rule."}]
    model = scripted(["cloud", "cloud stone", json.dumps({"reason": "", "operations": edits})])
    MADE["part_b"].append(model)
    return model


class NeedsTheRule(CountingModel):
    """Passes k1 (its words and the hidden one) only when the learned rule is in its prompt."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.prompts.append(list(messages))
        text = "cloud stone zebra" if any(RULE in str(m.content) for m in messages) else "cloud"
        usage = {"input_tokens": 10, "output_tokens": 3, "total_tokens": 13}
        return ChatResult(
            generations=[ChatGeneration(message=AIMessage(text, usage_metadata=usage))]
        )


def weaker() -> CountingModel:
    """A part-B model that solves k1 only with the learned rule (a model that needs the memory)."""
    model = NeedsTheRule(messages=iter(()), prompts=[])
    MADE["weaker"].append(model)
    return model


def transfer(argv: list[str]) -> int | str | None:
    """`reflexion transfer ARGV` in this process: its exit code (argparse's own refusals exit)."""
    try:
        return main(["transfer", *argv])
    except SystemExit as stop:
        return stop.code


def lessons(store: Path) -> list[tuple[str, str, str, int]]:
    with ChromaMemory.open(store) as memory:
        return sorted((r.id, r.kind, r.text, r.votes) for r in memory.reflections())


def prompt(model: CountingModel, n: int) -> str:
    return "\n".join(str(m.content) for m in model.prompts[n])


def test_part_b_is_frozen_reads_the_learned_rule_and_runs_on_the_test_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for made in MADE.values():
        made.clear()
    out, seen = tmp_path / "tr", {}
    frozen_runs = protocol.frozen_part

    def around(*args: Any) -> None:  # the learned store before and after part B
        seen["before"] = lessons(out / "store")
        frozen_runs(*args)
        seen["after"] = lessons(out / "store")

    monkeypatch.setattr(protocol, "frozen_part", around)
    argv = ["--env", KEYWORDS, "--strategy", "insights", "--out", str(out), *FAST]
    assert transfer([*argv, "--model", LEARNER, "--test-model", PART_B]) == 0
    printed = capsys.readouterr().out
    assert "split parity (even positions" in printed and "part A 1 tasks, part B 1" in printed
    assert f"part A learned by {LEARNER}" in printed
    assert f"part B run by {PART_B} twice, with FROZEN memory" in printed
    # the rule, and k0's success (kept as insights' successes wait for a chunk of 8)
    assert "the learned memory holds 2 lessons (exemplar 1, rule 1)" in printed
    [(_, kind, text, votes)] = [lesson for lesson in seen["before"] if lesson[1] == "rule"]
    assert (kind, text, votes) == ("rule", RULE, 2) and seen["after"] == seen["before"]
    [_], [warm, cold] = MADE["learner"], MADE["part_b"]
    assert f"1. {RULE}" in prompt(warm, 0) and RULE not in prompt(cold, 0)
    assert "cloud" in prompt(warm, 0) and "apple" not in prompt(warm, 0)  # part B is k1 alone
    for part, model in (("learn", LEARNER), ("with", PART_B), ("empty", PART_B)):
        config = json.loads((out / part / "config.json").read_text())
        assert config["model"] == model and config["frozen_memory"] == (part != "learn")
    steps = [json.loads(s) for s in (out / "with" / "trace.jsonl").read_text().splitlines()]
    kinds = [s["kind"] for s in steps]  # frozen: no curator is asked, since it could change nothing
    assert "distill" not in kinds and "revised" not in kinds and kinds.count("not learned") == 1
    assert lessons(out / "empty" / "memory") == []  # the cold run is frozen too


def test_the_default_strategy_learns_on_the_first_n_and_tests_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tr"
    assert transfer(["--env", "quadratic", "--split", "first-3", "--out", str(out), *FAST]) == 0
    printed = capsys.readouterr().out
    assert "with reflexion: split first-3 (the first 3 tasks learn" in printed
    assert "part A 3 tasks, part B 5" in printed and "the env's scripted actor" in printed
    kept = lessons(out / "store")
    assert kept and f"the learned memory holds {len(kept)} lessons (reflection {len(kept)})" in (
        printed
    )
    assert "learned memory vs empty memory      5" in printed
    ids = json.loads((out / "split.json").read_text())
    assert ids == {"learn": ["q0", "q1", "q2"], "test": ["q3", "q4", "q5", "q6", "q7"]}


def test_the_split_is_by_position_in_the_envs_list() -> None:
    tasks = [Task(i, "") for i in ("b", "a", "d", "c", "e")]
    split = split_tasks
    parity = split(tasks, "parity")
    assert [t.id for t in parity.learn] == ["b", "d", "e"] and [t.id for t in parity.test] == [
        "a",
        "c",
    ]
    first = split(tasks, "first-2")
    assert [t.id for t in first.learn] == ["b", "a"] and len(first.test) == 3
    for bad in ("first-0", "first-5", "odd", "first-x", "first-2 "):
        with pytest.raises(UsageError):
            split(tasks, bad)


def test_several_part_b_models_each_get_a_warm_and_a_cold_run_from_one_learned_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for made in MADE.values():
        made.clear()
    out = tmp_path / "tr"
    argv = ["--env", KEYWORDS, "--strategy", "insights", "--out", str(out), *FAST]
    assert transfer([*argv, "--model", LEARNER, "--test-model", PART_B]) == 0
    capsys.readouterr()
    learned = lessons(out / "store")
    assert transfer([*argv, "--model", LEARNER, "--test-model", f"{PART_B},{WEAKER}"]) == 0
    printed = capsys.readouterr().out
    assert f"part B run by {PART_B} and by {WEAKER} twice" in printed
    slug = WEAKER.replace(":", "-")
    for part, model in (("with", PART_B), ("empty", PART_B), (f"with.{slug}", WEAKER)):
        config = json.loads((out / part / "config.json").read_text())
        assert config["model"] == model and config["frozen_memory"]
    assert lessons(out / "store") == learned  # nothing learned again, nothing changed by part B
    # the finished folders of the first call are not run again: no model is even made for them
    assert len(MADE["learner"]) == 1 and len(MADE["part_b"]) == 2
    warm, cold = MADE["weaker"]
    assert f"1. {RULE}" in prompt(warm, 0) and RULE not in prompt(cold, 0)
    weaker_table = printed.split(f"part B run by {WEAKER}:")[1]
    assert "learned memory vs empty memory      1" in weaker_table
    row = next(line for line in weaker_table.splitlines() if line.startswith("learned memory vs"))
    assert "+100.0 pts" in row  # the weaker model solved k1 only with the learned rule


REFUSED = [
    (["--test-model", "a,a"], "--test-model needs distinct model names, comma-separated"),
    (["--test-model", "a,"], "--test-model needs distinct model names"),
    (["--learn", "0"], "--split first-N (or --learn N) needs N between 1 and 7, not 0"),
    (["--learn", "99"], "needs N between 1 and 7, not 99"),
    (["--split", "first-8"], "needs N between 1 and 7, not 8"),
    (["--split", "odd"], "--split must be parity or first-N (e.g. first-20), not 'odd'"),
    (["--split", "parity", "--learn", "3"], "give --split or --learn, not both"),
    (["--strategy", "single"], "--strategy must keep lessons in the store: one of reflexion, "),
    (["--strategy", "reflexion-window"], "--strategy must keep lessons in the store"),
    (["--episodes", "0"], "--episodes must be at least 1"),
    (["--episodes", "x"], "argument --episodes: invalid int value: 'x'"),
    (["--env", "nosuch"], "unknown env 'nosuch'"),
]


@pytest.mark.parametrize(("args", "said"), REFUSED)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = transfer(["--env", "quadratic", *args, "--out", str(tmp_path / "t")])
    err = capsys.readouterr().err
    assert code == 2 and said in err
    assert err.startswith(("reflexion: error: ", "reflexion transfer: error: "))
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t").exists()


def test_a_resume_with_another_split_is_refused_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t"
    out.mkdir()
    earlier = json.dumps({"learn": ["q0"], "test": ["q1"]})
    (out / "split.json").write_text(earlier)
    code = transfer(["--env", "quadratic", "--out", str(out), *FAST])
    assert code == 2 and "holds runs of another split" in capsys.readouterr().err
    assert (out / "split.json").read_text() == earlier and list(out.iterdir()) == [
        out / "split.json"
    ]


def test_the_script_itself_refuses_in_one_line(tmp_path: Path) -> None:
    command = [sys.executable, str(SCRIPT), "--env", "quadratic", "--split", "first-99"]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "t")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "reflexion: error: --split first-N (or --learn N) needs N between 1 and 7, not 99"
    ]


def scored(task: str, score: float, passed: bool = False) -> TaskResult:
    """A one-attempt trial whose last attempt has this visible score."""
    result = trial(task, [(passed, 100)], strategy="reflexion")
    return replace(result, curve=(replace(result.curve[0], score=score),))


def test_paired_visible_score_counts_higher_and_lower() -> None:
    empty = [scored("t0", 0.5), scored("t1", 0.75), scored("t2", 0.5)]
    learned = [scored("t0", 0.75), scored("t1", 0.5), scored("t2", 1.0)]
    sides = [{r.task_id: final_score(r) for r in rs} for rs in (empty, learned)]
    out = paired_scores(sides[0], sides[1], ("empty", "learned"))
    assert "empty 0.583, learned 0.750" in out
    assert "learned - empty +0.167" in out
    assert "higher on 2, lower on 1, same on 0" in out


def test_positions_are_quarters_of_the_stream() -> None:
    order = [f"t{i}" for i in range(8)]
    learned = [scored(t, 0.0, passed=i >= 6) for i, t in enumerate(order)]
    passed = lambda r: float(r.final_passed)  # noqa: E731
    lines = by_quarter(order, {"learned memory": learned}, "final success", passed).splitlines()
    assert lines[1].split() == ["memory", "Q1", "(2)", "Q2", "(2)", "Q3", "(2)", "Q4", "(2)"]
    assert lines[2].split() == ["learned", "memory", "0.00", "0.00", "0.00", "1.00"]


def test_the_command_runs_a_transfer_end_to_end_and_refuses_bad_input_in_one_line(
    tmp_path: Path,
) -> None:
    """`reflexion transfer` in its own process, on the drill: the plan, the three runs with
    their reports, the paired table; then a split that cannot be made, refused before a run."""
    out = tmp_path / "tr"
    command = [sys.executable, "-m", "reflexion", "transfer", "--env", "quadratic"]
    argv = [*command, "--split", "first-3", "--out", str(out), *FAST]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("transfer on quadratic with reflexion: split first-3 (")
    assert "part A 3 tasks, part B 5" in done.stdout
    row = next(x for x in done.stdout.splitlines() if x.startswith("learned memory vs empty"))
    assert row.split()[5] == "5"  # the 5 tasks of part B, paired
    assert "final visible score by position in the stream" in done.stdout
    for part in ("learn", "with", "empty"):
        assert (out / part / "report.md").is_file() and (out / part / "comparison.json").is_file()
    kept = lessons(out / "store")
    assert kept and f"the learned memory holds {len(kept)} lessons" in done.stdout
    bad = subprocess.run(
        [*command, "--learn", "9", "--out", str(tmp_path / "t")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().splitlines() == [
        "reflexion: error: --split first-N (or --learn N) needs N between 1 and 7, not 9"
    ]
    assert not (tmp_path / "t").exists()
