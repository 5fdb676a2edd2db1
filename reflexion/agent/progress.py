"""An agent's attempts at a task in one ReflexionMemory session, numbered as a run numbers its
episodes: what each recalled (credited when its outcome comes) and what it scored.

    >>> progress = Progress()
    >>> progress.values[1] = 0.0
    >>> progress.next_episode()
    >>> progress.episode, progress.before()
    (2, 0.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Progress:
    """One task's attempts in this session: the current episode, what it recalled (waiting for
    its outcome to be credited) and each ended attempt's score."""

    episode: int = 1
    ended: bool = False  # an outcome or a lesson is in: the next recall starts a new episode
    recalled: list[str] = field(default_factory=list)
    values: dict[int, float] = field(default_factory=dict)  # episode -> its attempt's score
    lessons: int = 0  # lessons on the current episode (a second one needs an id of its own)
    scored: bool = False  # the current episode's score is in the trace
    judged: bool = False  # its outcome came: another outcome is another attempt's

    def before(self) -> float | None:
        """The score of the task's attempt before the current one (None: none ended)."""
        earlier = [e for e in self.values if e < self.episode]
        return self.values[max(earlier)] if earlier else None

    def next_episode(self) -> None:
        self.episode += 1
        self.ended, self.recalled, self.lessons = False, [], 0
        self.scored = self.judged = False


def verdict(value: float, before: float | None) -> str | None:
    """What an attempt did against the one before, as a run credits it (None: none before).

    >>> verdict(1.0, 0.0), verdict(0.0, 0.0), verdict(1.0, None)
    ('helped', 'same', None)
    """
    if before is None:
        return None
    return "helped" if value > before else "hurt" if value < before else "same"


def value_of(score: float | None, passed: bool) -> float:
    """An attempt's score: the one given, else 1 if it passed, else 0.

    >>> value_of(None, True), value_of(0.25, False)
    (1.0, 0.25)
    """
    return float(score) if score is not None else float(passed)
