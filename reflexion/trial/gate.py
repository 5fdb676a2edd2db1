"""The gate (--gate K): a lesson a design proposes reaches no later prompt until replays show it
helps. Before a new lesson is stored, or a reply's edits change a board, the trial replays up to
K tasks that the stream has already run, each twice, paired: the first prompt the task would get
now (the design's own recall over the memory as it stands), once with the candidate and once
without it. Nothing else differs, and a greedy call that repeats is answered from the run's
cache. Each replay is scored by the stream's visible check only, the one the stream showed the
model when it ran the task.

    admit  when  won > lost   (won: solved with it, not without; lost: the other way round)

or, with `--gate-rule no-worse`, when won >= lost over at least one replayed task: a lesson
whose replays all tie is admitted, one that no earlier recall shows is not (GateRule).

Which tasks: for a lesson recalled by similarity (an exemplar, an item, a skill, a reflection in
global scope), the earlier tasks nearest to the lesson whose recall, with the candidate in the
memory, shows it; for a board (ExpeL's rules, the cheatsheet: in every prompt), the earlier tasks
nearest to the task the lesson came from. Never that task itself: a lesson that fixes only the
task it came from has not shown that it carries.

A rejected lesson is still stored, marked `rejected` with its evidence (the tasks replayed, won,
lost and tied, and the trace ids of the replays' calls); no recall shows it (RecallScope). The
replays' calls are the trial's own: their tokens and calls count in its cost, and each is a
`replay` step of its trace.

    >>> Verdict(("q1", "q2", "q3"), won=1, lost=0, tied=2).admitted
    True
    >>> Verdict(("q1", "q2"), won=1, lost=1, tied=0).admitted
    False
    >>> Verdict(("q1", "q2"), won=0, lost=0, tied=2, rule=GateRule.NO_WORSE).admitted
    True
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from reflexion.core.lesson_records import (
    ADMITTED,
    REJECTED,
    GateRule,
    Kind,
    Recalled,
    RecallScope,
    Reflection,
)
from reflexion.core.protocols import Actor, Memory
from reflexion.core.records import Score, Step, Task

SCANNED = 4  # times K: the nearest earlier tasks looked at for ones whose recall shows a lesson


class Replaying(Protocol):
    """What the gate uses of a trial (reflexion.trial.recorded.RecordedTrial)."""

    @property
    def task(self) -> Task: ...
    @property
    def actor(self) -> Actor: ...
    @property
    def memory(self) -> Memory | None: ...
    @property
    def strategy(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def counters(self) -> Any: ...  # reflexion.trial.recorded.TrialCounters
    @property
    def sink(self) -> Callable[[Step], None]: ...

    def replaying(self, task: Task, memory: Memory, sink: Callable[[Step], None]) -> Any: ...

    def note(self, episode: int, kind: str, output: str, data: dict[str, Any]) -> None: ...


# what a design shows the first prompt of a task: (trial, episode) -> the lessons recalled
Shown = Callable[[Any], Awaitable[list[Recalled]]]


@dataclass(frozen=True)
class Replay:
    """The gate of one trial: at most `k` replays a candidate, of the stream's tasks before
    this one (`earlier`, oldest first), each prompt made by `shown` (the design's recall for a
    task's first attempt). A lesson of a kind `shown` never shows (`insights` keeps successes
    it shows no prompt, to critique them) cannot mislead a prompt, and is stored as it is."""

    k: int
    earlier: tuple[Task, ...]
    shown: Shown
    kinds: tuple[str, ...] = ()  # the kinds `shown` shows: a lesson of another kind is not judged
    rule: GateRule = GateRule.HELPS


@dataclass(frozen=True)
class Verdict:
    """The paired replays of one candidate: the tasks replayed, and how the candidate did."""

    replayed: tuple[str, ...]
    won: int = 0
    lost: int = 0
    tied: int = 0
    calls: tuple[str, ...] = ()  # the trace ids of the replays' model calls
    rule: GateRule = GateRule.HELPS

    @property
    def admitted(self) -> bool:
        return self.rule.admits(self.won, self.lost, self.tied)

    @property
    def status(self) -> str:
        return ADMITTED if self.admitted else REJECTED

    def evidence(self, k: int) -> dict[str, Any]:
        """What a gated lesson keeps of its verdict (Reflection.evidence)."""
        told = {"replayed": list(self.replayed), "won": self.won, "lost": self.lost}
        return told | {"tied": self.tied, "k": k, "rule": self.rule.said, "calls": list(self.calls)}

    def said(self) -> str:
        """One line for the trace and the board's notes, as a gated lesson says it.

        >>> Verdict(("q1",), won=0, lost=1).said()
        'rejected by the gate: 0 won, 1 lost, 0 tied over 1 replayed task'
        """
        probe = Reflection("", "", "", "", "", "", 0, 0, 0.0, 0.0)
        return dataclasses.replace(probe, status=self.status, evidence=self.evidence(0)).verdict()


class View:
    """A memory as one replay reads it: `base`, with the lessons `added` (new ones, or a board's
    lessons as a reply's edits would leave them) in place of those with the ids `replaced`.
    Recall only; the added lessons are ranked with the base's own candidates by the base's
    ranking where it has one (memory.ranking), else put first."""

    def __init__(
        self, base: Memory, added: Sequence[Reflection], replaced: Sequence[str] = ()
    ) -> None:
        self.base, self.added, self.replaced = base, tuple(added), set(replaced)
        self.embedder = getattr(base, "embedder", None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)  # e.g. a store's name, as the base has it

    def recall(self, text: str, scope: RecallScope, k: int) -> list[Recalled]:
        ranking = getattr(self.base, "ranking", None)
        n = ranking.candidates(k) if ranking is not None else k
        hits = self.base.recall(text, scope, n + len(self.replaced))
        hits = [h for h in hits if h.reflection.id not in self.replaced][:n]
        new = [r for r in self.added if scope.admits(r)]
        if not new:
            return hits[:k]
        similar = _similar(self.embedder, text, [r.key or r.text for r in new])
        pool = [dataclasses.replace(h, score=None) for h in hits]
        pool += [Recalled(r, s) for r, s in zip(new, similar, strict=True)]
        if ranking is None or not text:
            return [*pool[len(hits) :], *pool[: len(hits)]][:k]
        return list(ranking.rank(pool, scope.task_id, k))


def _similar(embedder: Any, text: str, texts: Sequence[str]) -> list[float | None]:
    """Cosine similarity of `text` to each of `texts` by `embedder` (None without one)."""
    if embedder is None or not text:
        return [None] * len(texts)
    from reflexion.trial.board import by_embedding  # the board's cosine, not a copy

    return [float(s) for s in by_embedding(embedder.embed)(text, texts)]


async def judge(
    trial: Replaying,
    replay: Replay,
    episode: int,
    added: Sequence[Reflection],
    replaced: Sequence[str] = (),
) -> Verdict:
    """Replay up to K earlier tasks with the candidate (`added`, in place of `replaced`) and
    without it, and count; the replays' calls are charged to `trial` and traced as its steps."""
    base = trial.memory
    assert base is not None
    view = View(base, added, replaced)
    tasks = await _chosen(trial, replay, view, added)
    pairs = [
        asyncio.gather(_replayed(trial, replay, t, base), _replayed(trial, replay, t, view))
        for t in tasks
    ]
    won = lost = tied = 0
    calls: list[str] = []
    replays = await asyncio.gather(*pairs)
    for task, ((without, steps_a), (with_, steps_b)) in zip(tasks, replays, strict=True):
        won, lost = won + (with_ and not without), lost + (without and not with_)
        tied += with_ == without
        for arm, steps in (("without", steps_a), ("with", steps_b)):
            calls += [relog(trial, s, episode, {"replayed": task.id, "arm": arm}) for s in steps]
    verdict = Verdict(tuple(t.id for t in tasks), won, lost, tied, tuple(calls), replay.rule)
    data = verdict.evidence(replay.k) | {"status": verdict.status, "ids": [r.id for r in added]}
    trial.note(episode, "gate", verdict.said(), data)
    return verdict


def judged(lessons: Sequence[Reflection], verdict: Verdict, k: int) -> list[Reflection]:
    """`lessons` with the gate's verdict on them (status and evidence)."""
    evidence = verdict.evidence(k)
    return [dataclasses.replace(r, status=verdict.status, evidence=evidence) for r in lessons]


async def _replayed(
    trial: Replaying, replay: Replay, task: Task, memory: Memory
) -> tuple[bool, list[Step]]:
    """Whether `task`'s first prompt, over `memory`, gets an answer its visible check passes;
    and the replay's model calls, as steps."""
    steps: list[Step] = []
    again = trial.replaying(task, memory, steps.append)
    shown = await replay.shown(again)
    call = await again.ask(trial.actor.generate(task, shown, sample=0), 1)
    score: Score = await again.verify(call.output, 1)
    charge(trial, again)
    return score.solved, [s for s in steps if s.input_tokens or s.output_tokens]


async def _chosen(
    trial: Replaying, replay: Replay, view: View, added: Sequence[Reflection]
) -> list[Task]:
    """The earlier tasks to replay (never the candidate's own task): for a board, the K nearest
    to this task; else the nearest to the lesson among those whose recall shows it."""
    own = {r.task_id for r in added} | {trial.task.id}
    earlier = [t for t in replay.earlier if t.id not in own]
    board = any(not _by_similarity(r) for r in added)
    anchor = trial.task.lookup if board else (added[0].key or added[0].text)
    ranked = await asyncio.to_thread(_nearest, view.embedder, anchor, earlier)
    if board:
        return ranked[: replay.k]
    ids, chosen = {r.id for r in added}, []
    for task in ranked[: SCANNED * replay.k]:
        shown = await replay.shown(trial.replaying(task, view, lambda step: None))
        if ids & {h.reflection.id for h in shown}:
            chosen.append(task)
        if len(chosen) == replay.k:
            break
    return chosen


def _by_similarity(r: Reflection) -> bool:
    """Whether a lesson is recalled by similarity, not shown whole in every prompt (a board)."""
    return r.kind not in (Kind.RULE, Kind.CHEATSHEET)


def _nearest(embedder: Any, text: str, tasks: Sequence[Task]) -> list[Task]:
    """`tasks` nearest to `text` first by `embedder`; without one, the most recent first."""
    if embedder is None or not tasks:
        return list(reversed(tasks))
    similar = _similar(embedder, text, [t.lookup for t in tasks])
    order = sorted(range(len(tasks)), key=lambda i: (-(similar[i] or 0.0), -i))
    return [tasks[i] for i in order]


def charge(trial: Replaying, replay: Replaying) -> None:
    """Count a replay's calls, tokens and time in the trial's cost."""
    mine, theirs = trial.counters, replay.counters
    mine.calls, mine.reused = mine.calls + theirs.calls, mine.reused + theirs.reused
    mine.input_tokens += theirs.input_tokens
    mine.output_tokens += theirs.output_tokens
    mine.reused_s += theirs.reused_s


def relog(trial: Replaying, step: Step, episode: int, data: dict[str, Any]) -> str:
    """A replay's model call as a `replay` step of the trial's trace at `episode` (the call's
    role in its data); returns the step's id."""
    trial.counters.steps += 1
    step_id = f"{trial.strategy}/{trial.task.id}/{trial.seed}/{trial.counters.steps:03d}-replay"
    more = step.data | data | {"role": step.kind}
    task_id = trial.task.id
    trial.sink(
        dataclasses.replace(
            step, id=step_id, task_id=task_id, episode=episode, kind="replay", data=more
        )
    )
    return step_id
