"""reflexion: LLM agents that learn from their own mistakes, measured honestly.

Importing this package is cheap: torch, chromadb and sentence-transformers load on first use.
"""

from reflexion.errors import ReflexionError, StoreError, UsageError
from reflexion.records import (
    Attempt,
    Call,
    Message,
    Recalled,
    RecallScope,
    Reflection,
    Score,
    Step,
    Task,
    TaskResult,
    Turn,
)

__all__ = [
    "Attempt",
    "Call",
    "Message",
    "Recalled",
    "RecallScope",
    "Reflection",
    "ReflexionError",
    "Score",
    "Step",
    "StoreError",
    "Task",
    "TaskResult",
    "Turn",
    "UsageError",
]
__version__ = "0.1.0"
