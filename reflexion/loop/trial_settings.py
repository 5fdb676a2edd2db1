"""What every trial of a run is told: the run's settings a trial reads, as one record, built once
from the run's config and handed to each trial.

    >>> settings = TrialSettings("run", episodes=4)
    >>> settings.k, settings.feedback, settings.stream
    (3, 'actionable', False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reflexion.loop.config import RunConfig


@dataclass(frozen=True)
class TrialSettings:
    """A run's settings as one trial reads them; each field is the RunConfig setting of that
    name (see its help), except `stream`."""

    run_id: str
    episodes: int  # the most candidates a trial may produce (episodes / iterations)
    k: int = 3  # lessons recalled per episode
    scope: str = "task"  # which lessons a recall may see (see RecallScope)
    feedback: str = "actionable"  # what prompts show of a check (see reflexion.loop.feedback)
    signal: str = "visible"  # "visible", "self-tests" or "both" (see reflexion.loop.signals)
    self_tests: int = 5  # the most tests the model writes per task
    task_tokens: int | None = None  # no model call starts past it (see RecordedTrial.ask)
    dedup: float | None = None  # merge a new lesson into one at least this similar
    stream: bool = False  # --order stream: earlier tasks are over (see RecallScope)
    frozen: bool = False  # --frozen-memory: recall only, store and change nothing

    @classmethod
    def of(cls, config: RunConfig) -> TrialSettings:
        """The settings of `config`'s trials.

        >>> from reflexion.loop.config import RunConfig
        >>> TrialSettings.of(RunConfig(run_id="r", episodes=2, order="stream")).stream
        True
        """
        return cls(
            run_id=config.run_id,
            episodes=config.episodes,
            k=config.k,
            scope=config.scope,
            feedback=config.feedback,
            signal=config.signal,
            self_tests=config.self_tests,
            task_tokens=config.task_tokens,
            dedup=config.dedup,
            stream=config.order == "stream",
            frozen=config.frozen_memory,
        )
