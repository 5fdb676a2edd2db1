"""`--env sql:N`: text to SQL over one shop database (ten tables, about 5,500 rows, built
offline from a fixed seed by `build.py`).

- **Tasks:** N of the hand-written questions (`questions.json`), the first N of one fixed
  shuffle (`sql:N,seed=S` shuffles with another seed; `sql` alone is all of them). A task's
  spec holds its `difficulty`, the conventions and SQL it `needs`, and whether it is `ordered`.
- **The prompt:** the schema, whose column comments alone say how values are coded (status
  codes, money in cents, rows kept after a delete, a fiscal year from 1 February), with the
  first rows of each table; then the question, last. The schema part is the same in every
  task, so a prefix cache reuses it. No example question or answer is shown. The task's
  `question` is the question alone: memory is found by it, and an exemplar shows it.
- **The answer:** one SQLite query, the last ```sql block of the reply (else the reply). It
  runs in the sandbox on a read-only copy of the database: one read-only statement, 5 s,
  at most 1,000 rows. Anything else is refused with a verdict in words.
- **Visible and held-out are the same check:** the rows must equal the gold query's rows
  (`check.py`). The visible feedback says what went wrong (the SQLite error, the result's
  shape against the expected one, values or order) and never shows a gold row or the gold
  query, which stay in the env.

    >>> env = SqlEnv.from_spec("3")
    >>> task = env.tasks()[0]
    >>> task.prompt.endswith(env.gold(task).question)
    True
    >>> env.score(task, "```sql\\nSELECT 1\\n```").solved
    False
"""

from __future__ import annotations

import random

from envs.sandbox import sandbox_layers
from envs.sql.build import database
from envs.sql.check import verdict
from envs.sql.questions import Question, load_questions
from envs.sql.run import extract_query, run_direct, run_sandboxed
from envs.sql.schema import render
from reflexion.core.errors import UsageError
from reflexion.core.records import Score, Task

SEED = 31  # the default shuffle never changes: `sql:20` is the same 20 questions in every run
DB_SEED = 31  # the database's seed: every gold result was checked on this one
PROMPT = (
    "Here is the schema of a shop's SQLite database, with the first rows of each table. The "
    "comments say how values are coded.\n\n{schema}\n\nWrite ONE SQLite query that answers "
    "the question below. Return only the columns it asks for, in the order it names them. "
    "Put the query in a ```sql block.\n\nQuestion: {question}"
)
NO_QUERY = "no SQL query found: write one query in a ```sql block"


class SqlEnv:
    """The same check is the visible and the held-out signal: see the module's docstring."""

    name = "sql"

    def __init__(self, count: int | None = None, seed: int = SEED) -> None:
        questions = list(load_questions())
        random.Random(seed).shuffle(questions)
        self.path = database(DB_SEED)
        schema = render(self.path)
        self._questions: dict[str, Question] = {}
        self._tasks = []
        for question in questions[:count]:
            self._questions[question.id] = question
            spec = {
                "difficulty": question.difficulty,
                "needs": list(question.needs),
                "ordered": question.ordered,
            }
            prompt = PROMPT.format(schema=schema, question=question.question)
            self._tasks.append(Task(question.id, prompt, spec, question.question))

    @classmethod
    def from_spec(cls, arg: str | None) -> SqlEnv:
        """`sql` (every question), `sql:N`, `sql:N,seed=S`."""
        if arg is None:
            return cls()
        count, *options = arg.split(",")
        most = len(load_questions())
        if not count.isdigit() or not 1 <= int(count) <= most:
            msg = f"sql:N needs N between 1 and {most}, got {count!r}"
            raise UsageError(msg)
        seed = SEED
        for option in options:
            name, _, value = option.partition("=")
            if name != "seed" or not value.isdigit():
                msg = f"sql takes seed=S (a whole number), got {option!r}"
                raise UsageError(msg)
            seed = int(value)
        return cls(int(count), seed)

    def sandbox(self) -> dict[str, object]:
        """How this machine holds the queries a reply may hold (recorded in config.json)."""
        return sandbox_layers()

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def score(self, task: Task, candidate: str) -> Score:
        """VISIBLE: the query's rows against the gold rows, in words that show none of them."""
        return self._check(task, candidate)

    def evaluate(self, task: Task, candidate: str) -> Score:
        """HELD-OUT: the same check as `score`."""
        return self._check(task, candidate)

    def answer(self, task: Task, reply: str) -> str:
        """The query the check runs, in its ```sql block: what an exemplar keeps of a reply.

        >>> SqlEnv.from_spec("1").answer(Task("t", "q"), "First, ...\\n```sql\\nSELECT 2\\n```")
        '```sql\\nSELECT 2\\n```'
        """
        return f"```sql\n{extract_query(reply)}\n```"

    def gold(self, task: Task) -> Question:
        """The task's question with its gold query: held out, for tests and reports only."""
        return self._questions[task.id]

    def _check(self, task: Task, candidate: str) -> Score:
        question = self._questions[task.id]
        query = extract_query(candidate)
        if not query:
            return Score(0.0, False, NO_QUERY)
        got = run_sandboxed(self.path, query)
        gold = run_direct(self.path, question.gold)  # our own query: it runs here, once
        solved, feedback = verdict(got, gold, question.ordered)
        return Score(float(solved), solved, feedback)
