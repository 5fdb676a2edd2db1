"""What each strategy wrote to its memory, read from a run's trace: the lessons by kind and what
was done with them, the board edits skipped, the replies that did not parse, and how much of
each curator reply (a `distill` call of insights, cheatsheet or bank) the memory took in.

>>> def step(kind, note=""):
...     return Step(kind, "R", "insights", "t", 0, 1, kind, output=note, data={"kind": "rule"})
>>> writes([step("distill"), step("revise", "add r1"), step("revised", "add r1")])[0]
Writes(strategy='insights', kinds={'rule': {'added': 1}}, skipped=0, unparsed=0, replies=1, \
in_full=1, in_part=0)
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reflexion.core.lesson_records import Kind
from reflexion.core.records import Record, Step

TrialKey = tuple[str, str, int]  # strategy, task, seed


@dataclass(frozen=True)
class Writes(Record):
    """The lessons one strategy wrote: kind -> what was done -> how many times (kept, added,
    upvoted, dropped, ...), board edits that were skipped, replies that did not parse, and its
    curator replies: how many, and how many the memory took in full or in part (the rest
    changed nothing)."""

    strategy: str
    kinds: dict[str, dict[str, int]] = field(default_factory=dict)
    skipped: int = 0
    unparsed: int = 0
    replies: int = 0
    in_full: int = 0  # changed the memory, and nothing in it was skipped or left unread
    in_part: int = 0  # changed the memory, and something in it was skipped or left unread


def writes(steps: Sequence[Step]) -> list[Writes]:
    """One Writes per strategy that wrote, skipped or failed to parse anything."""
    kinds: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    other: dict[str, Counter[str]] = defaultdict(Counter)
    pending: dict[TrialKey, list[Step]] = defaultdict(list)
    for s in steps:
        trial = (s.strategy, s.task_id, s.seed)
        if s.kind == "remember":
            kind = str(s.data.get("kind", Kind.REFLECTION))
            kinds[s.strategy][kind][_kept(s.data)] += 1
        elif s.kind == "revise":  # its kind comes on the "revised" step that closes the reply
            pending[trial].append(s)
        elif s.kind == "revised":
            for edit in pending.pop(trial, []):
                kinds[s.strategy][str(s.data.get("kind", "board"))][_edited(edit.output)] += 1
            other[s.strategy]["skipped"] += _skips(s)
        elif s.kind in ("unparsed", "skipped"):  # a reply not read; operations of one not applied
            other[s.strategy][s.kind] += 1 if s.kind == "unparsed" else _skips(s)
    for (strategy, _, _), edits in pending.items():  # no closing step: kind from the lesson
        for edit in edits:
            kind = str((edit.data.get("before") or {}).get("kind", "board"))
            kinds[strategy][kind][_edited(edit.output)] += 1
    taken = replies(steps)
    return [
        Writes(
            name,
            {k: dict(ops) for k, ops in kinds[name].items()},
            other[name]["skipped"],
            other[name]["unparsed"],
            *(taken[name][n] for n in ("replies", "in full", "in part")),
        )
        for name in dict.fromkeys([*kinds, *other, *taken])
    ]


def replies(steps: Sequence[Step]) -> dict[str, Counter[str]]:
    """Per strategy, its curator replies, and how many changed the memory in full or in part.
    What became of a reply is read from the steps its trial logs after it, up to the trial's
    next answer or reply: changes made (a board edit, a lesson kept) and changes not made (a
    reply or line unparsed, an operation skipped, a near-copy not kept)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    open_replies: dict[TrialKey, Counter[str]] = {}

    def close(trial: TrialKey) -> None:
        if (reply := open_replies.pop(trial, None)) is None:
            return
        missed = "in part" if reply["missed"] else "in full"
        counts[trial[0]].update(["replies", *([missed] if reply["made"] else [])])

    for s in steps:
        trial = (s.strategy, s.task_id, s.seed)
        if s.kind in ("distill", "generate"):
            close(trial)
            if s.kind == "distill":
                open_replies[trial] = Counter()
        elif trial in open_replies:
            open_replies[trial].update(_outcome(s))
    for trial in list(open_replies):
        close(trial)
    return counts


