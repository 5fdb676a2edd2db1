"""`self-refine` (Madaan et al., 2023): FEEDBACK -> REFINE with the whole history inline.

    y0 = M(p_gen || x)
    fb_t = M(p_fb || x || y0 || fb0 || ... || y_t)
    y_t+1 = M(p_refine || x || y0 || fb0 || ... || y_t || fb_t)

Stops at the budget (default 4 candidates), when the feedback says STOP, or when the visible
score says solved. Nothing is remembered across tasks or episodes.

`self-refine-sampled` is the same loop with the feedback and each refinement sampled at
`--temperature`, each call with a seed of its own (the first answer stays greedy), as the
authors' code samples them (madaan/self-refine: 0.7 for CommonGen's feedback and refinement,
and for GSM8K's feedback call, which also writes the fixed program; the first answer at 0.0 by
default; pass `--temperature 0.7`). Greedy feedback and refinement on a small model often copy
the turn before them; sampling is the one part of their protocol this variant adds (their
prompts are also few-shot, per task; ours are zero-shot). Under `--feedback generic` or `none`
its refinements are sampled too.

With `--feedback generic` or `none` no feedback is written (the paper's ablation): the refine
request carries the fixed generic line or the score instead of fb_t.

`retry` is Self-Refine with no feedback written and no reflection: the last answers and what
checking them found, inline, then "write an improved answer". Reflexion's ablation calls it
"tests without reflection" when the check is the model's own tests (--signal self-tests).
"""

from reflexion.core.protocols import Trial
from reflexion.core.records import Turn


async def run(trial: Trial) -> None:
    await refine_loop(trial, sampled=False)


async def sampled(trial: Trial) -> None:
    """`self-refine-sampled`: feedback and refinements sampled (see the module)."""
    await refine_loop(trial, sampled=True)


async def refine_loop(trial: Trial, *, sampled: bool) -> None:
    call = await trial.ask(trial.actor.generate(trial.task, (), sample=0), episode=1)
    attempt = await trial.attempt(call, episode=1)
    if trial.feedback != "actionable":  # nothing to write: the refine request shows the result
        await retry_from(trial, [Turn(attempt)], episode=2, sampled=sampled)
        return
    history: list[Turn] = []
    for episode in range(2, trial.budget + 1):
        if trial.solved:
            break
        feedback = await trial.ask(
            trial.actor.feedback(
                trial.task,
                [*history, Turn(attempt)],
                **_sample(sampled, FEEDBACK_SAMPLES + episode),
            ),
            episode - 1,
        )
        if feedback.error or says_stop(feedback.output):
            break
        history.append(Turn(attempt, feedback.output))
        call = await trial.ask(
            trial.actor.refine(trial.task, history, **_sample(sampled, episode)), episode
        )
        attempt = await trial.attempt(call, episode)


FEEDBACK_SAMPLES = 100  # a feedback's sample number is this plus its episode: seeds apart


def _sample(sampled: bool, number: int) -> dict[str, int]:
    """The sample number a call passes: the refinement of episode e is e, its feedback
    FEEDBACK_SAMPLES + e. A greedy call passes none, so an Actor written before feedback and
    refine took one still runs `self-refine` and `retry`."""
    return {"sample": number} if sampled else {}


async def retry(trial: Trial) -> None:
    """`retry`: refine from each attempt's result alone (see the module)."""
    call = await trial.ask(trial.actor.generate(trial.task, (), sample=0), episode=1)
    await retry_from(trial, [Turn(await trial.attempt(call, episode=1))], episode=2)


async def retry_from(
    trial: Trial, history: list[Turn], episode: int, *, sampled: bool = False
) -> None:
    """Refine from the result of each attempt (Turns without written feedback) to the budget;
    `sampled`: each refinement sampled, with sample number e."""
    for e in range(episode, trial.budget + 1):
        if trial.solved:
            break
        call = await trial.ask(trial.actor.refine(trial.task, history, **_sample(sampled, e)), e)
        history.append(Turn(await trial.attempt(call, e)))


def says_stop(feedback: str) -> bool:
    """True when the feedback's last non-empty line is STOP (the paper's stop indicator).

    >>> says_stop("Looks right.\\n**STOP**"), says_stop("Do not STOP yet.")
    (True, False)
    """
    lines = [line.strip().strip("*.:").upper() for line in feedback.splitlines() if line.strip()]
    return bool(lines) and lines[-1] in {"STOP", "VERDICT: STOP"}
