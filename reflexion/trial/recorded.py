"""One task x strategy x seed: the state every strategy shares.

A strategy only decides WHICH actor role to call next; the trial records each call in the trace,
scores every candidate (visible), evaluates it (held-out, kept out of every Attempt), keeps the
best candidate, and talks to the memory.

    best = max(best, candidate)  # by visible score: the best score never decreases
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from reflexion.core.lesson_records import (
    Board,
    BoardEdit,
    Kind,
    Recalled,
    RecallScope,
    Reflection,
    is_own,
)
from reflexion.core.protocols import Actor, AnsweringEnv, Crediting, Env, Memory, Merging
from reflexion.core.records import Attempt, Call, Message, Point, Score, Step, Task, TaskResult
from reflexion.trial import experience
from reflexion.trial.feedback import shown_score
from reflexion.trial.gate import Replay
from reflexion.trial.provenance import left_by_rule, new_reflection, provenance
from reflexion.trial.self_tests import visible_score, write_self_tests
from reflexion.trial.settings import TrialSettings

StepSink = Callable[[Step], None]
FAILED_CHECK = -1e300  # the score of a candidate the env could not check: below any real score
# Who is calling, for the actor's model call (LangChain tags and metadata, so a LangSmith or other
# callback user can group calls by strategy, task, seed, episode). `ask` sets it around the call.
CALL_INFO: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("reflexion_call")


class TokenBudgetSpent(Exception):  # noqa: N818 - a signal, not an error
    """The trial used its --task-tokens: the strategy stops, and the trial returns its best."""


@dataclass
class TrialCounters:
    """What a trial has spent and found so far, for its result and its curve."""

    calls: int = 0  # model calls (a reused answer counts too)
    reused: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    errors: list[str] = field(default_factory=list)
    curve: list[Point] = field(default_factory=list)
    recalled: dict[int, list[str]] = field(default_factory=dict)  # episode -> lesson ids
    steps: int = 0  # trace steps written, for the next step's id
    best_passed: bool = False  # the best candidate's held-out verdict
    any_passed: bool = False
    start: float = field(default_factory=time.perf_counter)
    # seconds a reused answer is charged beyond the time it took (see Call.alone_s)
    reused_s: float = 0.0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class RecordedTrial:
    """The `Trial` a strategy drives (reflexion.core.protocols), recording every step."""

    settings: TrialSettings  # the run's, the same for each of its trials
    strategy: str
    env: Env
    task: Task
    actor: Actor
    seed: int
    sink: StepSink
    memory: Memory | None = None
    self_tests: tuple[str, ...] = ()  # the model's own tests of this task, once written
    attempts: list[Attempt] = field(default_factory=list)
    best: Attempt | None = None
    counters: TrialCounters = field(default_factory=TrialCounters)
    replay: Replay | None = None  # --gate: how a lesson it proposes is replayed (trial.gate)

    @property
    def budget(self) -> int:
        """The most candidates this trial may produce (--episodes)."""
        return self.settings.episodes

    @property
    def feedback(self) -> str:
        """What prompts show of a check (see shown_score)."""
        return self.settings.feedback

    @property
    def solved(self) -> bool:
        """Solved by the VISIBLE signal: the only one a strategy may act on."""
        return self.best is not None and self.best.score.solved

    @property
    def boards_change(self) -> bool:
        return experience.boards_change(self)

    @property
    def stores(self) -> bool:
        return self.memory is not None and not self.settings.frozen_memory

    def answer_of(self, candidate: str) -> str:
        """The part of a reply the env's check reads (see AnsweringEnv); else the reply."""
        env = self.env
        return env.answer(self.task, candidate) if isinstance(env, AnsweringEnv) else candidate

    async def ask(self, call: Awaitable[Call], episode: int) -> Call:
        """Run one actor role and record it in the trace. Under a token budget per task, once
        the trial has used it, no call starts (TokenBudgetSpent ends the strategy) unless the
        trial has no candidate yet: every trial returns one."""
        if self._over_budget():
            if isinstance(call, Coroutine):
                call.close()  # never started: no "never awaited" warning
            used = f"{self.counters.tokens} tokens used of {self.settings.task_tokens}"
            self._log(episode, "budget", output=used)
            raise TokenBudgetSpent
        info = {"strategy": self.strategy, "task_id": self.task.id, "seed": self.seed}
        token = CALL_INFO.set(info | {"episode": episode, "env": self.env.name})
        try:
            done = await call  # subtle: the coroutine runs here, so it sees CALL_INFO
        finally:
            CALL_INFO.reset(token)
        if done.llm:
            self.counters.calls += 1 + done.code_rounds  # each code round asked the model again
            self.counters.reused += done.reused
        self.counters.input_tokens += done.input_tokens
        self.counters.output_tokens += done.output_tokens
        self.counters.reused_s += done.alone - done.latency_s
        if done.error:
            self.counters.errors.append(f"episode {episode} {done.role}: {done.error}")
        self._log(episode, done.role, prompt=done.prompt, output=done.output, call=done)
        return done

    def _over_budget(self) -> bool:
        """Past --task-tokens, with a candidate in hand (the first answer is always asked)."""
        limit = self.settings.task_tokens
        return limit is not None and bool(self.attempts) and self.counters.tokens >= limit

    async def attempt(self, call: Call, episode: int) -> Attempt:
        """Score a candidate (visible), evaluate it (held-out), keep the best."""
        candidate = call.output
        score, signal = await visible_score(self, candidate, episode)
        held_out = await self.check("evaluate", self.env.evaluate, candidate, episode)
        await self._credit(episode, score, call.left_out)
        shown = shown_score(score, self.feedback)
        attempt = Attempt(episode, candidate, shown, call.prompt)
        self.attempts.append(attempt)
        data = score.to_dict() | {"signal": signal}
        data |= {"shown": shown.feedback} if shown != score else {}
        self._log(episode, "score", output=score.feedback, data=data)
        self._log(episode, "evaluate", output=held_out.feedback, data=held_out.to_dict())
        if self.best is None or score.value > self.best.score.value:
            self.best, self.counters.best_passed = attempt, held_out.solved
        self.counters.any_passed = self.counters.any_passed or held_out.solved
        assert self.best is not None
        self.counters.curve.append(
            Point(
                episode,
                score.value,
                self.best.score.value,
                self.counters.best_passed,
                held_out.solved,
                self.counters.tokens,
                self.counters.calls,
                score.solved,
                signal,
                self.counters.tokens,
            )
        )
        return attempt

    async def verify(self, candidate: str, episode: int) -> Score:
        """The visible check of a text that is not an attempt (see Trial.verify)."""
        score, signal = await visible_score(self, candidate, episode)
        data = score.to_dict() | {"signal": signal}
        self._log(episode, "verify", output=score.feedback, data=data)
        return score

    async def write_self_tests(self) -> None:
        """Before the first attempt (--signal self-tests or both; reflexion.trial.self_tests)."""
        self.self_tests = await write_self_tests(self)

    def note(self, episode: int, kind: str, output: str, data: dict[str, Any]) -> None:
        """A trace step that is not a model call (e.g. the self-tests kept)."""
        self._log(episode, kind, output=output, data=data)

    async def check(
        self, kind: str, check: Callable[[Task, str], Score], candidate: str, episode: int
    ) -> Score:
        """Run an env check off the event loop; an env that raises fails the attempt only."""
        try:
            return await asyncio.to_thread(check, self.task, candidate)
        except Exception as exc:  # noqa: BLE001 - env failures are data (STYLE habit 6)
            self.counters.errors.append(f"episode {episode} {kind}: {type(exc).__name__}: {exc}")
            # subtle: the text stays generic, since a held-out check's message may hold its secrets.
            return Score(FAILED_CHECK, False, f"the {kind} check failed on this answer")

    async def _credit(self, episode: int, score: Score, left_out: Sequence[str] = ()) -> None:
        """Credit the lessons recalled for this episode (less those --memory-tokens kept out),
        with what their attempt did against the trial's attempt before (see Crediting)."""
        ids = [i for i in self.counters.recalled.pop(episode, []) if i not in left_out]
        if not ids or not isinstance(self.memory, Crediting) or self.settings.frozen_memory:
            return  # a frozen memory is not written, its credit counts included
        before = self.attempts[-1].score.value if self.attempts else None
        outcome = None
        if before is not None:
            outcome = (
                "helped" if score.value > before else "hurt" if score.value < before else "same"
            )
        key = f"{self.settings.run_id}/{self.strategy}/{self.task.id}/{self.seed}/{episode}"
        await asyncio.to_thread(self.memory.credit, ids, outcome, key)

    def scope(self, episode: int, kind: Kind = Kind.REFLECTION) -> RecallScope:
        """Which lessons of `kind` this trial's `episode` may see (see RecallScope)."""
        s, stream = self.settings, self.settings.order == "stream"
        out = not s.warm_start
        if is_own(kind):  # a task's own notes: the run's --scope, every kind of lesson
            who = (self.env.name, self.task.id, s.run_id, self.strategy, self.seed, episode)
            return RecallScope(*who, s.scope, stream=stream, leave_task_out=out)
        if not stream:
            episode = 0  # subtle: in a parallel run no task is over, so none of this run's own
        who = (self.env.name, self.task.id, s.run_id, self.strategy, self.seed, episode)
        # for other tasks' use
        return RecallScope(*who, "global", stream=stream, kinds=(kind,), leave_task_out=out)

    async def recall(
        self,
        episode: int,
        kind: Kind = Kind.REFLECTION,
        k: int | None = None,
        pick: Callable[[list[Recalled]], list[Recalled]] | None = None,
    ) -> list[Recalled]:
        """The k (default --k) lessons of `kind` nearest the task (those `pick` keeps of them),
        traced with their provenance; their ids wait for the episode's verdict, to be credited."""
        if self.memory is None:
            return []
        scope, k, at = self.scope(episode, kind), k or self.settings.k, time.time()
        hits = await asyncio.to_thread(self.memory.recall, self.task.lookup, scope, k)
        rule = await asyncio.to_thread(left_by_rule, self.memory, self.task.lookup, scope, k)
        found, hits = hits, pick(hits) if pick is not None else hits
        self.counters.recalled.setdefault(episode, []).extend(h.reflection.id for h in hits)
        run_id, env = self.settings.run_id, self.env.name
        data = {"hits": [provenance(h, self.task.id, run_id) for h in hits], "at": at}
        data |= {"k": k, "scope": scope.scope, "stream": scope.stream, "env": env}
        data |= {"leave_task_out": scope.leave_task_out}
        data |= {} if is_own(kind) else {"kind": kind}
        data |= {"same_task_left_out": rule} if rule else {}
        if pick is not None:  # what the pick left out, for `memory why`
            shown = {h.reflection.id for h in hits}
            left = [h.reflection.id for h in found if h.reflection.id not in shown]
            data |= {"picked": getattr(pick, "__name__", "pick"), "left_out": left}
        text = "\n".join(h.reflection.text for h in hits)
        query = (Message("human", self.task.lookup),)  # what the store was asked
        self._log(episode, "recall", prompt=query, output=text, data=data)
        return hits

    async def note_draft(self, draft: str, refines: int, episode: int) -> None:
        """The first draft's verdicts, in the trace only (see Trial.note_draft)."""
        score, _ = await visible_score(self, draft, episode)
        held_out = await self.check("evaluate", self.env.evaluate, draft, episode)
        data = {"refines": refines, "solved": score.solved, "passed": held_out.solved}
        self._log(episode, "draft", output=draft, data=data)

    async def keep(
        self,
        kind: Kind,
        text: str,
        attempt: Attempt,
        key: str = "",
        distinct: float | None = None,
        rules: Board | None = None,
    ) -> Reflection | None:
        """Store one lesson of `kind` (an exemplar, an item) made from `attempt` (see Trial)."""
        return await experience.keep(self, kind, text, attempt, key, distinct, rules or Board())

    async def board(self, kind: Kind, episode: int, rules: Board | None = None) -> list[Reflection]:
        """The shared board of `kind` (rules, the cheatsheet), the most voted first."""
        return await experience.board(self, kind, episode, rules or Board())

    async def revise(
        self,
        kind: Kind,
        edits: Sequence[BoardEdit],
        episode: int,
        among: Sequence[Reflection] | None = None,
        rules: Board | None = None,
    ) -> list[str]:
        """Apply a reply's edits to the board of `kind` (reflexion.trial.board's `apply`)."""
        return await experience.revise(self, kind, edits, episode, among, rules or Board())

    async def remember(self, call: Call, attempt: Attempt) -> Reflection | None:
        """Store a reflection with its provenance; a failed reflect call stores nothing."""
        if self.memory is None or call.error or not call.output.strip():
            return None
        if self.settings.frozen_memory:
            self._log(attempt.episode, "remember", output="", data={"frozen": True})
            return None
        if experience.refused(self, Kind.REFLECTION, call.output, attempt.episode):
            return None
        who = (self.settings.run_id, self.strategy, self.env.name, self.task.id, self.seed)
        reflection = new_reflection(who, call.output, attempt, self.task.prompt)
        data: dict[str, Any] = {"id": reflection.id}
        data |= {"flag": reflection.flag} if reflection.flag else {}
        return await experience.store(self, reflection, await self._twin(reflection), data)

    async def _twin(self, reflection: Reflection) -> Recalled | None:
        """The lesson this trial could recall next that is at least --dedup similar, if any."""
        dedup = self.settings.dedup
        if dedup is None or not isinstance(self.memory, Merging):
            return None
        scope = self.scope(reflection.episode + 1)
        near = await asyncio.to_thread(self.memory.nearest, reflection.text, scope)
        similar = near is not None and (near.similarity or 0.0) >= dedup
        return near if similar else None

    def replaying(self, task: Task, memory: Memory, sink: StepSink) -> RecordedTrial:
        """This trial's replay of an earlier `task` over `memory`, its steps to `sink` (gate)."""
        return RecordedTrial(
            self.settings, self.strategy, self.env, task, self.actor, self.seed, sink, memory
        )

    def result(self) -> TaskResult:
        if self.best is None:
            msg = f"strategy {self.strategy} finished task {self.task.id} without an attempt"
            raise RuntimeError(msg)
        return TaskResult(
            run_id=self.settings.run_id,
            env=self.env.name,
            task_id=self.task.id,
            strategy=self.strategy,
            seed=self.seed,
            best_candidate=self.best.candidate,
            best_score=self.best.score.value,
            best_episode=self.best.episode,
            final_passed=self.counters.best_passed,
            any_passed=self.counters.any_passed,
            attempts=len(self.attempts),
            llm_calls=self.counters.calls,
            input_tokens=self.counters.input_tokens,
            output_tokens=self.counters.output_tokens,
            # as tokens are: what the strategy would spend alone (reused answers at their cost)
            wall_s=round(time.perf_counter() - self.counters.start + self.counters.reused_s, 4),
            reused_calls=self.counters.reused,
            curve=self._final_curve(),
            errors=tuple(self.counters.errors),
        )

    def _final_curve(self) -> tuple[Point, ...]:
        """The curve, with calls made after the last attempt (a feedback that said STOP, a
        reflection) charged to the last point, so the curve's cost ends at the trial's cost."""
        *head, last = self.counters.curve
        tokens, calls = self.counters.tokens, self.counters.calls
        return (*head, dataclasses.replace(last, tokens=tokens, calls=calls))

    def _log(self, episode: int, kind: str, call: Call | None = None, **fields: Any) -> None:
        self.counters.steps += 1
        step_id = f"{self.strategy}/{self.task.id}/{self.seed}/{self.counters.steps:03d}-{kind}"
        tokens: dict[str, Any] = {}
        if call is not None:
            tokens = {
                "input_tokens": call.input_tokens,
                "output_tokens": call.output_tokens,
                "latency_s": round(call.latency_s, 4),
                "error": call.error,
                "data": {
                    "cached_tokens": call.cached_tokens,
                    "reused": call.reused,
                    "retries": call.retries,
                }
                | ({"alone_s": round(call.alone_s, 4)} if call.alone_s is not None else {})
                | ({"memory_tokens": call.memory_tokens} if call.memory_tokens else {})
                | ({"sample": call.sample} if call.sample else {})
                | ({"shortened": call.shortened} if call.shortened else {})
                | ({"code_rounds": call.code_rounds} if call.code_rounds else {})
                | ({"over_bound": list(call.left_out)} if call.left_out else {}),
            }
        self.sink(
            Step(
                step_id,
                self.settings.run_id,
                self.strategy,
                self.task.id,
                self.seed,
                episode,
                kind,
                **fields,
                **tokens,
            )
        )
