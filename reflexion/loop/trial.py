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
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from reflexion.core.protocols import (
    Actor,
    Crediting,
    Env,
    Memory,
    Merging,
)
from reflexion.core.records import (
    Attempt,
    Call,
    Message,
    Point,
    Recalled,
    RecallScope,
    Reflection,
    Score,
    Step,
    Task,
    TaskResult,
)
from reflexion.loop.budget import TokenBudgetSpent
from reflexion.loop.feedback import shown_score
from reflexion.loop.provenance import new_reflection, provenance
from reflexion.loop.signals import visible_score, write_self_tests

StepSink = Callable[[Step], None]
FAILED_CHECK = -1e300  # the score of a candidate the env could not check: below any real score
# Who is calling, for the actor's model call (LangChain tags and metadata, so a LangSmith or other
# callback user can group calls by strategy, task, seed, episode). `ask` sets it around the call.
CALL_INFO: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("reflexion_call")


@dataclass
class RecordedTrial:
    """The `Trial` a strategy drives (reflexion.core.protocols), recording every step."""

    run_id: str
    strategy: str
    env: Env
    task: Task
    actor: Actor
    seed: int
    budget: int  # the most candidates this trial may produce (episodes / iterations)
    sink: StepSink
    memory: Memory | None = None
    k: int = 3
    scope: str = "task"
    feedback: str = "actionable"  # what prompts show of a check (see shown_score)
    signal: str = "visible"  # "visible", "self-tests" or "both" (see write_self_tests)
    self_test_count: int = 5
    self_tests: tuple[str, ...] = ()  # the model's own tests of this task, once written
    token_budget: int | None = None  # --task-tokens: no model call starts past it (see ask)
    dedup: float | None = None  # --dedup: merge a new lesson into one this similar
    stream: bool = False  # --order stream: earlier tasks are over (see RecallScope)
    attempts: list[Attempt] = field(default_factory=list)
    best: Attempt | None = None
    _best_passed: bool = False
    _any_passed: bool = False
    _curve: list[Point] = field(default_factory=list)
    _calls: int = 0
    _reused: int = 0
    _tokens: tuple[int, int] = (0, 0)
    _errors: list[str] = field(default_factory=list)
    _recalled: dict[int, list[str]] = field(default_factory=dict)  # episode -> lesson ids
    _n: int = 0
    _start: float = field(default_factory=time.perf_counter)

    @property
    def solved(self) -> bool:
        """Solved by the VISIBLE signal: the only one a strategy may act on."""
        return self.best is not None and self.best.score.solved

    async def ask(self, call: Awaitable[Call], episode: int) -> Call:
        """Run one actor role and record it in the trace. Under a token budget per task, once
        the trial has used it, no call starts (TokenBudgetSpent ends the strategy) unless the
        trial has no candidate yet: every trial returns one."""
        if self._over_budget():
            if isinstance(call, Coroutine):
                call.close()  # never started: no "never awaited" warning
            used = f"{sum(self._tokens)} tokens used of {self.token_budget}"
            self._log(episode, "budget", output=used)
            raise TokenBudgetSpent
        info = {"strategy": self.strategy, "task_id": self.task.id, "seed": self.seed}
        token = CALL_INFO.set(info | {"episode": episode, "env": self.env.name})
        try:
            done = await call  # subtle: the coroutine runs here, so it sees CALL_INFO
        finally:
            CALL_INFO.reset(token)
        if done.llm:
            self._calls += 1
            self._reused += done.reused
        self._tokens = (self._tokens[0] + done.input_tokens, self._tokens[1] + done.output_tokens)
        if done.error:
            self._errors.append(f"episode {episode} {done.role}: {done.error}")
        self._log(episode, done.role, prompt=done.prompt, output=done.output, call=done)
        return done

    def _over_budget(self) -> bool:
        """Past --task-tokens, with a candidate in hand (the first answer is always asked)."""
        limit = self.token_budget
        return limit is not None and bool(self.attempts) and sum(self._tokens) >= limit

    async def attempt(self, call: Call, episode: int) -> Attempt:
        """Score a candidate (visible), evaluate it (held-out), keep the best."""
        candidate = call.output
        score, signal = await visible_score(self, candidate, episode)
        held_out = await self.check("evaluate", self.env.evaluate, candidate, episode)
        await self._credit(episode, score)
        shown = shown_score(score, self.feedback)
        attempt = Attempt(episode, candidate, shown, call.prompt)
        self.attempts.append(attempt)
        data = score.to_dict() | {"signal": signal}
        data |= {"shown": shown.feedback} if shown != score else {}
        self._log(episode, "score", output=score.feedback, data=data)
        self._log(episode, "evaluate", output=held_out.feedback, data=held_out.to_dict())
        if self.best is None or score.value > self.best.score.value:
            self.best, self._best_passed = attempt, held_out.solved
        self._any_passed = self._any_passed or held_out.solved
        assert self.best is not None
        self._curve.append(
            Point(
                episode,
                score.value,
                self.best.score.value,
                self._best_passed,
                held_out.solved,
                sum(self._tokens),
                self._calls,
                score.solved,
                signal,
                sum(self._tokens),
            )
        )
        return attempt

    async def write_self_tests(self) -> None:
        """Before the first attempt (--signal self-tests or both; reflexion.loop.signals)."""
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
            self._errors.append(f"episode {episode} {kind}: {type(exc).__name__}: {exc}")
            # subtle: the text stays generic, since a held-out check's message may hold its secrets.
            return Score(FAILED_CHECK, False, f"the {kind} check failed on this answer")

    async def _credit(self, episode: int, score: Score) -> None:
        """Credit the lessons recalled for this episode with what their attempt did against
        the trial's attempt before (see Crediting)."""
        ids = self._recalled.pop(episode, [])
        if not ids or not isinstance(self.memory, Crediting):
            return
        before = self.attempts[-1].score.value if self.attempts else None
        outcome = None
        if before is not None:
            outcome = (
                "helped" if score.value > before else "hurt" if score.value < before else "same"
            )
        await asyncio.to_thread(self.memory.credit, ids, outcome)

    async def recall(self, episode: int) -> list[Recalled]:
        if self.memory is None:
            return []
        who = (self.env.name, self.task.id, self.run_id, self.strategy, self.seed, episode)
        scope = RecallScope(*who, self.scope, stream=self.stream)
        at = time.time()
        hits = await asyncio.to_thread(self.memory.recall, self.task.prompt, scope, self.k)
        data = {"hits": [provenance(h, self.task.id, self.run_id) for h in hits], "at": at}
        data |= {"k": self.k, "scope": self.scope, "stream": self.stream, "env": self.env.name}
        self._recalled[episode] = [h.reflection.id for h in hits]
        text = "\n".join(h.reflection.text for h in hits)
        query = (Message("human", self.task.prompt),)  # what the store was asked
        self._log(episode, "recall", prompt=query, output=text, data=data)
        return hits

    async def remember(self, call: Call, attempt: Attempt) -> Reflection | None:
        """Store a reflection with its provenance; a failed reflect call stores nothing."""
        if self.memory is None or call.error or not call.output.strip():
            return None
        who = (self.run_id, self.strategy, self.env.name, self.task.id, self.seed)
        reflection = new_reflection(who, call.output, attempt, self.task.prompt)
        data: dict[str, Any] = {"id": reflection.id}
        data |= {"flag": reflection.flag} if reflection.flag else {}
        twin = await self._twin(reflection)
        if twin is not None and isinstance(self.memory, Merging):  # a near-duplicate: merged
            data |= {"merged_into": twin.reflection.id, "similarity": twin.similarity}
        # subtle: the trace line comes first. If we die between the two, the resumed run sees the
        # id in the set-aside trace and deletes it; the other order could leave a stray reflection.
        self._log(attempt.episode, "remember", output=reflection.text, data=data)
        if twin is not None and isinstance(self.memory, Merging):
            await asyncio.to_thread(self.memory.merge, twin.reflection.id, reflection)
            return twin.reflection
        await asyncio.to_thread(self.memory.add, [reflection])
        return reflection

    async def _twin(self, reflection: Reflection) -> Recalled | None:
        """The lesson this trial could recall next that is at least --dedup similar, if any."""
        if self.dedup is None or not isinstance(self.memory, Merging):
            return None
        who = (self.env.name, self.task.id, self.run_id, self.strategy, self.seed)
        scope = RecallScope(*who, reflection.episode + 1, self.scope, stream=self.stream)
        near = await asyncio.to_thread(self.memory.nearest, reflection.text, scope)
        similar = near is not None and (near.similarity or 0.0) >= self.dedup
        return near if similar else None

    def result(self) -> TaskResult:
        if self.best is None:
            msg = f"strategy {self.strategy} finished task {self.task.id} without an attempt"
            raise RuntimeError(msg)
        return TaskResult(
            run_id=self.run_id,
            env=self.env.name,
            task_id=self.task.id,
            strategy=self.strategy,
            seed=self.seed,
            best_candidate=self.best.candidate,
            best_score=self.best.score.value,
            best_episode=self.best.episode,
            final_passed=self._best_passed,
            any_passed=self._any_passed,
            attempts=len(self.attempts),
            llm_calls=self._calls,
            input_tokens=self._tokens[0],
            output_tokens=self._tokens[1],
            wall_s=round(time.perf_counter() - self._start, 4),
            reused_calls=self._reused,
            curve=self._final_curve(),
            errors=tuple(self._errors),
        )

    def _final_curve(self) -> tuple[Point, ...]:
        """The curve, with calls made after the last attempt (a feedback that said STOP, a
        reflection) charged to the last point, so the curve's cost ends at the trial's cost."""
        *head, last = self._curve
        tokens, calls = sum(self._tokens), self._calls
        return (*head, dataclasses.replace(last, tokens=tokens, calls=calls))

    def _log(self, episode: int, kind: str, call: Call | None = None, **fields: Any) -> None:
        self._n += 1
        step_id = f"{self.strategy}/{self.task.id}/{self.seed}/{self._n:03d}-{kind}"
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
                },
            }
        self.sink(
            Step(
                step_id,
                self.run_id,
                self.strategy,
                self.task.id,
                self.seed,
                episode,
                kind,
                **fields,
                **tokens,
            )
        )
