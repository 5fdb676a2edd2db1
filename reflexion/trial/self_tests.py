"""Self-written tests (`--signal self-tests` or `both`): before a trial's first attempt, the
model writes up to N unit tests from the task's visible prompt; the ones that parse and call
the function score every candidate. A greedy call with the same prompt is answered once per
run, so every strategy and seed gets the same tests, each charged their cost.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from envs.code_tasks.selftests import parse_self_tests
from reflexion.core.protocols import Actor, Env, SelfTestingEnv, SelfTestWriter
from reflexion.core.records import Call, Score, Task
from reflexion.trial.settings import TrialSettings


class SelfTestedTrial(Protocol):
    """What of a trial (reflexion.trial.recorded.RecordedTrial) the self-tests use."""

    settings: TrialSettings
    env: Env
    task: Task
    actor: Actor
    self_tests: tuple[str, ...]

    async def ask(self, call: Awaitable[Call], episode: int) -> Call: ...

    def note(self, episode: int, kind: str, output: str, data: dict[str, Any]) -> None: ...

    async def check(
        self, kind: str, check: Callable[[Task, str], Score], candidate: str, episode: int
    ) -> Score: ...


async def write_self_tests(trial: SelfTestedTrial) -> tuple[str, ...]:
    """The tests kept for this trial (none under --signal visible, or for a task without
    code); the trace gets a `self-tests` step with them and with each dropped one's reason."""
    env, task, count = trial.env, trial.task, trial.settings.self_tests
    if trial.settings.signal == "visible" or not isinstance(env, SelfTestingEnv):
        return ()
    subject = env.test_subject(task)
    if subject is None or not isinstance(trial.actor, SelfTestWriter):
        why = "this task has no code to test" if subject is None else "the actor writes none"
        trial.note(0, "self-tests", "", {"tests": [], "dropped": [], "note": why})
        return ()
    call = await trial.ask(trial.actor.write_tests(task, subject, count), 0)
    entry = str(task.spec.get("entry_point", ""))
    found = parse_self_tests(call.output, entry, count)
    trial.note(
        0, "self-tests", "\n".join(found.tests), {"tests": found.tests, "dropped": found.dropped}
    )
    return tuple(found.tests)


async def visible_score(trial: SelfTestedTrial, candidate: str, episode: int) -> tuple[Score, str]:
    """The visible score and the signal that gave it: the self-tests when the trial has any
    (with the env's visible tests too, for "both"), else the env's visible tests."""
    env, signal = trial.env, trial.settings.signal
    if trial.self_tests and isinstance(env, SelfTestingEnv):
        tests, both = trial.self_tests, signal == "both"

        def check(task: Task, text: str) -> Score:
            return env.score_with_tests(task, text, tests, visible=both)

        return await trial.check("score", check, candidate, episode), signal
    score = await trial.check("score", env.score, candidate, episode)
    return score, "visible" if signal == "visible" else "visible (no usable self-tests)"
