"""`reflexion diff RUN:STRATEGY RUN:STRATEGY ...`: arms from different run folders, paired on
the tasks they all finished, with successes by a spec field, by block of the stream and by the
form of the answers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from envs import make_env
from reflexion.core.records import Point, Step, TaskResult

ROOT = Path(__file__).resolve().parents[1]


def folder(path: Path, strategy: str, passed: dict[str, bool], order: list[str]) -> Path:
    path.mkdir()
    config = {"env": "sql:12", "strategies": [strategy], "order": "stream", "stream_order": order}
    (path / "config.json").write_text(json.dumps(config))
    rows = []
    for task_id, ok in passed.items():
        point = Point(1, float(ok), float(ok), ok, ok, tokens=1050, calls=1)
        result = TaskResult(
            run_id=path.name, env="sql:12", task_id=task_id, strategy=strategy, seed=0,
            best_candidate="SELECT 1", best_score=float(ok), best_episode=1, final_passed=ok,
            any_passed=ok, attempts=1, llm_calls=1, input_tokens=1000, output_tokens=50,
            wall_s=1.0, curve=(point,),
        )  # fmt: skip
        rows.append(json.dumps(result.to_dict()))
    (path / "results.jsonl").write_text("\n".join(rows) + "\n")
    return path


def diff_arms(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "reflexion", "diff", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_arms_from_two_folders_are_paired_on_the_tasks_both_finished(tmp_path: Path) -> None:
    tasks = [t.id for t in make_env("sql:12").tasks()]
    base = {t: i < 3 for i, t in enumerate(tasks)}  # solves the first 3 of 12
    after = {t: i < 3 or i in (5, 6, 7, 8) for i, t in enumerate(tasks[:10])}  # 10 finished
    a = folder(tmp_path / "a", "single", base, tasks)
    b = folder(tmp_path / "b", "exemplars", after, tasks)
    done = diff_arms(f"{a}:single", f"{b}:exemplars", "--by", "difficulty", "--blocks", "2")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("10 tasks finished by every arm")
    pair_line = next(line for line in out.splitlines() if line.startswith("exemplars vs single"))
    assert pair_line.split()[3:5] == ["10", "+40.0"]  # 10 tasks, 4 won, 0 lost
    cells = pair_line.split("]")[1].split()
    assert cells[:3] == ["4", "0", "6"]
    spec = {t.id: t.spec["difficulty"] for t in make_env("sql:12").tasks()}
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:1] == ["arm"])
    levels = lines[header].split()[1:]
    row = lines[header + 2].split()  # the arms in order: single, then exemplars
    assert row[0] == "exemplars" and len(row) == len(levels) + 1
    for level, cell in zip(levels, row[1:], strict=True):
        mine = [t for t in tasks[:10] if spec[t] == level]
        assert cell == f"{sum(after[t] for t in mine)}/{len(mine)}"
    blocks = next(line for line in out.splitlines() if line.startswith("single") and "3/5" in line)
    assert blocks.split()[1:] == ["3/5", "0/5"]


def test_a_list_field_counts_a_task_under_each_of_its_items(tmp_path: Path) -> None:
    """`--by needs`: a question that needs cents and a join is counted under both."""
    env = make_env("sql:12")
    tasks = [t.id for t in env.tasks()]
    needs = {t.id: t.spec["needs"] for t in env.tasks()}
    passed = {t: i % 2 == 0 for i, t in enumerate(tasks)}
    a = folder(tmp_path / "a", "single", {t: False for t in tasks}, tasks)
    b = folder(tmp_path / "b", "exemplars", passed, tasks)
    done = diff_arms(f"{a}:single", f"{b}:exemplars", "--by", "needs")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:1] == ["arm"])
    items = lines[header].split()[1:]
    assert items == sorted({n for ns in needs.values() for n in ns}) and "[" not in lines[header]
    row = lines[header + 2].split()
    for item, cell in zip(items, row[1:], strict=True):
        mine = [t for t in tasks if item in needs[t]]
        assert cell == f"{sum(passed[t] for t in mine)}/{len(mine)}"


def test_forms_counts_answers_that_reason_around_their_query(tmp_path: Path) -> None:
    tasks = [t.id for t in make_env("sql:12").tasks()]
    a = folder(tmp_path / "a", "single", {t: i < 4 for i, t in enumerate(tasks)}, tasks)
    b = folder(tmp_path / "b", "exemplars", {t: i < 6 for i, t in enumerate(tasks)}, tasks)
    rows = [json.loads(line) for line in (a / "results.jsonl").read_text().splitlines()]
    for i, row in enumerate(rows):  # the first 3 answers of single reason in 20 words
        words = " ".join(["because"] * 20) if i < 3 else "bare"
        row["best_candidate"] = f"{words}\n```sql\nSELECT 1 -- {' '.join(['x'] * 30)}\n```"
    (a / "results.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    done = diff_arms(f"{a}:single", f"{b}:exemplars", "--forms", "15")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2].split() == ["single", "3/3", "1/9", "50"]  # right, reasoned and bare
    assert lines[-1].split() == ["exemplars", "0/0", "6/12", "50"]


def test_a_strategy_missing_from_a_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    tasks = [t.id for t in make_env("sql:12").tasks()]
    a = folder(tmp_path / "a", "single", {t: True for t in tasks}, tasks)
    done = diff_arms(f"{a}:single", f"{a}:bank")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [f"reflexion: error: {a}: no finished bank trial"]
    same = diff_arms(f"{a}:single", f"{a}:single")
    assert same.returncode == 2 and "add =LABEL" in same.stderr


def column(out: str, arm: str, name: str) -> str:
    """A cell of the arms' table, found by its header (columns are 2 or more spaces apart)."""
    lines = out.splitlines()
    header = re.split(r"\s{2,}", next(line for line in lines if line.startswith("strategy ")))
    cells = re.split(r"\s{2,}", next(line for line in lines if line.startswith(f"{arm} ")))
    return cells[next(i for i, h in enumerate(header) if h.split()[0] == name)].split()[0]


