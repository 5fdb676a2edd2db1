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
import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from reflexion.core.protocols import Actor, Env, Memory
from reflexion.core.records import (
    Attempt,
    Call,
    Point,
    Recalled,
    RecallScope,
    Reflection,
    Score,
    Step,
    Task,
    TaskResult,
)

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
    attempts: list[Attempt] = field(default_factory=list)
    best: Attempt | None = None
    _best_passed: bool = False
    _any_passed: bool = False
    _curve: list[Point] = field(default_factory=list)
    _calls: int = 0
    _reused: int = 0
    _tokens: tuple[int, int] = (0, 0)
    _errors: list[str] = field(default_factory=list)
    _n: int = 0
    _start: float = field(default_factory=time.perf_counter)

    @property
    def solved(self) -> bool:
        """Solved by the VISIBLE signal: the only one a strategy may act on."""
        return self.best is not None and self.best.score.solved

    async def ask(self, call: Awaitable[Call], episode: int) -> Call:
        """Run one actor role and record it in the trace."""
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

    async def attempt(self, call: Call, episode: int) -> Attempt:
        """Score a candidate (visible), evaluate it (held-out), keep the best."""
        candidate = call.output
        score = await self._check("score", self.env.score, candidate, episode)
        held_out = await self._check("evaluate", self.env.evaluate, candidate, episode)
        attempt = Attempt(episode, candidate, score, call.prompt)
        self.attempts.append(attempt)
        self._log(episode, "score", output=score.feedback, data=score.to_dict())
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
            )
        )
        return attempt

    async def _check(
        self, kind: str, check: Callable[[Task, str], Score], candidate: str, episode: int
    ) -> Score:
        """Run an env check off the event loop; an env that raises fails the attempt only."""
        try:
            return await asyncio.to_thread(check, self.task, candidate)
        except Exception as exc:  # noqa: BLE001 - env failures are data (STYLE habit 6)
            self._errors.append(f"episode {episode} {kind}: {type(exc).__name__}: {exc}")
            # subtle: the text stays generic, since a held-out check's message may hold its secrets.
            return Score(FAILED_CHECK, False, f"the {kind} check failed on this answer")

    async def recall(self, episode: int) -> list[Recalled]:
        if self.memory is None:
            return []
        scope = RecallScope(
            self.env.name, self.task.id, self.run_id, self.strategy, self.seed, episode, self.scope
        )
        hits = await asyncio.to_thread(self.memory.recall, self.task.prompt, scope, self.k)
        data = {"hits": [{"id": h.reflection.id, "similarity": h.similarity} for h in hits]}
        self._log(episode, "recall", output="\n".join(h.reflection.text for h in hits), data=data)
        return hits

    async def remember(self, call: Call, attempt: Attempt) -> Reflection | None:
        """Store a reflection with its provenance; a failed reflect call stores nothing."""
        if self.memory is None or call.error or not call.output.strip():
            return None
        key = "/".join(
            map(
                str,
                (
                    self.run_id,
                    self.strategy,
                    self.env.name,
                    self.task.id,
                    self.seed,
                    attempt.episode,
                ),
            )
        )
        reflection = Reflection(
            id=hashlib.sha1(key.encode()).hexdigest()[:16],
            text=call.output.strip(),
            run_id=self.run_id,
            strategy=self.strategy,
            env=self.env.name,
            task_id=self.task.id,
            seed=self.seed,
            episode=attempt.episode,
            score=attempt.score.value,
            created=time.time(),
        )
        # subtle: the trace line comes first. If we die between the two, the resumed run sees the
        # id in the set-aside trace and deletes it; the other order could leave a stray reflection.
        self._log(attempt.episode, "remember", output=reflection.text, data={"id": reflection.id})
        await asyncio.to_thread(self.memory.add, [reflection])
        return reflection

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
