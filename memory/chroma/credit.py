"""Credit for each stored lesson: how often it was recalled, and what the attempt made with it
in context did against the trial's attempt before: its visible score rose ("helped"), fell
("hurt") or stayed the same. A recall with no earlier attempt in its trial (an episode-1 recall
of another task's or run's lesson) counts as a recall only. Kept in the lesson's own metadata,
so it travels with the store; an edit starts it afresh. Each count names its episode (a short
key), and an episode already counted is not counted again: a trial cut off by a crash and run
again on resume recalls the same lessons, and they are counted once.

Those counts are observations: other lessons were recalled alongside. `reflexion memory audit`
measures instead: it reruns a recalling episode without the lesson and records, as `audit_*`,
whether the visible score with the lesson was higher ("helped"), lower ("hurt") or the same.

    >>> credit_of({"recalls": 3, "helped": 1, "same": 2})
    Credit(recalls=3, helped=1, hurt=0, same=2, audit_helped=0, audit_hurt=0, audit_same=0)
    >>> memory.credits()["3f9a0c1d2e4b5a69"].recalls                  # doctest: +SKIP
    3
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reflexion.core.curation import OUTCOMES, Credit

if TYPE_CHECKING:
    from memory.chroma.rows import Rows

AUDITS = tuple(f"audit_{o}" for o in OUTCOMES)
COUNTS = ("recalls", *OUTCOMES, *AUDITS)
# Row metadata that is not the lesson itself: its counts, the credited and audited episodes, the
# merged provenances.
EXTRAS = (*COUNTS, "credited", "audited", "merged")
KEY_CHARS = 12  # a credited episode's key: a hash, so that a much-recalled board stays small


def credit_of(meta: Mapping[str, Any]) -> Credit:
    return Credit(*(int(meta.get(k, 0) or 0) for k in COUNTS))


@dataclass(frozen=True)
class Credits:
    """A Chroma store's credit per lesson and the audit's counts, over its rows
    (memory.chroma.rows.Rows; a part of ChromaMemory).

        >>> Credits(rows).credit(["3f9a0c1d2e4b5a69"], "helped", "run/q0/0/2")  # doctest: +SKIP
    """

    rows: Rows

    def credit(self, ids: Sequence[str], outcome: str | None, episode: str | None = None) -> None:
        """One more recall of each of `ids`, and one more `outcome` (None: no comparison); with
        `episode` (a key naming it), a lesson that episode counted before is not counted again."""
        if outcome is not None and outcome not in OUTCOMES:
            msg = f"outcome must be one of {OUTCOMES} or None, got {outcome!r}"
            raise ValueError(msg)
        key = None
        if episode is not None:
            key = hashlib.sha1(episode.encode()).hexdigest()[:KEY_CHARS]
        _count(self.rows, ids, ["recalls"] + ([outcome] if outcome else []), key)

    def count_audit(self, reflection_id: str, outcome: str, episode: str) -> bool:
        """One more audited `episode` (a key naming it) of this lesson, with its measured
        `outcome`; False (and nothing counted) if that episode was audited for it before."""
        if outcome not in OUTCOMES:
            msg = f"outcome must be one of {OUTCOMES}, got {outcome!r}"
            raise ValueError(msg)
        with self.rows.rows() as rows:
            found = rows.get(ids=[reflection_id], include=["metadatas"])
            if not found["ids"]:
                return False
            meta = dict((found["metadatas"] or [{}])[0] or {})
            done = list(json.loads(str(meta.get("audited", "[]"))))
            if episode in done:
                return False
            key = f"audit_{outcome}"
            meta |= {key: int(meta.get(key, 0) or 0) + 1, "audited": json.dumps([*done, episode])}
            rows.update(ids=[reflection_id], metadatas=[meta])
        return True

    def credits(self) -> dict[str, Credit]:
        """Every lesson's credit, by id."""
        with self.rows.rows() as rows:
            found = rows.get(include=["metadatas"])
        metas = found["metadatas"] or [{}] * len(found["ids"])
        return {rid: credit_of(meta or {}) for rid, meta in zip(found["ids"], metas, strict=True)}


def _count(store: Rows, ids: Sequence[str], keys: Sequence[str], episode: str | None) -> None:
    unique = list(dict.fromkeys(ids))
    if not unique:
        return
    with store.rows() as rows:  # read and write under one lock: no count is lost
        found = rows.get(ids=unique, include=["metadatas"])
        counted, metas = [], []
        for rid, meta in zip(found["ids"], found["metadatas"] or [], strict=True):
            new = dict(meta or {})
            done = list(json.loads(str(new.get("credited", "[]"))))
            if episode is not None and episode in done:
                continue  # this episode was counted (a resumed trial recalls it again)
            for key in keys:
                new[key] = int(new.get(key, 0) or 0) + 1
            if episode is not None:
                new["credited"] = json.dumps([*done, episode])
            counted.append(rid)
            metas.append(new)
        if metas:
            rows.update(ids=counted, metadatas=metas)
