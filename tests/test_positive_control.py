"""A positive control for every memory design, through the real runner: a scripted model that
succeeds more often only when a lesson it wrote after an earlier task's feedback is in its
prompt. On 100 tasks the comparison must report that lift with p < 0.01 for each design; with
memory withheld (frozen, nothing stored), it must report no difference. This proves that each
design's memory reaches the next prompt, and that the paired statistics see it.

The tasks share one convention that the visible feedback states when an answer breaks it (end
with "!!"). The model knows it only from its prompt: an exemplar, a rule, a sheet, an item, a
skill or a reflection that carries it. Without one, it follows the convention by chance on 3
tasks in 10 (a hash of the task), so exemplars and skills have successes to keep, and
insights has successes to critique, 8 at a time.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pytest
from conftest import SECRET
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from running import RunConfig, run

from envs.sandbox import run_python
from reflexion.core.records import Score, Task, TaskResult
from reflexion.report.paired import compare_paired, pair

TASKS = 100
MARK = "!!"
ASKED = re.compile(r"the code word for item ([a-z0-9]+)\.")
RULE = "the answer must end with two exclamation marks (!!)"  # the visible feedback
LESSON = f"End every answer with {MARK}"  # what the model writes when it has read RULE
PROGRAM = re.compile(r"```python\n(.*)\n```", re.DOTALL)
DESIGNS = ("exemplars", "insights", "cheatsheet", "bank", "bank-scaled", "skills")


class ConventionEnv:
    """Reply with an item's code word, ending with "!!" (the feedback says so on a miss)."""

    name = "convention"
    programs = False

    def __init__(self) -> None:
        words = [hashlib.sha1(str(i).encode()).hexdigest()[:6] for i in range(TASKS)]
        prompt = "Reply with the code word for item {}."
        self._tasks = [Task(f"c{i:03}", prompt.format(w), {"word": w}) for i, w in enumerate(words)]

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def score(self, task: Task, candidate: str) -> Score:
        ok = said(candidate) == task.spec["word"] + MARK
        return Score(float(ok), ok, "the code word, as asked" if ok else RULE)

    def evaluate(self, task: Task, candidate: str) -> Score:
        passed = self.score(task, candidate).solved
        return Score(float(passed), passed, f"{SECRET}: checked")


def said(candidate: str) -> str:
    """An answer's last line; an answer that is a program alone says what it prints, run in the
    sandbox (as game24 runs one), so that `skills` can check a program on its own."""
    program = PROGRAM.fullmatch(candidate.strip())
    if program:
        candidate = run_python(program[1], timeout_s=10).stdout
    lines = candidate.strip().splitlines()
    return lines[-1].strip() if lines else ""


class ConventionModel(BaseChatModel):
    """Answers follow the convention when "!!" is anywhere in the prompt (only memory can put it
    there: no task states it), else by chance on 3 tasks in 10. Curators and reflections write
    the lesson only when the feedback they are shown states the convention, or, for insights'
    chunk of successes, when the successes they are shown follow it."""

    @property
    def _llm_type(self) -> str:
        return "convention"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt = "\n".join(m.text for m in messages)
        usage = {"input_tokens": len(prompt) // 4, "output_tokens": 8, "total_tokens": 0}
        reply = AIMessage(self.reply(prompt), usage_metadata=usage)  # type: ignore[arg-type]
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def reply(self, prompt: str) -> str:
        return reply_to(prompt)


def reply_to(prompt: str) -> str:
    # the curator or reflection was shown the feedback, or (insights' chunk) successes that
    # all followed the convention
    chunk = "Look at the successful attempts at the tasks above" in prompt
    learned = RULE in prompt or (chunk and MARK in prompt)
    if "Reply with a JSON object" in prompt:
        text = LESSON if learned else "Answer with the code word."
        if "Write at most 3 notes" in prompt:
            item = {"title": "The ending", "when": "always", "do": text}
            return json.dumps({"reason": "what the check said", "items": [item]})
        if f"1. {LESSON}" in prompt:  # the rule is on the list already
            return json.dumps({"reason": "it held", "operations": [{"op": "upvote", "rule": 1}]})
        add = {"op": "add", "text": text}
        return json.dumps({"reason": "what the check said", "operations": [add]})
    if "concrete plan" in prompt:  # a reflection
        return LESSON if learned else "I will answer with the code word."
    words = ASKED.findall(prompt)
    word = words[-1] if words else ""
    by_chance = int(hashlib.sha256(word.encode()).hexdigest(), 16) % 10 < 3
    answer = word + MARK if MARK in prompt or by_chance else word
    return f"```python\nprint({answer!r})\n```\n{answer}"


def stream(tmp_path: Any, strategies: tuple[str, ...], **more: Any) -> list[TaskResult]:
    config = RunConfig(
        env="convention",
        strategies=strategies,
        out=str(tmp_path / "run"),
        embedder="hash-64",
        order="stream",
        **({"episodes": 1} | more),
    )
    return run(config, model=ConventionModel(), env=ConventionEnv())


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> list[TaskResult]:
    return stream(tmp_path_factory.mktemp("control"), ("single", *DESIGNS))


@pytest.mark.parametrize("design", DESIGNS)
def test_each_design_carries_a_lesson_and_the_comparison_sees_it(
    learned: list[TaskResult], design: str
) -> None:
    p = pair(learned, "single", design)
    assert p.tasks == TASKS and p.lost == 0
    assert p.p_value < 0.01 and p.difference_low > 0  # a lift, seen by both tests
    single = [r for r in learned if r.strategy == "single"]
    assert 0.2 < sum(r.final_passed for r in single) / TASKS < 0.4  # chance alone: 3 in 10


def test_with_memory_withheld_the_comparison_reports_no_difference(tmp_path: Any) -> None:
    results = stream(tmp_path, ("single", *DESIGNS), frozen_memory=True)
    for design in DESIGNS:
        p = pair(results, "single", design)
        assert (p.won, p.lost, p.p_value) == (0, 0, 1.0)
        assert p.difference_low <= 0 <= p.difference_high


def test_bank_scaled_comparing_two_candidates_carries_the_lesson(tmp_path: Any) -> None:
    """With 2 candidates `bank-scaled` runs both and compares them in one curator call (with 1,
    as in the test above, it is `bank`); the lesson it writes still reaches the next tasks."""
    results = stream(tmp_path, ("single", "bank-scaled"), episodes=2)
    p = pair(results, "single", "bank-scaled")
    assert p.tasks == TASKS and p.lost == 0 and p.p_value < 0.01
    assert all(r.attempts == 2 for r in results if r.strategy == "bank-scaled")


def test_reflexions_reflections_from_earlier_tasks_lift_the_first_attempt(tmp_path: Any) -> None:
    """Reflexion's lessons are a task's own, so they carry across tasks only with --scope
    global; its first attempts are compared, paired, with those of task scope (where a first
    attempt never has a lesson). Both reach the convention on the retry, from the feedback."""

    def first_attempts(scope: str) -> dict[str, bool]:
        results = stream(tmp_path / scope, ("reflexion",), episodes=2, scope=scope)
        return {r.task_id: r.curve[0].passed for r in results}

    across, alone = first_attempts("global"), first_attempts("task")
    paired = compare_paired(alone, across)
    assert paired.tasks == TASKS and paired.lost == 0 and paired.p_value < 0.01
