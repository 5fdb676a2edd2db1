"""Core types every layer shares: records, protocols, errors, the run folder and its JSONL
files. Imports nothing else of ours."""

from reflexion.core.errors import ReflexionError, StoreError, UsageError
from reflexion.core.jsonl import read_jsonl
from reflexion.core.lesson_records import Curation, Kind, Order, Recalled, RecallScope, Reflection
from reflexion.core.protocols import Actor, Embedder, Env, Memory, Trial
from reflexion.core.records import Attempt, Call, Message, Score, Step, Task, TaskResult, Turn
from reflexion.core.runfolder import RunFolder

__all__ = [
    "Actor",
    "Attempt",
    "Call",
    "Curation",
    "Embedder",
    "Env",
    "Kind",
    "Memory",
    "Message",
    "Order",
    "Recalled",
    "RecallScope",
    "Reflection",
    "ReflexionError",
    "RunFolder",
    "Score",
    "Step",
    "StoreError",
    "Task",
    "TaskResult",
    "Trial",
    "Turn",
    "UsageError",
    "read_jsonl",
]
