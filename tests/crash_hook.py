"""`--import crash_hook`: the run kills itself with SIGKILL right after its N-th write to a Chroma
store (an add, a revise or a retire), N from the environment variable REFLEXION_CRASH_AFTER.

A kill at a random moment seldom lands between a board change and the end of its trial, the
one window where a resume has something to undo; this lands there on purpose. Without the
variable the module does nothing but, where REFLEXION_CRASH_LOG names a file, write each write
there, one a line ("add:", "revise:upvote", "retire:downvote"), so a test can draw N from the
writes of an uninterrupted run.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory.chroma.store import ChromaMemory

WRITES = ("add", "revise", "retire")
_count = 0
_lock = threading.Lock()  # writes run in worker threads


def _counted(write: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(write)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global _count
        done = write(*args, **kwargs)
        with _lock:
            _count += 1
            if log := os.environ.get("REFLEXION_CRASH_LOG"):
                with Path(log).open("a") as f:
                    f.write(f"{write.__name__}:{_op(args)}\n")
            if str(_count) == os.environ.get("REFLEXION_CRASH_AFTER"):
                os.kill(os.getpid(), signal.SIGKILL)
        return done

    return wrapper


def _op(args: tuple[Any, ...]) -> str:
    """A board write's operation (`why` starts with it: "add ...", "upvote ...", "replace ...")."""
    why = args[2] if len(args) > 2 else ""
    return str(why).split(" ", 1)[0] if why else ""


for _name in WRITES:
    setattr(ChromaMemory, _name, _counted(getattr(ChromaMemory, _name)))
