"""`proactive` (PASR, Han et al.: proactive self-refinement, seed 002): the answer may revise
itself inside `<refine>...</refine>` while the model thinks, before its final form in
`<answer>...</answer>`. PASR trains this with RL; here the format is only asked for, the
untrained baseline. The final form is scored; the trace records how often the model refined
and, where a draft stands before the first refine, both verdicts on that draft, so the report
can say whether refining changed the verdict.

    >>> split_answer("<think>x = 1<refine>no: 2</refine></think><answer>x = 2</answer>")
    ('x = 2', 'x = 1', 1)
    >>> split_answer("just an answer")
    ('just an answer', '', 0)
"""

from __future__ import annotations

import dataclasses
import re

from reflexion.core.protocols import Proposing, Trial

# PASR's answer format (seed 002), asked for in words after the system prompt: the model is not
# trained for it
FORMAT = (
    "First think inside <think> and </think>. While thinking, whenever a part of your answer "
    "needs another look, write <refine>what to reconsider and the corrected part</refine>, then "
    "go on; you may refine more than once. Then give the complete final answer inside <answer> "
    "and </answer>."
)
ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.DOTALL | re.IGNORECASE)
THINK = re.compile(r"<think>(.*?)(?:<refine>|</think>|$)", re.DOTALL | re.IGNORECASE)
REFINE = re.compile(r"<refine>.*?</refine>", re.DOTALL | re.IGNORECASE)


def split_answer(reply: str) -> tuple[str, str, int]:
    """(final answer, first draft, refines): the final answer is the last <answer> block (the
    whole reply when there is none: a small model often drops the tags), the draft is what the
    thinking held before its first <refine> (empty when it never refined)."""
    answers = ANSWER.findall(reply)
    final = answers[-1].strip() if answers else reply.strip()
    refines = len(REFINE.findall(reply))
    draft = THINK.search(reply) if refines else None
    return final, (draft[1].strip() if draft else ""), refines


async def run(trial: Trial) -> None:
    actor = trial.actor
    for sample in range(trial.budget):
        episode = sample + 1
        if isinstance(actor, Proposing):
            call = await trial.ask(actor.propose(trial.task, sample), episode)
        else:  # a scripted actor (the quadratic drill) has no words to refine: plain samples
            call = await trial.ask(actor.generate(trial.task, (), sample=sample), episode)
        final, draft, refines = split_answer(call.output)
        trial.note(episode, "refined", "", {"refines": refines, "drafted": bool(draft)})
        if draft:
            await trial.note_draft(draft, refines, episode)
        await trial.attempt(dataclasses.replace(call, output=final), episode)
        if trial.solved:
            break