def test_at_1_cuts_a_strategy_to_its_first_answer(tmp_path: Path) -> None:
    """resample@1: best-of-3 read as the single shot it began with: verdict, answer and cost."""
    tasks = [t.id for t in make_env("sql:12").tasks()]
    b = folder(tmp_path / "b", "resample", {t: i < 6 for i, t in enumerate(tasks)}, tasks)
    rows, steps = [], []
    for i, line in enumerate((b / "results.jsonl").read_text().splitlines()):
        row = json.loads(line)  # solved by the first answer for tasks 0-1, by the third for 2-5
        first = Point(1, float(i < 2), float(i < 2), i < 2, i < 2, tokens=1050, calls=1)
        later = Point(3, row["best_score"], row["best_score"], i < 6, i < 6, tokens=3150, calls=3)
        row.update(curve=[first.to_dict(), later.to_dict()], input_tokens=3000, output_tokens=150)
        row["best_candidate"] = " ".join(["because"] * 20) + "\n```sql\nSELECT 2\n```"
        rows.append(json.dumps(row))
        step = Step(f"s{i}", "b", "resample", row["task_id"], 0, 1, "generate", output="SELECT 1")
        cost = {"input_tokens": 1000, "output_tokens": 50, "latency_s": 0.25}
        steps.append(json.dumps({**step.to_dict(), **cost}))
    (b / "results.jsonl").write_text("\n".join(rows) + "\n")
    (b / "trace.jsonl").write_text("\n".join(steps) + "\n")
    done = diff_arms(f"{b}:resample@1=first", f"{b}:resample", "--forms", "15")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert column(done.stdout, "first", "final") == "16.7%"  # 2 of 12 on the first answer
    assert column(done.stdout, "first", "wall") == "3.00"  # 12 first calls of 0.25 s each
    assert column(done.stdout, "resample", "wall") == "12.00"  # 12 trials of 1 s
    pair_line = next(line for line in lines if line.startswith("resample vs first"))
    assert "+33.3 pts" in pair_line and pair_line.split("]")[1].split()[:3] == ["4", "0", "8"]
    assert "3.00x" in pair_line  # 3,150 tokens a task against the first answer's 1,050
    # the first answer's own text is what --forms reads: bare, not the later reasoned best
    assert lines[-2].split()[:3] == ["first", "0/0", "2/12"]
    assert lines[-1].split()[:3] == ["resample", "6/12", "0/0"]
    (b / "trace.jsonl").write_text("")
    gone = diff_arms(f"{b}:resample@1", f"{b}:resample")
    assert gone.returncode == 2 and "with its first answer in trace.jsonl" in gone.stderr
    for bad, says in (("resample@2", "only @1"), ("@1", "RUN:STRATEGY@1"), ("x=y@1", "before")):
        done = diff_arms(f"{b}:{bad}", f"{b}:resample")
        assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr


