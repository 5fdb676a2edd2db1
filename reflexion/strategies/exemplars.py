"""`exemplars` (Self-StreamICL, from StreamBench, Wu et al. 2024): a task solved by its visible
signal stores its prompt and its solution (for a game, its trajectory), found later by its
question, as StreamBench keys its memory; a new task recalls the 16 most similar (StreamBench's
number) as worked examples, numbered, before the task, the most similar last (nearest the task),
as StreamBench places them. --memory-tokens bounds them: the least similar that do not fit are
left out, so the shots must be short (a solved task's final answer, not its whole exchange). No
extra model call: the memory is the model's own answers that its check passed. Where tasks
share a long context (questions over one database), a shot shows the task's `question` only, as
StreamBench's shots do, not the shared schema again; and where the env says which part of a
reply its check reads (`AnsweringEnv`: the SQL env's query), the shot keeps that part, as
StreamBench's shots keep the parsed query, so that reasoning does not crowd out other shots.

    >>> exemplar_text("Add 2 and 3.", "5")
    'Task:\\nAdd 2 and 3.\\n\\nSolution:\\n5'
"""

from __future__ import annotations

from collections.abc import Sequence

from reflexion.core.lesson_records import Kind, Recalled
from reflexion.core.protocols import Trial
from reflexion.core.records import Attempt
from reflexion.strategies.learning import Design, Lessons, both

HEADER = "Solved examples of similar tasks. Reuse their approach where it fits:"
SHOTS = 16  # StreamBench's Self-StreamICL recalls up to 16 earlier questions with their answers


def exemplar_text(prompt: str, solution: str) -> str:
    return f"Task:\n{prompt}\n\nSolution:\n{solution}"


def examples(texts: Sequence[str]) -> str:
    """The shots, most similar LAST, nearest the task, as StreamBench places them (`texts` come
    most similar first).

    >>> examples(["nearest", "farther"]).splitlines()[-1]
    'nearest'
    """
    shots = list(reversed(texts))
    return "\n\n".join(f"Example {n}:\n{t}" for n, t in enumerate(shots, 1))


async def shown(trial: Trial, episode: int) -> list[Recalled]:
    return await trial.recall(episode, Kind.EXEMPLAR, SHOTS)


async def learn(trial: Trial, attempts: list[Attempt], episode: int) -> None:
    solved = attempts[-1]
    if solved.score.solved:  # only an answer its visible check passed is stored
        text = exemplar_text(trial.task.lookup, trial.answer_of(solved.candidate))
        await trial.keep(Kind.EXEMPLAR, text, solved, key=trial.task.lookup)


EXEMPLARS = Lessons(Kind.EXEMPLAR, HEADER, place="before_task", body=examples)
DESIGN = Design(EXEMPLARS, shown, learn)
run, with_reflexion = both(DESIGN)
