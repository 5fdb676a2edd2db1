"""The glue every code env shares: take the code out of an answer, run checks on it in the
sandbox (the prompt's own helpers on the checks' side), and turn the run into a Score.

    >>> problem = CodeProblem("def inc(x):\\n    '''Add one.'''\\n", "inc")
    >>> code = problem.extract("```python\\ndef inc(x):\\n    return x + 1\\n```")
    >>> problem.score(code, [Check("inc(1)", "inc(1)", "2")], seconds=3.0).solved
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from envs.code_tasks.asserts import task_helpers
from envs.code_tasks.extract import CodeExtractionError, extract_code
from envs.sandbox.checks import Check, CheckRun, render, run_checks
from reflexion.core.records import Score


def no_code(exc: CodeExtractionError) -> Score:
    """The visible score of an answer that holds no usable code, saying why."""
    return Score(0.0, False, f"No usable code in the answer: {exc}.")


@dataclass(frozen=True)
class CodeProblem:
    """A code task as the sandbox needs it: its prompt (for the helpers and for answers that
    repeat it), the function it asks for, the memory limit, and directories to hide."""

    prompt: str
    entry_point: str
    memory_mb: int = 512
    hide: tuple[str, ...] = ()

    def extract(self, candidate: str) -> str:
        """The program in the answer; raises CodeExtractionError when there is none."""
        return extract_code(candidate, self.entry_point, self.prompt)

    def run(self, code: str, checks: Sequence[Check], seconds: float) -> CheckRun:
        """`code` against `checks`, each limited to `seconds`."""
        return run_checks(
            code,
            checks,
            per_check_s=seconds,
            memory_mb=self.memory_mb,
            hide=self.hide,
            helpers=task_helpers(self.prompt, self.entry_point),
            entry_points=[self.entry_point],
        )

    def score(
        self,
        code: str,
        checks: Sequence[Check],
        seconds: float,
        noun: str = "example",
        no_checks: str = "",
    ) -> Score:
        """The fraction of checks passed, with what failed and why; `no_checks` is the text
        when there are none (then loading and defining the function is all that is asked)."""
        run = self.run(code, checks, seconds)
        if run.load_error is not None:
            return Score(0.0, False, render(run, noun))
        if not checks:
            return Score(1.0, True, no_checks)
        return Score(run.passed / len(checks), run.passed == len(checks), render(run, noun))
