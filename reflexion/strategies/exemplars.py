"""`exemplars` (Self-StreamICL, from StreamBench, Wu et al. 2024): a task solved by its visible
signal stores its prompt and its solution (for a game, its trajectory); a new task recalls the
k most similar as worked examples. No extra model call: the memory is the model's own answers
that its check passed.

    >>> exemplar_text("Add 2 and 3.", "5")
    'Task:\\nAdd 2 and 3.\\n\\nSolution:\\n5'
"""

from __future__ import annotations

from reflexion.core.protocols import Trial
from reflexion.core.records import EXEMPLAR, Attempt, Recalled
from reflexion.strategies.experience import Design, both


def exemplar_text(prompt: str, solution: str) -> str:
    return f"Task:\n{prompt}\n\nSolution:\n{solution}"


async def shown(trial: Trial, episode: int) -> list[Recalled]:
    return await trial.recall(episode, EXEMPLAR)


async def learn(trial: Trial, attempts: list[Attempt], episode: int) -> None:
    solved = attempts[-1]
    if solved.score.solved:  # only an answer its visible check passed is stored
        await trial.keep(EXEMPLAR, exemplar_text(trial.task.prompt, solved.candidate), solved)


DESIGN = Design(EXEMPLAR, shown, learn)
run, with_reflexion = both(DESIGN)
