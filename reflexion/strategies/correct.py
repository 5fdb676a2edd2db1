"""`correct`: intrinsic self-correction. After the first answer, a fixed generic turn ("there
might be an error, correct it") with no feedback at all, repeated up to the budget."""

from reflexion.core.protocols import Trial
from reflexion.core.records import Turn


async def run(trial: Trial) -> None:
    call = await trial.ask(trial.actor.generate(trial.task, (), sample=0), episode=1)
    history = [Turn(await trial.attempt(call, episode=1))]
    for episode in range(2, trial.budget + 1):
        if trial.solved:
            break
        call = await trial.ask(trial.actor.correct(trial.task, history), episode)
        history.append(Turn(await trial.attempt(call, episode)))
