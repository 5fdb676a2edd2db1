"""`reflexion memory audit RUN`: measure whether a recalled lesson changed what followed.

For a sample of episodes that recalled lessons, each (episode, lesson) is a probe: the episode's
first call is made twice more with the run's own model or scripted actor, a fresh actor for the
same seed each time, decoded as the episode was (greedy, or best-of-N's n-th sample with its
seed): once with every lesson it recalled, once without that one. The two candidates are scored
by the env's visible check, and the lesson's effect is what the visible score did: higher with
it ("helped"), lower ("hurt") or the same. The held-out verdicts are reported beside it, but
never decide anything: `memory prune --harmful` acts on the visible effect only, so no held-out
signal shapes what a later prompt recalls.

Every kind of lesson is probed: an episode is rerun with everything its recall steps showed
(its own task's reflections, recalled exemplars or items, a board of rules or the cheatsheet),
and without one lesson. A board changes while a run goes on, so its lessons are rerun with the
text the trace recorded at that episode, whatever happened to them since: the probe replays the
episode. Other lessons are rerun with their stored text, and an episode whose stored lessons
were edited or forgotten since is skipped. A lesson of a store that keeps no credit (the
window), or one no longer stored (a rule dropped at 0 votes), is rerun and reported like any
other; only its count is not kept.

    >>> report = audit_run(Path("runs/main"), stores, sample=10)      # doctest: +SKIP
    >>> [(p.lesson, p.effect) for p in report.probes]                 # doctest: +SKIP
    [('3f9a0c1d2e4b5a69', 'helped'), ...]
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from envs.registry import make_env
from reflexion.core.curation import CREDIT, Curated
from reflexion.core.errors import UsageError
from reflexion.core.lesson_records import REFLECTION, Recalled, Reflection
from reflexion.core.protocols import Env
from reflexion.core.records import Record, Step, Task
from reflexion.core.runfolder import RunFolder
from reflexion.curate.recalls import recalls_seen
from reflexion.runner.config import FIELDS, RunConfig
from reflexion.runner.setup import ActorFor, actors_for


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
    kind: str = REFLECTION  # the lesson's kind

    @property
    def effect(self) -> str:
        if self.score_with == self.score_without:
            return "same"
        return "helped" if self.score_with > self.score_without else "hurt"

    @property
    def key(self) -> str:
        return f"{self.run_id}/{self.strategy}/{self.task_id}/{self.seed}/{self.episode}"


@dataclass(frozen=True)
class Shown:
    """What one recall step put before the model: its lessons, their kind, and their texts."""

    hits: tuple[dict[str, Any], ...]  # as the trace recorded them (id, run_id, task_id, ...)
    kind: str
    output: str  # the texts as recalled, one after another (to check they are unchanged)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(str(h["id"]) for h in self.hits)

    @property
    def recorded(self) -> bool:
        """Whether the trace kept each lesson's text as shown (a board: it changes)."""
        return all("text" in h for h in self.hits)


@dataclass(frozen=True)
class Recall:
    """An episode that recalled lessons, and what the run recorded for it."""

    run_id: str
    strategy: str
    task_id: str
    seed: int
    episode: int
    shown: tuple[Shown, ...]  # the episode's recall steps before its first generate, in order
    score: float
    sample: int = 0  # the generate's sample number (best-of-N: n > 0 was sampled, seeded by n)
    unshown: tuple[str, ...] = ()  # recalled, but over --memory-tokens: not in the prompt

    @property
    def lessons(self) -> tuple[str, ...]:
        """Every lesson id in the prompt, in the order recalled (each once): one recalled but
        left out by --memory-tokens is not probed, since its absence changes no prompt."""
        ids = (i for group in self.shown for i in group.ids if i not in self.unshown)
        return tuple(dict.fromkeys(ids))


@dataclass(frozen=True)
class AuditReport:
    probes: list[Probe]
    skipped: list[str]  # one line per probe that could not be rerun, with the reason
    candidates: int  # (episode, lesson) pairs there were to sample from
    counted: int = 0  # probes counted in the store now (not audited before)
    uncounted: tuple[str, ...] = ()  # kinds of store that keep no count (the window)


