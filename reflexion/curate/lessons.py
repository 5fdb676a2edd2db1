"""Finding lessons and tasks among a run's stores, as a person names them: a lesson by its id or
a prefix of it, a task by the id `reflexion memory list` prints (`quadratic/q2`, or the env's own
`q2`), lessons by their text (a search across stores). A name that matches nothing is a
UsageError that names the closest ones. And a lesson from a line a person brings in (`memory
import`), every field checked.

    >>> task_label("quadratic", "q2"), task_label("textworld", "textworld/r3")
    ('quadratic/q2', 'textworld/r3')
    >>> pick_task("quadratic/q2", [("quadratic", "q2")], "runs/q")
    ('quadratic', 'q2')
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from memory.metadata import lesson_metadata
from reflexion.core.curation import Curated
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import Recalled, Reflection

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


def reflection_from(data: object, where: str) -> Reflection:
    """A lesson from one line of `memory export`, every field checked: a UsageError names the
    first field that is missing or of the wrong type."""
    import dataclasses

    if not isinstance(data, dict):
        msg = f"{where}: not a reflection from `memory export` (not a JSON object)"
        raise UsageError(msg)
    kinds = {"str": (str,), "int": (int,), "float": (int, float), "tuple[str, ...]": (list,)}
    kinds["dict[str, Any]"] = (dict,)  # the gate's evidence
    for field in dataclasses.fields(Reflection):
        if field.name == "metadata":  # a dict of scalars, checked as remember checks it
            lesson_metadata(data.get("metadata"))
            continue
        if field.name not in data:
            if (
                field.default is dataclasses.MISSING
                and field.default_factory is dataclasses.MISSING
            ):
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
