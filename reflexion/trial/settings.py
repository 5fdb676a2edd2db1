"""What a trial reads of its run's settings. `RunConfig` (reflexion.runner.config) declares each
of them once, with its default and help, and is what every trial is handed; this protocol only
names what a trial may read, so the trial does not depend on the run's machinery.

    >>> from reflexion.runner.config import RunConfig
    >>> settings: TrialSettings = RunConfig(run_id="r", episodes=2, order="stream")
    >>> settings.k, settings.feedback, settings.order is Order.STREAM
    (3, 'actionable', True)
"""

from __future__ import annotations

from typing import Protocol

from reflexion.core.lesson_records import Order


class TrialSettings(Protocol):
    """The run's settings a trial reads; each is the RunConfig setting of that name."""

    @property
    def run_id(self) -> str: ...
    @property
    def episodes(self) -> int: ...  # the most candidates a trial may produce
    @property
    def k(self) -> int: ...  # lessons recalled per episode
    @property
    def scope(self) -> str: ...  # which lessons a recall may see (see RecallScope)
    @property
    def feedback(self) -> str: ...  # what prompts show of a check (reflexion.trial.feedback)
    @property
    def signal(self) -> str: ...  # "visible", "self-tests" or "both" (trial.self_tests)
    @property
    def self_tests(self) -> int: ...  # the most tests the model writes per task
    @property
    def task_tokens(self) -> int | None: ...  # no model call starts past it
    @property
    def dedup(self) -> float | None: ...  # merge a new lesson into one at least this similar
    @property
    def order(self) -> Order: ...  # stream: the tasks before this one are over (RecallScope)
    @property
    def frozen_memory(self) -> bool: ...  # recall only, store and change nothing
    @property
    def warm_start(self) -> bool: ...  # other runs' lessons of the same task are visible