def test_a_reused_first_answer_takes_the_time_of_the_call_that_made_it(tmp_path: Path) -> None:
    """The greedy first answer of a second strategy comes from the run's cache (latency 0)."""
    tasks = [t.id for t in make_env("sql:12").tasks()]
    b = folder(tmp_path / "b", "resample", {t: True for t in tasks[:2]}, tasks)
    rows = (b / "results.jsonl").read_text().splitlines()
    copies = [json.dumps({**json.loads(r), "strategy": "exemplars"}) for r in rows]
    (b / "results.jsonl").write_text("\n".join(rows + copies) + "\n")
    steps = []
    for i, task_id in enumerate(tasks[:2]):
        for strategy, latency, reused in (("resample", 4.0, False), ("exemplars", 0.0, True)):
            step = Step(f"{strategy}{i}", "b", strategy, task_id, 0, 1, "generate")
            steps.append({**step.to_dict(), "latency_s": latency, "data": {"reused": reused}})
    (b / "trace.jsonl").write_text("\n".join(json.dumps(s) for s in steps) + "\n")
    done = diff_arms(f"{b}:resample@1", f"{b}:exemplars@1")
    assert done.returncode == 0, done.stderr
    assert column(done.stdout, "exemplars@1", "wall") == "8.00"  # 2 answers of 4 s, not 0


RESULTS = ROOT / "docs" / "results"
PAGE = RESULTS / "2026-11-29-sql-stream-insights-final.md"


def test_kept_folders_give_the_published_table_of_a_results_page() -> None:
    """The page's table, from the folders kept beside the pages (gzipped JSONL read as it is):
    S:single R:insights A:resample@1=single-b --by difficulty --blocks 4 --forms 15."""
    arms = [
        f"{RESULTS / '2026-11-27-sql-stream-cheatsheet'}:single",
        f"{RESULTS / '2026-11-29-sql-stream-insights-final'}:insights",
        f"{RESULTS / '2026-11-27-sql-three-candidates'}:resample@1=single-b",
    ]
    done = diff_arms(*arms, "--by", "difficulty", "--blocks", "4", "--forms", "15")
    assert done.returncode == 0, done.stderr
    results = PAGE.read_text(encoding="utf-8").split("## Results", 1)[1]
    published = results.split("```\n", 2)[1]
    assert published.startswith("159 tasks finished by every arm\n")
    assert done.stdout == published


def test_arm_options_need_arms_and_arms_need_a_strategy_each(tmp_path: Path) -> None:
    tasks = [t.id for t in make_env("sql:12").tasks()]
    a = folder(tmp_path / "a", "single", {t: True for t in tasks}, tasks)
    b = folder(tmp_path / "b", "single", {t: False for t in tasks}, tasks)
    refused = {
        ("--by", "difficulty"): "--by is for arms (RUN:STRATEGY), not two run folders",
        ("--blocks", "2", "--forms", "9"): "--blocks and --forms are for arms (RUN:STRATEGY), not "
        "two run folders",
        (str(tmp_path),): "give two run folders (RUN_A RUN_B), or arms RUN:STRATEGY: got 3 folders",
    }
    for extra, says in refused.items():
        done = diff_arms(str(a), str(b), *extra)
        assert done.returncode == 2 and "Traceback" not in done.stderr, extra
        assert done.stderr.strip().splitlines() == [f"reflexion: error: {says}"]
    for argv, says in (
        ([f"{a}:single"], "give at least two arms"),
        ([f"{a}:single", str(b)], "an arm is RUN:STRATEGY, RUN:STRATEGY@1 or either with =LABEL"),
    ):
        done = diff_arms(*argv)
        assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr
    # two plain folders are still the strategy-by-strategy diff
    done = diff_arms(str(a), str(b))
    assert done.returncode == 0 and done.stdout.startswith(f"A = {a}\nB = {b}\n")
