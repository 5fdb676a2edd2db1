"""`--env textworld:N`: N text games made offline with `textworld`, played step by step (and
`--env cooking:N`, the same env over a family of cooking games: envs/textgames/cooking.py).

An episode is a rollout: the actor reads the room, picks one of the commands the game admits
(the 1.5B model could not play otherwise), and the game answers, until it is won, lost, or the
step limit is reached. The candidate is the trajectory, a transcript whose `> ` lines are the
actions; `score` replays them in a fresh game (the games are deterministic).

- **Visible:** the game's own reward and whether it was won, as in Reflexion's ALFWorld runs.
- **Held out:** nothing. `evaluate` is the same replay: a win is a win. The game's walkthrough
  (its winning commands) is never read, by any actor or prompt.

    >>> env = TextWorldEnv.from_spec("2,rooms=2,objects=3,length=2")   # doctest: +SKIP
    >>> env.tasks()[0].id                                              # doctest: +SKIP
    'textworld/r2-o3-q2-s1000'
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

from envs.textgames.games import (
    FIRST_SEED,
    Difficulty,
    GameFamily,
    game_file,
    textworld_module,
)
from reflexion.core.errors import UsageError
from reflexion.core.records import Observation, Score, Task

MAX_GAMES = 200
PROMPT = "{objective}\n\nYou have at most {steps} actions."


class TextWorldGame:
    """One play of a compiled game through textworld's Python API."""

    def __init__(self, path: str) -> None:
        textworld: Any = textworld_module()
        infos = textworld.EnvInfos(
            admissible_commands=True, won=True, lost=True, max_score=True, objective=True
        )
        with warnings.catch_warnings():
            # jericho warns that a generated game's score detection is off: we read the score
            # textworld itself reports, so the warning says nothing about this use
            warnings.simplefilter("ignore")
            self._env = textworld.start(path, infos)
        self.objective, self.max_score = "", 1.0

    def reset(self) -> Observation:
        with warnings.catch_warnings():  # see __init__: jericho loads the game here
            warnings.simplefilter("ignore")
            state = self._env.reset()
        self.objective = str(state["objective"] or "").strip()
        self.max_score = float(state["max_score"] or 1.0)
        return self._observe(state, 0.0, False)

    def step(self, action: str) -> Observation:
        state, score, done = self._env.step(action)
        return self._observe(state, float(score), bool(done))

    def close(self) -> None:
        self._env.close()

    def _observe(self, state: Any, score: float, done: bool) -> Observation:
        actions = tuple(sorted(state["admissible_commands"] or ()))
        won = bool(state["won"])
        return Observation(_clean(state.feedback, self.objective), actions, score, done or won, won)


def _clean(text: str, objective: str) -> str:
    """The game's text without its banner, the objective it repeats, or its prompt lines."""
    if objective and objective in text:
        text = text[text.index(objective) + len(objective) :]
    lines = [line.rstrip() for line in text.splitlines() if not line.strip().startswith(">")]
    return "\n".join(line for line in lines if line.strip()).strip()


class TextWorldEnv:
    """Games 0..count-1 of a family (TextWorld quests by default); the env is named after it."""

    def __init__(self, count: int = 5, difficulty: GameFamily | None = None) -> None:
        self.difficulty: GameFamily = difficulty or Difficulty()
        self.name = self.difficulty.name
        self.max_steps = self.difficulty.steps
        self._paths: dict[str, str] = {}
        self._tasks: list[Task] = []
        for i in range(count):
            seed = FIRST_SEED + i
            path = game_file(seed, self.difficulty)
            task_id = f"{self.name}/{self.difficulty.slug()}-s{seed}"
            self._paths[task_id] = str(path)
            objective = self._objective(str(path))
            prompt = PROMPT.format(objective=objective, steps=self.max_steps)
            self._tasks.append(Task(task_id, prompt, {"kind": "game", "seed": seed}))

    @classmethod
    def from_spec(cls, arg: str | None) -> TextWorldEnv:
        """`textworld` (5 games), `textworld:N`, or `textworld:N,rooms=R,objects=O,length=L,
        steps=S` (any of the knobs)."""
        if arg is None:
            return cls()
        count, knobs = split_spec("textworld", arg)
        return cls(count, _difficulty(knobs))

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def play(self, task: Task) -> TextWorldGame:
        return TextWorldGame(self._paths[task.id])

    def score(self, task: Task, candidate: str) -> Score:
        """VISIBLE: the reward and the win of the trajectory's actions, replayed."""
        return self._replay(task, candidate)

    def evaluate(self, task: Task, candidate: str) -> Score:
        """The same replay (nothing is held out in a game): solved when won."""
        return self._replay(task, candidate)

    def _replay(self, task: Task, candidate: str) -> Score:
        actions = [line[2:].strip() for line in candidate.splitlines() if line.startswith("> ")]
        game = self.play(task)
        try:
            seen, taken = game.reset(), 0
            for action in actions[: self.max_steps]:
                if seen.done:
                    break
                seen, taken = game.step(action), taken + 1
        finally:
            game.close()
        if seen.won:
            return Score(1.0, True, f"Won in {taken} actions.")
        how = "The game was lost" if seen.done else f"Not won after {taken} actions"
        points = f"score {seen.score:g} of {game.max_score:g}"
        return Score(seen.score / game.max_score, False, f"{how}; {points}.")

    def _objective(self, path: str) -> str:
        game = TextWorldGame(path)
        try:
            game.reset()
            return game.objective
        finally:
            game.close()


def split_spec(name: str, arg: str) -> tuple[int, list[str]]:
    """The count of games and the knobs of `NAME:N,knob=value,...` (after the colon).

    >>> split_spec("cooking", "3,recipe=2")
    (3, ['recipe=2'])
    """
    count, *knobs = arg.split(",")
    if not count.isdigit() or not 1 <= int(count) <= MAX_GAMES:
        msg = f"{name}:N needs N between 1 and {MAX_GAMES}, got {count!r}"
        raise UsageError(msg)
    return int(count), knobs


def _difficulty(knobs: list[str]) -> Difficulty:
    names = {f.name for f in dataclasses.fields(Difficulty)}
    values: dict[str, int] = {}
    for knob in knobs:
        name, _, value = knob.partition("=")
        if name not in names or not value.isdigit() or not 1 <= int(value) <= 100:
            msg = f"textworld knobs are {', '.join(sorted(names))}=N (1..100), got {knob!r}"
            raise UsageError(msg)
        values[name] = int(value)
    return Difficulty(**values)
