"""`retry`: the last answers and what checking them found, inline, then "write an improved
answer": Self-Refine with no feedback written and no reflection. Reflexion's ablation calls it
"tests without reflection" when the check is the model's own tests (--signal self-tests)."""

from reflexion.core.protocols import Trial
from reflexion.core.records import Turn


async def run(trial: Trial) -> None:
    call = await trial.ask(trial.actor.generate(trial.task, (), sample=0), episode=1)
    await retry_from(trial, [Turn(await trial.attempt(call, episode=1))], episode=2)


async def retry_from(trial: Trial, history: list[Turn], episode: int) -> None:
    """Refine from the result of each attempt (Turns without written feedback) to the budget."""
    for e in range(episode, trial.budget + 1):
        if trial.solved:
            break
        call = await trial.ask(trial.actor.refine(trial.task, history), e)
        history.append(Turn(await trial.attempt(call, e)))
