"""`single`: one attempt, no feedback. The floor every other strategy must beat."""

from reflexion.core.protocols import Trial


async def run(trial: Trial) -> None:
    call = await trial.ask(trial.actor.generate(trial.task, (), sample=0), episode=1)
    await trial.attempt(call, episode=1)
