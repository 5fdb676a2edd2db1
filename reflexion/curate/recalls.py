"""The recalls a run's trace recorded: every recall of a lesson, with the scores of the attempts
before and after it (`memory show`, the web lesson page), and the recalls an attempt saw (`memory
why`, the audit's probes).

    >>> kinds = ["recall", "generate", "recall"]  # the second: the board read after the attempt
    >>> steps = [Step(f"s{i}", "run", "reflexion", "t", 0, 1, k) for i, k in enumerate(kinds)]
    >>> [s.id for s in recalls_seen(steps)]
    ['s0']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from reflexion.core.records import Step
from reflexion.core.runfolder import RunFolder


@dataclass(frozen=True)
class Recollection:
    """One recall of a lesson, as the run's trace tells it: the recall step, its similarity,
    the visible score of the recalling trial's attempt before it (None: the episode was its
    first) and of the attempt made with it, and where the lesson came from."""

    step: Step
    similarity: float | None
    before: float | None
    after: float | None
    source: str  # "this task, this run", ... ("" in traces made before it was kept)


def recollections(path: Path, reflection_id: str) -> list[Recollection]:
    """Every recall step in the run's trace that returned this reflection (see Recollection).
    What the attempt is compared with is the recalling trial's own previous attempt: for
    another task's recall, the lesson's score is of another task."""
    if not RunFolder(path).trace_file.exists():
        return []
    steps = RunFolder(path).steps()
    scores = {
        (s.strategy, s.task_id, s.seed, s.episode): float(s.data["value"])
        for s in steps
        if s.kind == "score"
    }
    found = []
    for step in steps:
        for hit in step.data.get("hits", []) if step.kind == "recall" else []:
            if hit["id"] == reflection_id:
                trial = (step.strategy, step.task_id, step.seed)
                before, after = (scores.get((*trial, step.episode + d)) for d in (-1, 0))
                source = str(hit.get("source", ""))
                found.append(Recollection(step, hit["similarity"], before, after, source))
    return found


def recalls_seen(steps: Sequence[Step]) -> list[Step]:
    """The recall steps that an attempt saw: those before its episode's first generate (a
    design reads its board again after the attempt, to learn from it)."""
    attempted: set[tuple[str, str, int, int]] = set()
    recalls = []
    for s in steps:
        episode = (s.strategy, s.task_id, s.seed, s.episode)
        if s.kind == "generate":
            attempted.add(episode)
        elif s.kind == "recall" and episode not in attempted:
            recalls.append(s)
    return recalls
