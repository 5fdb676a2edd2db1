"""Finding lessons and tasks among a run's stores, as a person names them: a lesson by its id, a
task by the id `reflexion memory list` prints (`quadratic/q2`, or the env's own `q2`). A name that
matches nothing is a UsageError that names the closest ones. Also: each store's credit, a search
across stores, the recalls a trace recorded, and times as `memory` prints them.

    >>> task_label("quadratic", "q2"), task_label("textworld", "textworld/r3")
    ('quadratic/q2', 'textworld/r3')
    >>> pick_task("quadratic/q2", [("quadratic", "q2")], "runs/q")
    ('quadratic', 'q2')
    >>> utc(0.0)
    '1970-01-01T00:00:00Z'
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memory.metadata import lesson_metadata
from reflexion.core.curation import CREDIT, HISTORY, Credit, Curated
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Recalled, Reflection
from reflexion.core.records import Step
from reflexion.core.runfolder import RunFolder

SHOWN = 8  # ids named in full when a prefix is ambiguous
ID_LIKE = 0.4  # how alike (difflib's ratio) a stored id must be to be named as the closest


def task_label(env: str, task_id: str) -> str:
    """A task as `memory` prints it: env/task, the env's name once (see the module's example)."""
    return task_id if task_id.startswith(f"{env}/") else f"{env}/{task_id}"


def pick_task(text: str, tasks: Iterable[tuple[str, str]], where: object) -> tuple[str, str]:
    """The (env, task id) that `text` names, as printed or as the env names it; a UsageError
    naming the closest printed ids when it names none."""
    known = sorted(set(tasks))
    for env, task_id in known:
        if text in (task_label(env, task_id), task_id):
            return env, task_id
    labels = [task_label(env, task_id) for env, task_id in known]
    what = "task"
    raise unknown(what, text, labels, where)


def unknown(
    what: str, given: str, known: Sequence[str], where: object, cutoff: float = 0.0
) -> UsageError:
    """`no WHAT 'GIVEN' in WHERE; closest: ...`, the three known names most like `given` (and at
    least `cutoff` alike, by difflib's ratio: a made-up id is like no stored one)."""
    near = difflib.get_close_matches(given, list(dict.fromkeys(known)), n=3, cutoff=cutoff)
    hint = f"; closest: {', '.join(near)}" if near else f"; it holds no {what}"
    if known and not near:
        hint = f"; none is close (`reflexion memory list {where}` lists them)"
    return UsageError(f"no {what} {given!r} in {where}{hint}")


def holder(stores: Sequence[Curated], rid: str, where: object) -> tuple[Curated, Reflection]:
    """The store that holds lesson `rid` (its id, or a prefix of one id alone) now, and the
    lesson; a UsageError when it names none, or several (see `full_id`)."""
    held = _held(stores, rid)
    if held is None:
        _check_not_forgotten(stores, rid, where)
        held = _held(stores, full_id(stores, rid, where))
    if held is None:  # full_id found the id among these stores' lessons
        raise AssertionError(rid)
    return held


def _check_not_forgotten(stores: Sequence[Curated], given: str, where: object) -> None:
    """A UsageError saying so when `given` (an id, or a prefix of one id alone) names a lesson
    that was forgotten and that a history keeps, rather than the closest ids held now."""
    now = {r.id for store in stores for r in store.lessons()}
    if any(rid.startswith(given) for rid in now):
        return
    kept = {rid for s in stores if HISTORY in s.can for rid in s.changed_ids()}
    gone = sorted(rid for rid in kept - now if rid.startswith(given))
    if given and len(gone) == 1:
        msg = (
            f"lesson {gone[0]} was forgotten from {where}: `reflexion memory history` shows what "
            "it was, and `reflexion memory revert` brings it back"
        )
        raise UsageError(msg)


def _held(stores: Sequence[Curated], rid: str) -> tuple[Curated, Reflection] | None:
    for store in stores:
        found = store.get(rid)
        if found is not None:
            return store, found
    return None


def full_id(stores: Sequence[Curated], given: str, where: object, also: Iterable[str] = ()) -> str:
    """The id of the one lesson whose id starts with `given`, among the stores' lessons and the
    ids `also` (forgotten lessons' that a history keeps); a UsageError naming the matches when
    several do, or the closest ids when none does.

    >>> class Store:  # a stand-in: full_id reads only `lessons()`
    ...     def lessons(self):
    ...         return [Reflection(i, "x", "run", "reflexion", "e", "t", 0, 1, 0.0, 0.0)
    ...                 for i in ("3f9a01", "3f9a77", "c0ffee")]
    >>> full_id([Store()], "c0", "x")
    'c0ffee'
    >>> try:
    ...     full_id([Store()], "3f9a", "x")
    ... except UsageError as exc:
    ...     print(exc)
    id '3f9a' is ambiguous in x: 2 lessons start with it (3f9a01, 3f9a77)
    """
    every = sorted({r.id for store in stores for r in store.lessons()} | set(also))
    matches = [rid for rid in every if rid.startswith(given)] if given else []
    if given in matches or len(matches) == 1:
        return given if given in matches else matches[0]
    if not matches:
        what = "reflection with id"
        raise unknown(what, given, every, where, cutoff=ID_LIKE)
    more = len(matches) - SHOWN
    shown = ", ".join(matches[:SHOWN]) + (f" and {more} more" if more > 0 else "")
    msg = f"id {given!r} is ambiguous in {where}: {len(matches)} lessons start with it ({shown})"
    raise UsageError(msg)


def changed(stores: Sequence[Curated], given: str, where: object) -> tuple[Curated, str]:
    """The store that holds lesson `given` (its id, or a prefix of one id alone) or kept it in
    its history, forgotten lessons included, and the full id; a UsageError as `full_id`'s."""
    store = with_history(stores, given)
    if store is None:
        kept = [rid for s in stores if HISTORY in s.can for rid in s.changed_ids()]
        given = full_id(stores, given, where, kept)
        store = with_history(stores, given)
    if store is None:  # full_id found it among these stores' lessons and histories
        raise AssertionError(given)
    return store, given


def with_history(stores: Sequence[Curated], rid: str) -> Curated | None:
    """The store that holds lesson `rid`, or else that kept it in its history."""
    for store in stores:
        if store.get(rid) is not None:
            return store
    for store in stores:
        if "history" in store.can and store.history(rid):
            return store
    return None


def credits_in(store: Curated) -> dict[str, Credit]:
    """Each lesson's credit, where the store keeps it (empty where it keeps none)."""
    return store.credits() if CREDIT in store.can else {}


def search_sources(stores: Sequence[Curated], text: str, k: int, embedder: str) -> list[Recalled]:
    """Hits from every store, most similar first. A store with no index of its own (the window
    list) is embedded here, with the run's embedding model."""
    from memory.embedders import embedder_for

    hits: list[Recalled] = []
    for store in stores:
        found = store.search(text, k)
        if all(h.similarity is not None for h in found):
            hits += found
            continue
        rs = store.lessons()
        query, *vectors = embedder_for(embedder).embed([text, *(r.text for r in rs)])
        for r, v in zip(rs, vectors, strict=True):
            hits.append(Recalled(r, sum(a * b for a, b in zip(query, v, strict=True))))
    return sorted(hits, key=lambda h: -(h.similarity or 0.0))[:k]


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


def utc(seconds: float) -> str:
    """A unix time as `memory` prints it (see the module's example)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def plural(n: int, word: str) -> str:
    """`1 reflection`, `2 reflections`."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def reflection_from(data: object, where: str) -> Reflection:
    """A lesson from one line of `memory export`, every field checked: a UsageError names the
    first field that is missing or of the wrong type."""
    import dataclasses

    if not isinstance(data, dict):
        msg = f"{where}: not a reflection from `memory export` (not a JSON object)"
        raise UsageError(msg)
    kinds = {"str": (str,), "int": (int,), "float": (int, float), "tuple[str, ...]": (list,)}
    for field in dataclasses.fields(Reflection):
        if field.name == "metadata":  # a dict of scalars, checked as remember checks it
            lesson_metadata(data.get("metadata"))
            continue
        if field.name not in data:
            if field.default is dataclasses.MISSING:
                msg = f"{where}: not a reflection from `memory export` (no field {field.name!r})"
                raise UsageError(msg)
            continue
        value = data[field.name]
        if isinstance(value, bool) or not isinstance(value, kinds[str(field.type)]):
            msg = (
                f"{where}: field {field.name!r} should be {kinds[str(field.type)][-1].__name__}"
                f", got {value!r:.40}"
            )
            raise UsageError(msg)
        if isinstance(value, list) and not all(isinstance(v, str) for v in value):
            msg = f"{where}: field {field.name!r} should be a list of task ids, got {value!r:.40}"
            raise UsageError(msg)
    for name in ("id", "text"):  # as `memory edit` refuses an empty text
        if not data[name].strip():
            msg = f"{where}: field {name!r} is empty"
            raise UsageError(msg)
    numbers = {
        f.name: float(data[f.name]) for f in dataclasses.fields(Reflection) if f.type == "float"
    }
    return Reflection.from_dict(data | numbers)


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