def _outcome(s: Step) -> dict[str, int]:
    """What one step after a curator reply says of it: changes made and not made."""
    if s.kind == "revise":
        return {"made": 1}
    mine = s.data.get("kind", Kind.REFLECTION) != Kind.REFLECTION  # bank's items, not reflections
    if s.kind == "remember" and mine:
        return {"made": 1} if _kept(s.data) in ("kept", "merged") else {"missed": 1}
    if s.kind == "unparsed":
        return {"missed": 1}
    return {"missed": _skips(s)} if s.kind in ("skipped", "revised") else {}


def _skips(s: Step) -> int:
    """The operations a `skipped` or `revised` step says were not applied."""
    lines = s.output.splitlines()
    return len(lines) if s.kind == "skipped" else sum(x.startswith("skipped") for x in lines)


def _kept(data: dict[str, Any]) -> str:
    if data.get("frozen"):
        return "not kept (frozen)"
    if "duplicate_of" in data:  # bank: a near-copy of an item kept for the same question
        return "not kept (a near-copy)"
    return "merged" if "merged_into" in data else "kept"


EDITED = {
    "add": "added",
    "edit": "edited",
    "upvote": "upvoted",
    "downvote": "downvoted",
    "replace": "rewritten",
}


def _edited(note: str) -> str:
    """What a revise step did, from its note ("upvote r1: 3 votes", "... 0 votes, dropped")."""
    if note.rstrip().endswith("dropped"):
        return "dropped"
    op = note.split(" ", 1)[0]  # insights: an edit that copied a rule upvotes it, "restated by"
    return EDITED.get(op, op) + (" (restated by an edit)" if "(restated by" in note else "")


WRITES_COLUMNS: tuple[str, ...] = ("strategy", "lessons written", "edits skipped")
WRITES_COLUMNS += ("replies unparsed", "curator replies taken in full")


def writes_rows(rows: Sequence[Writes]) -> list[tuple[str, ...]]:
    """The memory lines' cells: per kind, what was done how often.

    >>> writes_rows([Writes("insights", {"rule": {"added": 2, "dropped": 1}}, 1, 0, 3, 1, 1)])[0]
    ('insights', 'rule: 2 added, 1 dropped', '1', '0', '1 of 3 (1 in part, 1 changed nothing)')
    """
    return [
        (
            w.strategy,
            "; ".join(
                f"{kind}: " + ", ".join(f"{n} {op}" for op, n in ops.items())
                for kind, ops in w.kinds.items()
            )
            or "none",
            str(w.skipped),
            str(w.unparsed),
            _taken(w),
        )
        for w in rows
    ]


def _taken(w: Writes) -> str:
    """'-' without curator replies, else 'N of M' with the rest said."""
    if not w.replies:
        return "-"
    nothing = w.replies - w.in_full - w.in_part
    rest = [f"{w.in_part} in part"] * bool(w.in_part)
    rest += [f"{nothing} changed nothing"] * bool(nothing)
    return f"{w.in_full} of {w.replies}" + (f" ({', '.join(rest)})" if rest else "")


WRITES_TITLE = "Memory written"
WRITES_TEXT = (
    "Per strategy, the lessons it wrote, by kind: kept (stored from an attempt), merged (into a "
    "near-duplicate), not kept (frozen memory, or a near-copy that was skipped), and the board "
    "changes (a rule added, edited, up- or downvoted, dropped at zero votes; an edit that "
    "restated another rule upvotes that rule; a cheatsheet rewritten). Edits skipped: board "
    "edits that could not apply (a missing id, an empty text, a near-copy, a frozen memory, a "
    "board outside --order stream), and for skills the programs not kept because they did not "
    "pass the task's check on their own. Replies unparsed: replies, or lines of them, that were "
    "not in the expected form; they change nothing. Curator replies taken in full: the replies of "
    "insights, cheatsheet and bank (distill calls) that changed the memory with nothing in them "
    "skipped or unparsed (an insights edit that restates another rule counts, as the upvote of "
    "that rule it becomes); in part: changed it, with something skipped or unparsed; changed "
    "nothing: every operation skipped or without effect, or the reply unparsed or empty."
)
