"""A rerun of the same tasks on the same store (`--memory DIR`), for every kind of lesson: by
default a task recalls nothing that the earlier run wrote from it (leave-one-task-out), so a
deterministic model gives the earlier run's results again; `warm_start` brings those lessons back.

The scripted model knows a task's answer only when the answer is in its prompt. The visible
feedback of a miss states the answer (as the SQL check quotes "expected 2 rows"), so every lesson
written after a miss carries it: a reflection, a rule, the sheet, an item. Exemplars and skills
keep a success, which also holds the answer. Without one, the model answers right by chance on
3 tasks in 10 (a hash of the task).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import SECRET
from prompt_model import PromptModel
from running import RunConfig, run

from envs.sandbox import run_python
from reflexion.core.records import Score, Task, TaskResult
from reflexion.core.runfolder import RunFolder

TASKS = 12
ASKED = re.compile(r"the code word for item ([0-9a-f]{6})\.")
PROGRAM = re.compile(r"```python\n(.*)\n```", re.DOTALL)
TOLD = re.compile(r"the answer is ([0-9a-f]{6})")
# design -> (the kind it recalls, episodes): reflexion needs a second episode to use a lesson
DESIGNS = {
    "reflexion": ("reflection", 2),
    "exemplars": ("exemplar", 1),
    "reflexion+insights": ("rule", 2),  # a rule compares a miss with the task's success
    "cheatsheet": ("cheatsheet", 1),
    "bank": ("item", 1),
    "skills": ("skill", 1),
}


def answer_of(word: str) -> str:
    return word[::-1]


class AnswerEnv:
    """Reply with an item's code word; the right reply is the word reversed, and a miss's
    visible feedback says so."""

    name = "answers"
    programs = False

    def __init__(self) -> None:
        words = [hashlib.sha1(str(i).encode()).hexdigest()[:6] for i in range(TASKS)]
        prompt = "Reply with the code word for item {}."
        self._tasks = [Task(f"a{i:02}", prompt.format(w), {"word": w}) for i, w in enumerate(words)]

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def score(self, task: Task, candidate: str) -> Score:
        right = answer_of(task.spec["word"])
        program = PROGRAM.fullmatch(candidate.strip())  # a skill is checked as a program alone
        if program:
            candidate = run_python(program[1], timeout_s=10).stdout
        ok = candidate.strip().splitlines()[-1:] == [right]
        return Score(float(ok), ok, "right" if ok else f"wrong: the answer is {right}")

    def evaluate(self, task: Task, candidate: str) -> Score:
        passed = self.score(task, candidate).solved
        return Score(float(passed), passed, f"{SECRET}: checked")


def reply_to(prompt: str) -> str:
    """The scripted model: right when the answer is in the prompt, else by chance on 3 tasks in
    10; every lesson it writes states the answers that the feedback in its prompt stated."""
    told = TOLD.findall(prompt)
    lesson = f"Item answers: {', '.join(told)}." if told else "Answer with the code word."
    if "Reply with a JSON object" in prompt:
        if "Write at most 3 notes" in prompt:
            item = {"title": "The answers", "when": "always", "do": lesson}
            return json.dumps({"reason": "what the check said", "items": [item]})
        add = {"op": "add", "text": lesson}
        return json.dumps({"reason": "what the check said", "operations": [add]})
    if "concrete plan" in prompt:  # a reflection
        return lesson
    words = ASKED.findall(prompt)
    word = words[-1] if words else ""
    by_chance = int(hashlib.sha256(word.encode()).hexdigest(), 16) % 10 < 3
    answer = answer_of(word) if answer_of(word) in prompt or by_chance else word
    return f"```python\nprint({answer!r})\n```\n{answer}"


def rerun(store: Path, out: Path, design: str, **more: Any) -> list[TaskResult]:
    _, episodes = DESIGNS[design]
    config = RunConfig(
        env="answers",
        strategies=(design,),
        out=str(out),
        memory=str(store),
        embedder="hash-64",
        order="stream",
        episodes=episodes,
        **more,
    )
    return run(config, model=PromptModel(answer=reply_to), env=AnswerEnv())


def recalled_from_own_task(out: Path, *other_runs: str) -> list[str]:
    """The ids of lessons that `out`'s recalls showed a task, written on that task by one of
    `other_runs`."""
    return [
        hit["id"]
        for step in RunFolder(out).steps()
        if step.kind == "recall"
        for hit in step.data.get("hits", [])
        if hit["run_id"] in other_runs and hit["task_id"] == step.task_id
    ]


def outcomes(results: list[TaskResult]) -> dict[str, tuple[bool, int]]:
    return {r.task_id: (r.final_passed, r.attempts) for r in results}


def first_passes(results: list[TaskResult]) -> int:
    return sum(r.curve[0].passed for r in results)


def run_id(out: Path) -> str:
    return str(json.loads((out / "config.json").read_text())["run_id"])


@pytest.mark.parametrize("design", DESIGNS)
def test_a_rerun_on_the_same_store_recalls_nothing_of_its_own_task(
    tmp_path: Path, design: str
) -> None:
    store = tmp_path / "store"
    first = rerun(store, tmp_path / "A", design)
    again = rerun(store, tmp_path / "B", design)
    a = run_id(tmp_path / "A")
    assert recalled_from_own_task(tmp_path / "B", a) == []
    assert outcomes(again) == outcomes(first)  # the model is deterministic
    kind, _ = DESIGNS[design]
    left = [
        entry
        for step in RunFolder(tmp_path / "B").steps()
        if step.kind == "recall"
        for entry in step.data.get("same_task_left_out", [])
    ]
    # the trace says which lessons the rule kept out, and why
    assert left and all(e["run_id"] == a and "leave-one-task-out" in e["why"] for e in left)
    warm = rerun(store, tmp_path / "C", design, warm_start=True)
    earlier = (a, run_id(tmp_path / "B"))  # the newest sheet is the second run's
    assert recalled_from_own_task(tmp_path / "C", *earlier), f"{kind}: the opt-in brings none"
    config = json.loads((tmp_path / "C" / "config.json").read_text())
    assert config["warm_start"] is True
    if kind not in ("exemplar", "skill"):  # a lesson from a miss holds the answer: more pass
        assert first_passes(warm) > first_passes(first)


def test_lessons_rewritten_on_a_task_are_left_out_for_it(tmp_path: Path) -> None:
    """The sheet of the first run was written on its first task and rewritten on each later
    one, so no task of the rerun may read it."""
    store = tmp_path / "store"
    rerun(store, tmp_path / "A", "cheatsheet")
    rerun(store, tmp_path / "B", "cheatsheet")
    a = run_id(tmp_path / "A")
    shown = [
        hit
        for step in RunFolder(tmp_path / "B").steps()
        if step.kind == "recall" and step.data.get("board")
        for hit in step.data["hits"]
    ]
    assert shown and all(hit["run_id"] != a for hit in shown)


def test_the_drill_rerun_on_a_shared_store_says_what_it_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The user's repro: the same `compare` twice on one store gave reflexion +37.5 points the
    second time. Now the second run says what it leaves out and matches the first; the opt-in
    warns, and `memory why` names the rule."""
    from reflexion.cli import main

    def compare(out: str, *more: str) -> str:
        args = ["compare", "--env", "quadratic", "--strategies", "reflexion", "--episodes", "4"]
        args += ["--memory", str(tmp_path / "S"), "--out", str(tmp_path / out)]
        assert main([*args, "--embedder", "hash-64", "--no-progress", *more]) == 0
        return capsys.readouterr().err

    assert "left out" not in compare("A")
    assert "lessons that other runs wrote on these tasks are left out" in compare("B")
    assert main(["diff", str(tmp_path / "A"), str(tmp_path / "B")]) == 0
    diff = capsys.readouterr().out
    assert "+0.0 pts" in diff and "reflexion" in diff
    assert "warning: --warm-start admits" in compare("C", "--warm-start")
    assert main(["memory", "why", str(tmp_path / "B"), "q1", "1"]) == 0
    why = capsys.readouterr().out
    assert "written on this task by run" in why and "leave-one-task-out" in why
