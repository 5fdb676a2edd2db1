"""What a run's memory cost and did, read from its trace: the share of each role's prompt that
was memory, the prefix cache, `proactive`'s refining (`use`), and what each strategy wrote, with
how much of each curator reply the memory took in (`writes`)."""

from reflexion.report.memory.use import MemoryUse, format_memory, is_call, memory_tables, memory_use
from reflexion.report.memory.writes import Writes, replies, writes

__all__ = [
    "MemoryUse",
    "Writes",
    "format_memory",
    "is_call",
    "memory_tables",
    "memory_use",
    "replies",
    "writes",
]
