"""Where a recalled lesson came from, as the trace records it for `memory show` and for
whoever reads the trace: the same task or another, this run or another, and how similar.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from reflexion.core.lesson_records import Recalled, RecallScope, Reflection
from reflexion.core.protocols import Memory
from reflexion.core.records import Attempt
from reflexion.trial.hygiene import vague


def provenance(hit: Recalled, task_id: str, run_id: str) -> dict[str, Any]:
    """A recalled lesson as the trace records it: which one, how similar, and where it came
    from ("this task", "another task", and "this run" or "another run").

    >>> from reflexion.core.lesson_records import Reflection
    >>> r = Reflection("r1", "x", "old", "reflexion", "e", "t2", 0, 1, 0.0, 0.0)
    >>> provenance(Recalled(r, 0.8), "t1", "new")["source"]
    'another task, another run'
    """
    r = hit.reflection
    task = "this task" if r.task_id == task_id else "another task"
    run = "this run" if r.run_id == run_id else "another run"
    return {
        "id": r.id,
        "similarity": hit.similarity,
        "score": hit.score,  # what ranked it (see memory.ranking); None: not ranked
        "task_id": r.task_id,
        "run_id": r.run_id,
        "source": f"{task}, {run}",
    }


def left_by_rule(memory: Memory, text: str, scope: RecallScope, k: int) -> list[dict[str, Any]]:
    """The lessons a recall of `text` would also have shown but for the leave-one-task-out rule
    (another run's, written or rewritten on this task), as the trace records them; the recall
    itself is `memory.recall(text, scope, k)`.

        >>> [e["why"][:32] for e in left_by_rule(memory, "q4?", scope, 3)]  # doctest: +SKIP
        ['written on this task by run a1 (']
    """
    if not scope.leave_task_out:
        return []
    wide = memory.recall(text, scope.widened(), k)
    return [left_entry(h.reflection, scope.task_id) for h in wide if scope.left_out(h.reflection)]


def left_entry(r: Reflection, task_id: str) -> dict[str, Any]:
    """One lesson the leave-one-task-out rule kept out, and why, as the trace records it."""
    how = "written" if r.task_id == task_id else "rewritten"
    why = f"{how} on this task by run {r.run_id} (leave-one-task-out; --warm-start admits it)"
    return {"id": r.id, "run_id": r.run_id, "task_id": r.task_id, "why": why}


def new_reflection(
    who: tuple[str, str, str, str, int], text: str, attempt: Attempt, task_prompt: str
) -> Reflection:
    """A reflection on `attempt` by (run, strategy, env, task, seed), with its provenance, a
    stable id (the same trial and episode always give the same id) and its vagueness flag."""
    run_id, strategy, env, task_id, seed = who
    key = "/".join(map(str, (*who, attempt.episode)))
    return Reflection(
        id=hashlib.sha1(key.encode()).hexdigest()[:16],
        text=text.strip(),
        run_id=run_id,
        strategy=strategy,
        env=env,
        task_id=task_id,
        seed=seed,
        episode=attempt.episode,
        score=attempt.score.value,
        created=time.time(),
        flag=vague(text, task_prompt, attempt.score.feedback),
    )