def recalls_in(steps: Sequence[Step]) -> list[Recall]:
    """Every episode whose recall steps, before its first generate, returned lessons (of any
    kind) and that then made an attempt."""
    by_episode: dict[tuple[str, str, int, int], list[Step]] = {}
    for s in steps:
        by_episode.setdefault((s.strategy, s.task_id, s.seed, s.episode), []).append(s)
    seen: dict[tuple[str, str, int, int], list[Step]] = {}
    for s in recalls_seen(steps):
        if s.data.get("hits"):
            seen.setdefault((s.strategy, s.task_id, s.seed, s.episode), []).append(s)
    found = []
    for (strategy, task_id, seed, episode), group in by_episode.items():
        asked = next((s for s in group if s.kind == "generate"), None)
        score = next((s for s in group if s.kind == "score"), None)
        recalls = seen.get((strategy, task_id, seed, episode), [])
        if asked is None or score is None or not recalls:
            continue
        shown = tuple(
            Shown(tuple(s.data["hits"]), str(s.data.get("kind", REFLECTION)), s.output)
            for s in recalls
        )
        value, sample = float(score.data.get("value", 0.0)), int(asked.data.get("sample", 0))
        where = (recalls[0].run_id, strategy, task_id, seed, episode)
        unshown = tuple(str(i) for i in asked.data.get("over_bound", ()))
        found.append(Recall(*where, shown, value, sample, unshown))
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
    held = [p for p in probes if p.lesson in holders]  # not a rule dropped since
    kept = [p for p in held if CREDIT in holders[p.lesson].can]
    counted = sum(holders[p.lesson].count_audit(p.lesson, p.effect, p.key) for p in kept)
    uncounted = sorted(
        {holders[p.lesson].kind for p in held} - {holders[p.lesson].kind for p in kept}
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
    if task is None:
        return f"{where}, lesson {lesson}: task {recall.task_id} no longer there"
    recalled: list[Recalled] = []
    for group in recall.shown:
        found = _as_shown(group, lessons, recall, env.name)
        if isinstance(found, str):
            return f"{where}, lesson {lesson}: {found}"
        recalled += found
    runs = []
    for kept in (recalled, [r for r in recalled if r.reflection.id != lesson]):
        call = await make_actor(recall.seed).generate(task, kept, recall.sample)
        score = await asyncio.to_thread(env.score, task, call.output)
        held_out = await asyncio.to_thread(env.evaluate, task, call.output)
        runs.append((score.value, held_out.solved))
    (with_score, with_passed), (without_score, without_passed) = runs
    where_from = (recall.run_id, recall.strategy, recall.task_id, recall.seed, recall.episode)
    kind = next(r.reflection.kind for r in recalled if r.reflection.id == lesson)
    scores = (with_score, without_score, with_passed, without_passed, recall.score)
    return Probe(lesson, *where_from, *scores, kind)


def _as_shown(
    group: Shown, lessons: dict[str, Reflection], recall: Recall, env: str
) -> list[Recalled] | str:
    """The lessons of one recall step as the episode saw them, or why they cannot be."""
    if group.recorded:  # a board: the text the trace kept, on the lesson if it is still stored
        return [
            Recalled(_lesson_as_recorded(h, group.kind, lessons, recall, env)) for h in group.hits
        ]
    missing = [i for i in group.ids if i not in lessons]
    if missing:
        return f"lessons {', '.join(missing)} no longer there"
    now = [lessons[i] for i in group.ids]
    if "\n".join(r.text for r in now) != group.output:
        return "the recalled lessons were edited since the run"
    return [Recalled(r) for r in now]


def _lesson_as_recorded(
    hit: dict[str, Any], kind: str, lessons: dict[str, Reflection], recall: Recall, env: str
) -> Reflection:
    stored = lessons.get(str(hit["id"]))
    if stored is not None:
        return dataclasses.replace(stored, text=str(hit["text"]))
    who = (str(hit.get("run_id", "")), recall.strategy, env, str(hit.get("task_id", "")))
    return Reflection(str(hit["id"]), str(hit["text"]), *who, recall.seed, 0, 0.0, 0.0, kind=kind)
