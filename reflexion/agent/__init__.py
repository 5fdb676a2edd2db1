"""Reflexion's memory in your own agent (docs/own-agent.md): `ReflexionMemory` remembers a lesson
after a failure, recalls lessons at the next attempt's start and credits them with its outcome,
in the store `reflexion memory` and `reflexion serve` read; `ReflexionRetriever` recalls them in
any LangChain chain; `GraphActor` runs a LangGraph agent as the Actor of `compare`.

    >>> from reflexion.agent import GraphActor, ReflexionMemory, ReflexionRetriever
"""

from reflexion.agent.graph_actor import GraphActor
from reflexion.agent.own_memory import ReflexionMemory
from reflexion.agent.retriever import ReflexionRetriever

__all__ = ["GraphActor", "ReflexionMemory", "ReflexionRetriever"]
