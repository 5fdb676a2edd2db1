"""What a strategy's prompts are shown of a check (`--feedback`): the env's own feedback, one
fixed line, or the score alone.

    >>> shown_score(Score(0.5, False, "2 of 4 examples failed: ..."), "generic").feedback
    'There may be an error in your answer; check it and try again.'
"""

from __future__ import annotations

import dataclasses

from reflexion.core.records import Score

FEEDBACK_MODES = ("actionable", "generic", "none")
# The SCoRe / CoCoS correction prompt: the same words whatever the check found.
GENERIC_FEEDBACK = "There may be an error in your answer; check it and try again."


def shown_score(score: Score, mode: str) -> Score:
    """The score as prompts see it under `--feedback mode`: the value (and whether it counts as
    solved) stays, so strategies stop and pick the best as under `actionable`; only the text
    changes.

    >>> shown_score(Score(0.5, False, "2 of 4 examples failed: ..."), "none").feedback
    'score 0.5, not solved'
    """
    if mode == "generic":
        return dataclasses.replace(score, feedback=GENERIC_FEEDBACK)
    if mode == "none":
        state = "solved" if score.solved else "not solved"
        return dataclasses.replace(score, feedback=f"score {score.value:.3g}, {state}")
    return score
