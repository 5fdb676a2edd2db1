"""Your own tasks from a JSONL file: `--env jsonl:PATH`, one JSON object per line.

A code task: {"id", "prompt", "entry_point", "visible_tests", "hidden_tests"}; tests are a list
of Python snippets (usually one `assert` each) or one string of code. Visible tests give the
feedback (they may be left out); hidden tests decide the result. A question-answer task: {"id",
"question", "context" (optional), "answer" (a string or a list of acceptable strings)}; it has no
visible signal beyond "an answer was given", and the result is SQuAD-style exact match and token
F1. Either kind may carry a "meta" field, ignored. Blank lines are skipped; anything malformed is
a UsageError that names the file and line.

    >>> from importlib.resources import files
    >>> env = JsonlEnv(str(files("envs") / "examples" / "tasks.jsonl"))
    >>> sorted({t.spec["kind"] for t in env.tasks()})
    ['code', 'qa']
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from envs.code_tasks import CodeExtractionError, CodeProblem, assert_checks, no_code
from envs.jsonl.qa import exact_match, final_answer, token_f1
from envs.jsonl.tasks import CodeTask, QaTask, load_tasks
from envs.sandbox import sandbox_layers
from reflexion.core.errors import UsageError
from reflexion.core.records import Score, Task

TEST_SECONDS = 3.0
CODE_INSTRUCTION = (
    "\n\nWrite the Python function `{entry_point}`. Reply with the complete code (imports, "
    "helpers and the function) in one ```python code block."
)
QA_INSTRUCTION = (
    "\n\nThink briefly if you need to, then give your final answer on the last line, "
    "written as: Answer: <your answer>"
)


class JsonlEnv:
    """The tasks of one JSONL file. The env's name carries the file's stem and a hash of its
    content, so a shared memory store keeps the lessons of different task files apart (and of
    two versions of one file)."""

    def __init__(self, path: str, memory_mb: int = 512, test_seconds: float = TEST_SECONDS) -> None:
        self.path = Path(path).expanduser()
        self.memory_mb = memory_mb
        self.test_seconds = test_seconds  # each test's time limit
        items = load_tasks(self.path)
        digest = hashlib.sha256(self.path.read_bytes()).hexdigest()[:8]
        self.name = f"jsonl:{self.path.stem}-{digest}"
        self._items = {item.id: item for item in items}
        self._tasks = [_task(item) for item in items]

    @classmethod
    def from_spec(cls, arg: str | None) -> JsonlEnv:
        """`--env jsonl:PATH`."""
        if not arg:
            msg = "the jsonl env needs a file: --env jsonl:PATH"
            raise UsageError(msg)
        return cls(arg)

    def sandbox(self) -> dict[str, object]:
        """How this machine holds the code it runs (recorded in the run's config.json)."""
        return sandbox_layers()

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def score(self, task: Task, candidate: str) -> Score:
        """VISIBLE: the visible tests of a code task; only "was there an answer" for a question."""
        item = self._items[task.id]
        if isinstance(item, QaTask):
            answer = final_answer(candidate)
            if not answer:
                return Score(0.0, False, "No answer found: end with a line 'Answer: ...'.")
            note = "The answer is not checked against the gold answer."
            return Score(1.0, True, f"Answer given: {json.dumps(answer[:200])}. {note}")
        return self._run_tests(item, candidate, item.visible_tests, "test")

    def evaluate(self, task: Task, candidate: str) -> Score:
        """HELD-OUT: the hidden tests; for a question, F1 (value) and exact match (solved)."""
        item = self._items[task.id]
        if isinstance(item, QaTask):
            answer = final_answer(candidate)
            em = any(exact_match(answer, gold) for gold in item.answers)
            f1 = max(token_f1(answer, gold) for gold in item.answers)
            return Score(f1, em, f"exact match: {'yes' if em else 'no'}; F1 {f1:.2f}")
        return self._run_tests(item, candidate, item.hidden_tests, "hidden test")

    def test_subject(self, task: Task) -> str | None:
        """What a model writing tests sees: a code task's prompt; None for a question."""
        item = self._items[task.id]
        return item.prompt if isinstance(item, CodeTask) else None

    def score_with_tests(
        self, task: Task, candidate: str, tests: Sequence[str], visible: bool
    ) -> Score:
        """VISIBLE: the model's own tests of a code task (and its visible tests, when
        `visible`)."""
        item = self._items[task.id]
        if not isinstance(item, CodeTask):
            return self.score(task, candidate)
        own = tuple(tests)
        if visible:
            return self._run_tests(item, candidate, (*item.visible_tests, *own), "test")
        return self._run_tests(item, candidate, own, "self-test")

    def _run_tests(
        self, item: CodeTask, candidate: str, tests: tuple[str, ...], noun: str
    ) -> Score:
        # hide: the task file holds the hidden tests; the candidate must not be able to read it
        hide = (str(self.path.resolve().parent),)
        problem = CodeProblem(item.prompt, item.entry_point, self.memory_mb, hide)
        try:
            code = problem.extract(candidate)
        except CodeExtractionError as exc:
            return no_code(exc)
        no_tests = f"The code loads and defines `{item.entry_point}`; there are no {noun}s."
        checks = assert_checks(tests)
        return problem.score(code, checks, self.test_seconds, noun, no_checks=no_tests)


def _task(item: CodeTask | QaTask) -> Task:
    if isinstance(item, CodeTask):
        prompt = item.prompt + CODE_INSTRUCTION.format(entry_point=item.entry_point)
        return Task(item.id, prompt, {"entry_point": item.entry_point, "kind": "code"})
    context = f"Context:\n{item.context}\n\n" if item.context else ""
    prompt = f"{context}Question: {item.question}{QA_INSTRUCTION}"
    asked = item.question if item.context else ""  # a context may be shared: memory skips it
    return Task(item.id, prompt, {"kind": "qa"}, asked)
