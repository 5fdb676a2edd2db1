"""`reflexion memory audit RUN`: measure whether a recalled lesson changed what followed.

For a sample of episodes that recalled lessons, each (episode, lesson) is a probe: the episode's
first call is made twice more with the run's own model or scripted actor, a fresh actor for the
same seed each time and greedy decoding: once with every lesson it recalled, once without that
one. The two candidates are scored by the env's visible check, and the lesson's effect is what
the visible score did: higher with it ("helped"), lower ("hurt") or the same. The held-out
verdicts are reported beside it, but never decide anything: `memory prune --harmful` acts on the
visible effect only, so no held-out signal shapes what a later prompt recalls.

A lesson of a store that keeps no credit (the window) is rerun and reported like any other; only
its count is not kept.

    >>> report = audit_run(Path("runs/main"), stores, sample=10)      # doctest: +SKIP
    >>> [(p.lesson, p.effect) for p in report.probes]                 # doctest: +SKIP
    [('3f9a0c1d2e4b5a69', 'helped'), ...]
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from envs.registry import make_env
from reflexion.core.curation import CREDIT, Curated
from reflexion.core.errors import UsageError
from reflexion.core.protocols import Env
from reflexion.core.records import Recalled, Record, Reflection, Step, Task
from reflexion.loop.config import FIELDS, RunConfig
from reflexion.loop.runfolder import RunFolder
from reflexion.loop.setup import ActorFor, actors_for


@dataclass(frozen=True)
class Probe(Record):
    """One episode, rerun with and without one of the lessons it recalled."""

    lesson: str
    run_id: str
    strategy: str
    task_id: str
    seed: int
    episode: int
    score_with: float
    score_without: float
    passed_with: bool  # held-out: reported, never acted on
    passed_without: bool
    recorded_score: float  # what the run itself scored in that episode

    @property
    def effect(self) -> str:
        if self.score_with == self.score_without:
            return "same"
        return "helped" if self.score_with > self.score_without else "hurt"

    @property
    def key(self) -> str:
        return f"{self.run_id}/{self.strategy}/{self.task_id}/{self.seed}/{self.episode}"


@dataclass(frozen=True)
class Recall:
    """An episode that recalled lessons, and what the run recorded for it."""

    run_id: str
    strategy: str
    task_id: str
    seed: int
    episode: int
    lessons: tuple[str, ...]  # ids, in the order recalled
    texts: str  # their texts as recalled, one after another (to check they are unchanged)
    score: float


@dataclass(frozen=True)
class AuditReport:
    probes: list[Probe]
    skipped: list[str]  # one line per probe that could not be rerun, with the reason
    candidates: int  # (episode, lesson) pairs there were to sample from
    counted: int = 0  # probes counted in the store now (not audited before)
    uncounted: tuple[str, ...] = ()  # kinds of store that keep no count (the window)


def recalls_in(steps: Sequence[Step]) -> list[Recall]:
    """Every episode whose recall returned lessons and that then made an attempt."""
    by_episode: dict[tuple[str, str, int, int], list[Step]] = {}
    for s in steps:
        by_episode.setdefault((s.strategy, s.task_id, s.seed, s.episode), []).append(s)
    found = []
    for (strategy, task_id, seed, episode), group in by_episode.items():
        recall = next((s for s in group if s.kind == "recall"), None)
        asked = next((s for s in group if s.kind == "generate"), None)
        score = next((s for s in group if s.kind == "score"), None)
        hits = recall.data.get("hits", []) if recall is not None else []
        if recall is None or not hits or asked is None or score is None:
            continue
        ids = tuple(str(h["id"]) for h in hits)
        value = float(score.data.get("value", 0.0))
        found.append(
            Recall(recall.run_id, strategy, task_id, seed, episode, ids, recall.output, value)
        )
    return found


def sample(recalls: Sequence[Recall], n: int, seed: int = 0) -> list[tuple[Recall, str]]:
    """`n` (episode, lesson) pairs drawn without replacement, the same for the same run."""
    pairs = [(r, lesson) for r in recalls for lesson in r.lessons]
    return sorted(random.Random(seed).sample(pairs, min(n, len(pairs))), key=_order)


def _order(pair: tuple[Recall, str]) -> tuple[str, str, int, int, str]:
    r, lesson = pair
    return (r.strategy, r.task_id, r.seed, r.episode, lesson)  # one run's trace: one run id


def audit_run(
    folder: Path,
    stores: Sequence[Curated],
    n: int,
    model: BaseChatModel | None = None,
    seed: int = 0,
) -> AuditReport:
    """Sample `n` probes from the run's trace, rerun them, and count each effect in the store
    that holds the lesson (a probe audited before for the same lesson is rerun and reported,
    not counted twice)."""
    config = _config(folder)
    recalls = recalls_in(RunFolder(folder).steps())
    chosen = sample(recalls, n, seed)
    if not chosen:
        return AuditReport([], [], 0)
    env = make_env(config.env) if config.env else None
    if env is None:
        msg = f"{folder} has no env name to rebuild (it was run with an env object)"
        raise UsageError(msg)
    make_actor = actors_for(env, config, model)
    holders = {r.id: store for store in stores for r in store.lessons()}
    lessons = {r.id: r for store in stores for r in store.lessons()}
    tasks = {t.id: t for t in env.tasks()}
    done = asyncio.run(_all(chosen, lessons, tasks, env, make_actor, config.concurrency))
    probes = [p for p in done if isinstance(p, Probe)]
    kept = [p for p in probes if CREDIT in holders[p.lesson].can]
    counted = sum(holders[p.lesson].count_audit(p.lesson, p.effect, p.key) for p in kept)
    uncounted = sorted(
        {holders[p.lesson].kind for p in probes} - {holders[p.lesson].kind for p in kept}
    )
    skipped = [p for p in done if isinstance(p, str)]
    candidates = sum(len(r.lessons) for r in recalls)
    return AuditReport(probes, skipped, candidates, counted, tuple(uncounted))


def _config(folder: Path) -> RunConfig:
    saved = RunFolder(folder).load_config()
    if saved is None:
        msg = f"{folder} is not a run folder (no config.json)"
        raise UsageError(msg)
    return RunConfig.from_dict({k: v for k, v in saved.items() if k in FIELDS})


async def _all(
    chosen: list[tuple[Recall, str]],
    lessons: dict[str, Reflection],
    tasks: dict[str, Task],
    env: Env,
    make_actor: ActorFor,
    concurrency: int,
) -> list[Probe | str]:
    limit = asyncio.Semaphore(concurrency)  # keep a served model busy, no more

    async def one(recall: Recall, lesson: str) -> Probe | str:
        async with limit:
            return await _probe(recall, lesson, lessons, tasks, env, make_actor)

    return list(await asyncio.gather(*(one(r, lesson) for r, lesson in chosen)))


async def _probe(
    recall: Recall,
    lesson: str,
    lessons: dict[str, Reflection],
    tasks: dict[str, Task],
    env: Env,
    make_actor: ActorFor,
) -> Probe | str:
    where = f"{recall.strategy} {recall.task_id} seed {recall.seed} episode {recall.episode}"
    task = tasks.get(recall.task_id)
    missing = [i for i in recall.lessons if i not in lessons]
    if task is None or missing:
        what = f"task {recall.task_id}" if task is None else f"lessons {', '.join(missing)}"
        return f"{where}, lesson {lesson}: {what} no longer there"
    recalled = [Recalled(lessons[i]) for i in recall.lessons]
    if "\n".join(r.reflection.text for r in recalled) != recall.texts:
        return f"{where}, lesson {lesson}: the recalled lessons were edited since the run"
    runs = []
    for kept in (recalled, [r for r in recalled if r.reflection.id != lesson]):
        call = await make_actor(recall.seed).generate(task, kept, 0)
        score = await asyncio.to_thread(env.score, task, call.output)
        held_out = await asyncio.to_thread(env.evaluate, task, call.output)
        runs.append((score.value, held_out.solved))
    (with_score, with_passed), (without_score, without_passed) = runs
    where_from = (recall.run_id, recall.strategy, recall.task_id, recall.seed, recall.episode)
    return Probe(
        lesson, *where_from, with_score, without_score, with_passed, without_passed, recall.score
    )
