"""`--env game24:N`: the Game of 24. Four numbers from 1 to 13; make 24 with each number used
exactly once, with + - * / and parentheses.

- **Tasks:** N distinct puzzles drawn with a seed (`game24:N,seed=S`; the default seed is fixed)
  from the 1,362 of the 1,820 multisets that can make 24 (`puzzles.py`, by brute force). A task's
  id names its numbers, `game24/1-3-4-6`; its spec holds `ways` (how many expressions make 24)
  and `difficulty`, the tercile of `ways` (easy, medium, hard), for a report to group by.
- **The protocol** (`game24:N,protocol=code`, the default) is Dynamic Cheatsheet's, which its
  baseline gets too: the prompt says that a program may be written and will be run, and nothing
  of how to solve the puzzle. A reply's ```python blocks run in the sandbox (`envs.sandbox`: its
  own process, time and memory limits, no network), the model is shown what they printed and
  answers again (`run_program`, up to `--code-rounds` times). `protocol=expression` is the
  earlier prompt, which asks for an expression alone and runs no rounds.
- **The answer:** an expression on a final `Answer:` line (or the last line that looks like one);
  a final reply that still holds a program is run, and the last expression it printed is the
  answer.
- **Visible and held-out are the same check:** the puzzle states its own criterion, so there
  is nothing to hold out. The check parses the expression (numbers, + - * /, parentheses; no
  unary minus), compares the numbers with the puzzle's, and evaluates in exact fractions.

    >>> env = Game24Env.from_spec("3,seed=7")
    >>> task = env.tasks()[0]
    >>> task.id, task.spec["difficulty"]
    ('game24/3-3-3-6', 'medium')
    >>> env.score(task, "3 * 3 + 3 * 6 is 27.\\nAnswer: 3 * 6 + 3 + 3").feedback
    '`3 * 6 + 3 + 3` uses each number once and equals 24.'
"""

from __future__ import annotations

import functools

from envs.game24.answers import last_expression, python_code, text_answer
from envs.game24.check import check
from envs.game24.puzzles import difficulty, draw, solvable, ways
from envs.sandbox import run_python, sandbox_layers
from reflexion.core.errors import UsageError
from reflexion.core.records import Score, Task

SEED = 24  # the default draw never changes: results stay comparable across releases
DEFAULT_COUNT = 20
CODE_SECONDS = 10.0  # a reply's program: a brute-force solver needs well under a second
CODE_MEMORY_MB = 256
RULES = (
    "Use the numbers {numbers} to make 24. Use each number exactly once, and only + - * / and "
    "parentheses. "
)
PROMPTS = {
    "expression": RULES + "Write the expression on the last line, as:\nAnswer: <expression>",
    "code": RULES + "You may write a Python program in a ```python block: it will be run, and "
    "you will see what it printed before you answer. End your answer with the expression on "
    "its last line, as:\nAnswer: <expression>",
}
PRINTED_CHARS = 2_000  # what a program printed, as shown to the model: its end


