"""`--env constrained:N`: Self-Refine's constrained generation, hard version (CommonGen-Hard):
write a short paragraph that uses 20 to 30 given concepts.

- **Tasks:** N concept sets, each drawn with a fixed seed from the package's own word list
  (`words.py`), so `constrained:N` is the same N tasks on every machine.
- **Visible signal:** concept coverage, the share of concepts used in any of their forms
  (plural, past tense, -ing: `forms.py`), with the missing ones named. No gold answer is needed.
- **Held-out signal:** the same coverage must be complete, and the paragraph at most
  `MAX_WORDS` words long. The length limit is in the prompt, but the visible feedback never
  checks it: it is the part a strategy cannot see being scored.

    >>> env = ConstrainedEnv.from_spec("2")
    >>> task = env.tasks()[0]
    >>> 20 <= len(task.spec["concepts"]) <= 30
    True
    >>> env.score(task, " ".join(task.spec["concepts"])).solved
    True
"""

from __future__ import annotations

import random

from envs.constrained.forms import used
from envs.constrained.words import NOUNS, VERBS
from reflexion.core.errors import UsageError
from reflexion.core.records import Score, Task

SEED = 20230330  # the concept sets never change: results stay comparable across releases
CONCEPTS = (20, 30)  # how many concepts a task has, at least and at most
MAX_WORDS = 200  # held out: the paragraph's length limit
MAX_TASKS = 1000
PROMPT = (
    "Write one short paragraph (at most {limit} words) that uses every one of these concepts, "
    "each at least once (any form of a word counts, e.g. 'dogs' for 'dog' or 'ran' for 'run'). "
    "It should read naturally.\n\nConcepts: {concepts}"
)


class ConstrainedEnv:
    name = "constrained"

    def __init__(self, count: int = 20) -> None:
        rng = random.Random(SEED)
        vocabulary = sorted(set(NOUNS) | set(VERBS))
        self._tasks = []
        for i in range(count):
            concepts = rng.sample(vocabulary, rng.randint(*CONCEPTS))
            prompt = PROMPT.format(limit=MAX_WORDS, concepts=", ".join(concepts))
            self._tasks.append(Task(f"constrained/{i}", prompt, {"concepts": concepts}))

    @classmethod
    def from_spec(cls, arg: str | None) -> ConstrainedEnv:
        """`--env constrained` (20 tasks) or `--env constrained:N`."""
        if arg is None:
            return cls()
        if not arg.isdigit() or not 1 <= int(arg) <= MAX_TASKS:
            msg = f"constrained:N needs N between 1 and {MAX_TASKS}, got {arg!r}"
            raise UsageError(msg)
        return cls(int(arg))

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def score(self, task: Task, candidate: str) -> Score:
        """VISIBLE: the share of concepts used, naming the missing ones."""
        concepts: list[str] = task.spec["concepts"]
        found = set(used(concepts, candidate))
        missing = [c for c in concepts if c not in found]
        text = f"{len(found)} of {len(concepts)} concepts used."
        if missing:
            text += f" Missing: {', '.join(missing)}."
        return Score(len(found) / len(concepts), not missing, text)

    def evaluate(self, task: Task, candidate: str) -> Score:
        """HELD-OUT: every concept used, and at most MAX_WORDS words."""
        coverage = self.score(task, candidate)
        words = len(candidate.split())
        solved = coverage.solved and words <= MAX_WORDS
        return Score(coverage.value if words <= MAX_WORDS else 0.0, solved, f"{words} words")
