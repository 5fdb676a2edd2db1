"""A LangChain retriever over a ReflexionMemory, so any chain can recall lessons: each is a
Document whose text is the lesson and whose metadata is its provenance. Each retrieval is a
recall, counted in the store's credit as ReflexionMemory.recall counts it: the query is the task
(its id and its text), so `memory.outcome(query, passed)` credits what it recalled.

    >>> retriever = ReflexionRetriever(memory=ReflexionMemory("agent-memory"))  # doctest: +SKIP
    >>> [doc.page_content for doc in retriever.invoke("Plan a trip to Oslo.")]  # doctest: +SKIP
    ['Check the forecast with the weather tool before answering.']
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from reflexion.agent.own_memory import ReflexionMemory
from reflexion.core.lesson_records import Recalled
from reflexion.trial.provenance import provenance


class ReflexionRetriever(BaseRetriever):
    """The `k` lessons of `memory` nearest the query. `scope="global"` (the default) recalls
    every task's lessons, since a chain's queries are seldom one task's exact text; `"task"`
    recalls only the lessons remembered for the task the query names. `filters` and
    `threshold` as in ReflexionMemory.search: only lessons whose metadata pass the filters, and
    at least that similar to the query.

        >>> ReflexionRetriever(memory=memory, filters={"user": "alice"}, threshold=0.3)
        ...                                                           # doctest: +SKIP
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: ReflexionMemory
    k: int = 3
    scope: str = "global"
    filters: dict[str, Any] | None = None
    threshold: float | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        hits = self.memory.recall(
            query, self.k, scope=self.scope, filters=self.filters, threshold=self.threshold
        )
        return [as_document(hit, query, self.memory.run_id) for hit in hits]


def as_document(hit: Recalled, task_id: str, run_id: str) -> Document:
    """A recalled lesson as a Document: its text, and where it came from."""
    r = hit.reflection
    about = {"env": r.env, "strategy": r.strategy, "episode": r.episode, "score": r.score}
    about |= {"created": r.created, "flag": r.flag, "kind": r.kind}
    about |= {"metadata": dict(r.metadata)} if r.metadata else {}
    return Document(page_content=r.text, metadata=provenance(hit, task_id, run_id) | about)
