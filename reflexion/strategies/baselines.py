"""The baselines with no memory and no feedback, which every other strategy must beat:

- `single`: one attempt. The floor.
- `resample`: best-of-N independent samples, the best picked by the visible score. The
  equal-budget baseline: it spends the same number of candidates as the feedback strategies,
  so any gain they show over it comes from the feedback, not from more tries.
"""

from reflexion.core.protocols import Trial


async def single(trial: Trial) -> None:
    call = await trial.ask(trial.actor.generate(trial.task, (), sample=0), episode=1)
    await trial.attempt(call, episode=1)


async def resample(trial: Trial) -> None:
    for sample in range(trial.budget):
        episode = sample + 1
        call = await trial.ask(trial.actor.generate(trial.task, (), sample=sample), episode)
        await trial.attempt(call, episode)
        if trial.solved:
            break
