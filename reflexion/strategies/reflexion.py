"""`reflexion` and `reflexion-window` (Shinn et al., 2023): a fresh attempt per episode, started
from lessons recalled from an episodic memory; after a failed episode the model writes a verbal
reflection that goes into the memory.

The two differ only in the memory the runner hands in: `reflexion` gets the run's memory backend
(`--memory-backend`: by default a Chroma vector store, ranked by similarity plus a bonus for the
task's own and recent lessons, `--rank`), `reflexion-window`
always the last k reflections in a plain list, as in the original code. No reflection is written
after the last episode: nothing would read it. The recalled reflections go after the task, as
in Reflexion's prompt.
"""

from reflexion.core.lesson_records import Kind, Recalled
from reflexion.core.protocols import Trial
from reflexion.strategies.learning import Lessons, bulleted

HEADER = "Lessons from your earlier attempts at similar tasks:"
REFLECTIONS = Lessons(Kind.REFLECTION, HEADER, place="after_task", body=bulleted)


async def run(trial: Trial) -> None:
    for episode in range(1, trial.budget + 1):
        lessons = await trial.recall(episode)
        call = await trial.ask(trial.actor.generate(trial.task, lessons, sample=0), episode)
        attempt = await trial.attempt(call, episode)
        if trial.solved or episode == trial.budget:
            break
        reflection = await trial.ask(trial.actor.reflect(trial.task, attempt), episode)
        await trial.remember(reflection, attempt)


async def first(trial: Trial) -> list[Recalled]:
    """The lessons a task's first attempt is shown (the gate replays it)."""
    return await trial.recall(1)