class Game24Env:
    """The same check is the visible and the held-out signal: see the module's docstring."""

    name = "game24"

    def __init__(
        self,
        count: int = DEFAULT_COUNT,
        seed: int = SEED,
        code_seconds: float = CODE_SECONDS,
        protocol: str = "code",
    ) -> None:
        if protocol not in PROMPTS:
            msg = f"game24's protocol is code or expression, got {protocol!r}"
            raise UsageError(msg)
        self.seed = seed
        self.code_seconds = code_seconds
        self.protocol = protocol
        self.programs = protocol == "code"  # a reply's program runs, and the model answers again
        self._numbers: dict[str, tuple[int, ...]] = {}
        self._tasks = []
        for numbers in draw(count, seed):
            task_id = "game24/" + "-".join(map(str, numbers))
            listed = ", ".join(map(str, numbers))
            spec = {"numbers": list(numbers), "ways": ways(numbers)}
            spec["difficulty"] = difficulty(numbers)
            self._numbers[task_id] = numbers
            self._tasks.append(Task(task_id, PROMPTS[protocol].format(numbers=listed), spec))

    @classmethod
    def from_spec(cls, arg: str | None) -> Game24Env:
        """`game24` (20 puzzles), `game24:N`, `game24:N,seed=S,protocol=code|expression`."""
        if arg is None:
            return cls()
        count, *options = arg.split(",")
        most = len(solvable())
        if not count.isdigit() or not 1 <= int(count) <= most:
            msg = f"game24:N needs N between 1 and {most}, got {count!r}"
            raise UsageError(msg)
        seed, protocol = SEED, "code"
        for option in options:
            name, _, value = option.partition("=")
            if name == "seed" and value.isdigit():
                seed = int(value)
            elif name == "protocol" and value in PROMPTS:
                protocol = value
            else:
                msg = (
                    "game24 takes seed=S (a whole number) and protocol=code|expression, "
                    f"got {option!r}"
                )
                raise UsageError(msg)
        return cls(int(count), seed, protocol=protocol)

    def sandbox(self) -> dict[str, object]:
        """How this machine holds the code a reply may hold (recorded in the run's config.json)."""
        return sandbox_layers()

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def score(self, task: Task, candidate: str) -> Score:
        """VISIBLE: the puzzle's criterion (each number once, + - * / and parentheses, 24)."""
        return self._check(task, candidate)

    def evaluate(self, task: Task, candidate: str) -> Score:
        """HELD-OUT: the same check as `score`; the puzzle states its own criterion."""
        return self._check(task, candidate)

    def run_program(self, task: Task, reply: str) -> str | None:
        """What the reply's program printed (its end) and how it ended, in words for the model;
        None when the reply holds no program, or under the expression protocol."""
        code = python_code(reply) if self.programs else None
        return None if code is None else _program_output(code, self.code_seconds)

    def _check(self, task: Task, candidate: str) -> Score:
        numbers = self._numbers[task.id]
        code = python_code(candidate)
        ran = ""
        if code is not None:
            expression, ran = _printed_expression(code, self.code_seconds)
            if expression is not None:
                verdict = check(expression, numbers)
                return Score(verdict.value, verdict.solved, f"{ran} {verdict.feedback}")
        expression = text_answer(candidate)
        if expression is None:
            missing = "No expression found: end with a line 'Answer: <expression>'."
            return Score(0.0, False, f"{ran} {missing}".strip())
        verdict = check(expression, numbers)
        return Score(verdict.value, verdict.solved, f"{ran} {verdict.feedback}".strip())


@functools.lru_cache(maxsize=256)  # score and evaluate see one candidate: its code runs once
def _printed_expression(code: str, seconds: float) -> tuple[str | None, str]:
    """The last expression line the code printed (None: none), and what happened, in words."""
    result = run_python(code, timeout_s=seconds, memory_mb=CODE_MEMORY_MB)
    found = last_expression([line.strip() for line in result.stdout.splitlines()])
    if result.timed_out:
        what = f"The code did not finish within {seconds:g} s"
    elif result.returncode != 0:
        last = (result.stderr.strip().splitlines() or [result.reason])[-1]
        what = f"The code failed ({last[:200]})"
    else:
        what = "The code ran"
    if found is None:
        return None, f"{what} and printed no expression."
    return found, f"{what}; it printed `{found}`."


@functools.lru_cache(maxsize=256)  # greedy runs of one prompt repeat the same program
def _program_output(code: str, seconds: float) -> str:
    """What `code` printed (its last PRINTED_CHARS) and, if it did not end well, why."""
    result = run_python(code, timeout_s=seconds, memory_mb=CODE_MEMORY_MB)
    printed = result.stdout.strip()[-PRINTED_CHARS:] or "(nothing)"
    if result.timed_out:
        return f"It printed:\n{printed}\nIt did not finish within {seconds:g} s."
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or [result.reason])[-1]
        return f"It printed:\n{printed}\nIt failed: {last[:300]}"
    return f"It printed:\n{printed}"
