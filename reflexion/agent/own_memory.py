"""Reflexion's memory in your own agent: remember a lesson after a failure, recall the lessons at
the start of the next attempt, and report the attempt's outcome, which credits the lessons it
recalled. The store is the one a run of `compare` keeps, with the same provenance, vagueness flag
and credit, so `reflexion memory list/show/why` and `reflexion serve` read it as they read a run's.

    >>> import tempfile
    >>> with ReflexionMemory(Path(tempfile.mkdtemp()) / "m", embedder="hash-64") as memory:
    ...     lesson = memory.remember("t1", "Quote the ticket number 4411 in the reply.")
    ...     [hit.reflection.text for hit in memory.recall("t1")]
    ['Quote the ticket number 4411 in the reply.']

Each attempt at a task is an episode, as in a run, numbered here: a recall after the task's
outcome (or a lesson on it) starts its next one, and sees every lesson remembered before. Each
ReflexionMemory is a run of its own (`run_id`), so it also sees every lesson of earlier ones.

Beside the loop, a look-up by free text with metadata filters and a similarity threshold
(`search`, `get_all`, `get`), and the CLI's curation (`update`, `delete`, `history`, `revert`:
reflexion.curate's functions and the store's one change log, so both see the same history).
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Self, cast

from memory import Access, Filters, open_store
from memory.metadata import lesson_metadata
from reflexion.agent.agent_folder import Place, agent_place, last_episodes
from reflexion.agent.progress import Progress, value_of, verdict
from reflexion.agent.queries import above, as_task, check_k, check_query, check_threshold
from reflexion.core.curation import (
    EDIT,
    FILTER,
    FORGET,
    HISTORY,
    REVERT,
    CannotCurate,
    Change,
    Curated,
    Filtering,
    require,
)
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Recalled, RecallScope, Reflection, Scalar
from reflexion.core.protocols import Closable, Crediting, Memory
from reflexion.core.records import Attempt, Message, Score, Step, Task
from reflexion.core.runfolder import RunFolder
from reflexion.curate.stores import changed, holder
from reflexion.trial.provenance import new_reflection, provenance

AGENT_NAME = "my-agent"  # the default env and strategy names a lesson records
SEED = 0  # an agent has one "seed": its lessons are one trial's per task
SCOPES = ("task", "global")


class ReflexionMemory:
    """Lessons kept across your agent's attempts, in a Chroma store on disk (`path`) or on a
    `chroma run` server (`url=`). `path` is a new folder (made as a run folder: `config.json`,
    the store in `memory/`, this class's trace), a run folder of `compare`, or a store folder.
    `collection` and `embedder` (default: as the folder records, else `reflections` and
    all-MiniLM-L6-v2); `env` and `strategy` are the names its lessons record. `create=False`:
    the store must exist (a mistyped path is an error, not a new empty store). Close it when
    done, or use it in a `with` block.

        >>> memory = ReflexionMemory("agent-memory")                    # doctest: +SKIP
        >>> memory = ReflexionMemory(url="http://10.0.0.5:8000")        # doctest: +SKIP
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        url: str | None = None,
        collection: str | None = None,
        embedder: str | None = None,
        env: str = AGENT_NAME,
        strategy: str = AGENT_NAME,
        create: bool = True,
    ) -> None:
        folder = None if path is None else Path(path)
        self.place: Place = agent_place(folder, url, collection, embedder, strategy, create)
        self.env, self.strategy = env, strategy
        self.run_id = uuid.uuid4().hex[:12]  # this session: a run of its own
        self._at = str(folder if folder is not None else url)  # as error messages name it
        self.store: Memory = open_store(self.place.settings, Access.RUN)
        self._trace = RunFolder(self.place.settings.folder) if self.place.traced else None
        self._first = last_episodes(self._trace.path, strategy, SEED) if self._trace else {}
        self._tasks: dict[str, Progress] = {}
        self._steps = 0
        self._lock = threading.RLock()  # a graph may call from several threads
        self._closed = False

    def remember(
        self,
        task: Task | str,
        text: str,
        *,
        score: float | None = None,
        passed: bool = False,
        feedback: str = "",
        metadata: Mapping[str, Scalar] | None = None,
    ) -> Reflection:
        """Store a lesson on the task's latest attempt, with its provenance and its vagueness
        flag (reflexion.trial.hygiene: checked against the task's text and `feedback`, what the
        check found). `score`: the attempt's score (default 1 if it `passed`, else 0). `metadata`:
        key=value pairs (user, agent, session, ...; strings, numbers, booleans) that `search`,
        `get_all` and `recall` filter on.

            >>> memory.remember(task, "Use both words: apple and river.", feedback="no river")
            ...                                                       # doctest: +SKIP
            >>> memory.remember(task, "Quote the order id.", metadata={"user": "alice"})
            ...                                                       # doctest: +SKIP
        """
        task = as_task(task)
        if not isinstance(text, str) or not text.strip():
            msg = "a lesson needs some text; got an empty one"
            raise UsageError(msg)
        about = lesson_metadata(metadata)
        with self._lock:
            progress = self._progress(task.id)
            shown = Score(value_of(score, passed), passed, feedback)
            attempt = Attempt(progress.episode, "", shown)
            lesson = new_reflection(self._who(task), text, attempt, task.prompt)
            lesson = replace(lesson, metadata=about)
            if progress.lessons:  # subtle: the id names the episode; a second lesson needs its own
                digest = hashlib.sha1(f"{lesson.id}/{progress.lessons}".encode()).hexdigest()
                lesson = replace(lesson, id=digest[:16])
            progress.lessons += 1
            progress.values.setdefault(progress.episode, shown.value)
            self._score(task, progress, shown)
            data = {"id": lesson.id} | ({"flag": lesson.flag} if lesson.flag else {})
            self._log(task, progress.episode, "remember", output=lesson.text, data=data)
            self.store.add([lesson])
            progress.ended = True
        return lesson

    def recall(
        self,
        task: Task | str,
        k: int = 3,
        *,
        scope: str = "task",
        filters: Filters | None = None,
        threshold: float | None = None,
    ) -> list[Recalled]:
        """The k lessons nearest the task's text, best first: the task's own (`scope="task"`:
        a string names the task by its id) or any task's (`"global"`); `filters` and
        `threshold` as in `search`. Each recall is counted in the store's credit: with the
        attempt's outcome, when one comes (see `outcome`). To look up lessons by a free text,
        with no attempt, use `search`.

            >>> notes = [hit.reflection.text for hit in memory.recall(task)]  # doctest: +SKIP
        """
        task = as_task(task)
        check_k(k)
        if scope not in SCOPES:
            msg = f"scope is one of {', '.join(SCOPES)}; got {scope!r}"
            raise UsageError(msg)
        least = check_threshold(threshold)
        with self._lock:
            progress = self._progress(task.id)
            if progress.ended:
                self._settle(task.id, progress)
                progress.next_episode()
            who = (self.env, task.id, self.run_id, self.strategy, SEED, progress.episode)
            # stream: every lesson remembered before in this session, of any task, is admitted
            asked, at = RecallScope(*who, scope, stream=True), time.time()
            hits = above(self._filtering().recall(task.lookup, asked, k, filters), least)
            ids = [h.reflection.id for h in hits]
            if progress.before() is None:  # nothing to compare with: a recall only, counted now
                self._credit(ids, None, task.id, progress.episode)
            else:
                progress.recalled += ids
            asked_for = {"k": k, "scope": scope, "at": at}
            asked_for |= {"filters": dict(filters)} if filters else {}
            asked_for |= {"threshold": least} if least is not None else {}
            self._log_recall(task, progress.episode, hits, asked_for)
        return hits

    def outcome(
        self, task: Task | str, passed: bool, *, score: float | None = None, feedback: str = ""
    ) -> str | None:
        """The task's latest attempt is over: credit the lessons it recalled with what it did
        against the attempt before ("helped", "hurt" or "same"; None: no attempt before in this
        session, a recall only), and return that. `score` as in `remember`.

            >>> memory.outcome(task, passed=True)                       # doctest: +SKIP
            'helped'
        """
        task = as_task(task)
        with self._lock:
            progress = self._progress(task.id)
            if progress.judged:  # a second outcome with no recall between: a new attempt
                self._settle(task.id, progress)
                progress.next_episode()
            shown = Score(value_of(score, passed), passed, feedback)
            said = verdict(shown.value, progress.before())
            self._credit(progress.recalled, said, task.id, progress.episode)
            progress.recalled = []
            progress.values[progress.episode] = shown.value
            self._score(task, progress, shown)
            progress.ended = progress.judged = True
        return said

    # -- looking up and curating, as `reflexion memory` does (one code path, one history) ----

    def search(
        self,
        query: str,
        k: int = 5,
        *,
        filters: Filters | None = None,
        threshold: float | None = None,
    ) -> list[Recalled]:
        """The k lessons most similar to `query` (a free text), of any task, run or env, most
        similar first. `filters`: only lessons whose metadata or provenance pass them, as
        `{"user": "alice"}` (equal) or `{"turn": {"$gte": 2}}` ($eq, $ne, $gt, $gte, $lt, $lte,
        $in, $nin; every key must hold). `threshold`: only lessons at least that similar
        (`similarity`, 1 - the cosine distance). A look-up: it starts no attempt and credits
        nothing.

            >>> memory.search("refund policy", filters={"user": "alice"}, threshold=0.3)
            ...                                                       # doctest: +SKIP
        """
        check_query(query)
        check_k(k)
        least = check_threshold(threshold)
        with self._lock:
            return above(self._filtering().search(query, k, filters), least)

    def get_all(self, *, filters: Filters | None = None) -> list[Reflection]:
        """Every stored lesson that passes `filters` (as in `search`; None: all), oldest first.

        >>> [r.text for r in memory.get_all(filters={"session": "s1"})]  # doctest: +SKIP
        """
        with self._lock:
            return self._filtering().reflections(filters)

    def get(self, lesson_id: str) -> Reflection:
        """The lesson with this id, or a unique prefix of it (as `reflexion memory show`); a
        UsageError names the closest ids when none has it, or says it was forgotten.

            >>> memory.get("3f9a").text                                 # doctest: +SKIP
        """
        with self._lock:
            return holder([self._curated()], lesson_id, self._at)[1]

    def update(self, lesson_id: str, text: str, *, why: str = "") -> Reflection:
        """New text for a lesson (an id or a unique prefix), embedded again, its credit started
        afresh; the old text and credit are kept in its history (`reflexion memory edit`).

            >>> memory.update("3f9a", "Quote the ticket number.", why="clearer")  # doctest: +SKIP
        """
        with self._lock:
            store, found = holder([self._curated()], lesson_id, self._at)
            require(store, EDIT)
            return store.edit(found.id, text, why)

    def delete(self, lesson_id: str, *, why: str = "") -> Reflection:
        """Forget a lesson (an id or a unique prefix), kept with its credit in its history,
        so `revert` brings it back (`reflexion memory forget`); returns it.

            >>> memory.delete("3f9a", why="misleading").id             # doctest: +SKIP
        """
        with self._lock:
            store, found = holder([self._curated()], lesson_id, self._at)
            require(store, FORGET)
            store.forget([found.id], why)
            return found

    def history(self, lesson_id: str) -> list[Change]:
        """Every change to a lesson, oldest first (`reflexion memory history`): each `before`
        is the lesson as it was (None: not stored). A forgotten lesson's id or prefix works.

            >>> [change.action for change in memory.history("3f9a")]   # doctest: +SKIP
            ['edit', 'forget']
        """
        with self._lock:
            store, rid = changed([self._curated()], lesson_id, self._at)
            require(store, HISTORY)
            return store.history(rid)

    def revert(
        self, lesson_id: str, *, to: int | None = None, why: str = "revert"
    ) -> Reflection | None:
        """Undo the latest change to a lesson, or with `to`, bring it back as it was before its
        change number `to` (`reflexion memory revert`); the revert is itself a change. Returns
        the lesson as it is now (None: not stored).

            >>> memory.revert("3f9a", to=1).text                        # doctest: +SKIP
        """
        with self._lock:
            store, rid = changed([self._curated()], lesson_id, self._at)
            require(store, REVERT)
            return store.revert(rid, why, to)

    def close(self) -> None:
        """Count the recalls still waiting for an outcome (as recalls only), and let go of the
        store and the trace. Closing again does nothing; any other call fails."""
        with self._lock:
            if self._closed:
                return
            for task_id, progress in self._tasks.items():
                self._settle(task_id, progress)
            self._closed = True
            if isinstance(self.store, Closable):
                self.store.close()
            if self._trace is not None:
                self._trace.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self.place.settings
        at = where.chroma_url or where.folder
        return f"ReflexionMemory({str(at)!r}, collection={where.collection!r}, run {self.run_id})"

    # -- bookkeeping ---------------------------------------------------------------------------

    def _progress(self, task_id: str) -> Progress:
        """The task's attempts so far (a ValueError once closed: the store is let go)."""
        if self._closed:
            msg = f"{self!r} is closed"
            raise ValueError(msg)
        if task_id not in self._tasks:
            self._tasks[task_id] = Progress(episode=self._first.get(task_id, 0) + 1)
        return self._tasks[task_id]

    def _curated(self) -> Curated:
        """The store, as a person curates it (a ValueError once closed)."""
        if self._closed:
            msg = f"{self!r} is closed"
            raise ValueError(msg)
        if not isinstance(self.store, Curated):  # agent_place opens a Chroma store: it is
            raise CannotCurate(getattr(self.store, "kind", type(self.store).__name__), EDIT)
        return self.store

    def _filtering(self) -> Filtering:
        """The store, asked to filter lessons on their metadata (as its `can` declares)."""
        store = self._curated()
        require(store, FILTER)
        return cast("Filtering", store)

    def _who(self, task: Task) -> tuple[str, str, str, str, int]:
        return (self.run_id, self.strategy, self.env, task.id, SEED)

    def _settle(self, task_id: str, progress: Progress) -> None:
        """The recalls of an episode that got no outcome, counted as recalls only."""
        self._credit(progress.recalled, None, task_id, progress.episode)
        progress.recalled = []

    def _credit(self, ids: list[str], said: str | None, task_id: str, episode: int) -> None:
        """As a run credits an episode's recalls: once per episode, by its key."""
        if ids and isinstance(self.store, Crediting):
            key = f"{self.run_id}/{self.strategy}/{task_id}/{SEED}/{episode}"
            self.store.credit(ids, said, key)

    def _score(self, task: Task, progress: Progress, shown: Score) -> None:
        """The episode's score in the trace, once (`memory show` and `why` compare them)."""
        if not progress.scored:
            progress.scored = True
            data = shown.to_dict() | {"signal": "agent"}
            self._log(task, progress.episode, "score", output=shown.feedback, data=data)

    def _log_recall(
        self, task: Task, episode: int, hits: list[Recalled], asked: dict[str, Any]
    ) -> None:
        found = [provenance(h, task.id, self.run_id) for h in hits]
        data = {"hits": found, "stream": True, "env": self.env} | asked
        text = "\n".join(h.reflection.text for h in hits)
        query = (Message("human", task.lookup),)
        self._log(task, episode, "recall", prompt=query, output=text, data=data)

    def _log(self, task: Task, episode: int, kind: str, **fields: Any) -> None:
        if self._trace is None:
            return
        self._steps += 1
        step_id = f"{self.strategy}/{task.id}/{SEED}/{self.run_id}-{self._steps:03d}-{kind}"
        who = (self.run_id, self.strategy, task.id, SEED, episode, kind)
        self._trace.write_step(Step(step_id, *who, **fields))
