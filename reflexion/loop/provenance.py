"""Where a recalled lesson came from, as the trace records it for `memory show` and for
whoever reads the trace: the same task or another, this run or another, and how similar.
"""

from __future__ import annotations

from typing import Any

from reflexion.core.records import Recalled


def provenance(hit: Recalled, task_id: str, run_id: str) -> dict[str, Any]:
    """A recalled lesson as the trace records it: which one, how similar, and where it came
    from ("this task", "another task", and "this run" or "another run").

    >>> from reflexion.core.records import Reflection
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
