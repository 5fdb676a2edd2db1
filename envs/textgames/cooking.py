"""`--env cooking:N`: a family of text games that share their skills, TextWorld's cooking games
(`textworld.challenges.tw_cooking`, the games of the First TextWorld Problems), made offline.

Every game has the same objective ("You are hungry! Let's cook a delicious meal. Check the
cookbook in the kitchen for the recipe...") and the same skills: read the cookbook, fetch its
ingredients, prepare the meal, eat it. The kitchen, the recipe and the distractors change with
the seed, so a lesson from one game ("examine the cookbook first, then take what it lists") can
teach the next. The games are played by `TextWorldEnv` as the `textworld` ones are:

- **Visible:** the game's own reward (a point per step of the recipe done) and the win.
- **Held out:** nothing. `evaluate` is the same replay: a win is a win. The game's walkthrough
  (in its metadata) is never read, by any actor or prompt.

    >>> env = cooking_env("2,recipe=2,take=2")   # doctest: +SKIP
    >>> env.tasks()[1].id                        # doctest: +SKIP
    'cooking/r2-t2-g1-s1001'
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from envs.textgames.env import TextWorldEnv, split_spec
from envs.textgames.games import textworld_module
from reflexion.core.errors import UsageError

SKILLS = ("cook", "cut", "open")  # tw_cooking's on/off skills that a spec may turn on
ROOMS = (1, 6, 9, 12)  # the only room counts tw_cooking can lay out
KNOBS: dict[str, range | tuple[int, ...]] = {
    "recipe": range(1, 6),
    "take": range(6),
    "go": ROOMS,
    **{skill: (0, 1) for skill in SKILLS},
    "steps": range(1, 101),
}
USAGE = (
    "cooking knobs are recipe=1..5, take=0..5 (at most recipe), go=1|6|9|12, cook=0|1, "
    "cut=0|1, open=0|1, steps=1..100"
)


@dataclass(frozen=True)
class Cooking:
    """The knobs of a cooking game, and the step limit of an episode in it.

    The defaults are the smallest game that still asks for the family's skills: one room (the
    kitchen), a recipe of one ingredient that must be found and taken (the cookbook names it),
    nothing to cook, cut or open. Its walkthrough is 5 actions; 30 steps leave room to explore.
    """

    name: ClassVar[str] = "cooking"
    recipe: int = 1  # ingredients in the recipe
    take: int = 1  # of them, how many are not yet in the inventory
    go: int = 1  # rooms: 1, 6, 9 or 12
    skills: frozenset[str] = frozenset()  # of SKILLS: ingredients to cook, cut; doors to open
    steps: int = 30  # the most actions an episode may take

    def slug(self) -> str:
        """The knobs that shape the game (not `steps`, which only limits an episode)."""
        extra = "".join(f"-{skill}" for skill in SKILLS if skill in self.skills)
        return f"r{self.recipe}-t{self.take}-g{self.go}{extra}"

    def make(self, seed: int, path: Path) -> None:
        textworld: Any = textworld_module()
        from textworld.challenges.tw_cooking import cooking
        from textworld.generator import compile_game

        options = textworld.GameOptions()
        options.seeds = seed
        options.path = str(path)
        options.force_recompile = True
        settings: dict[str, object] = {skill: skill in self.skills for skill in SKILLS}
        settings |= {"recipe": self.recipe, "take": self.take, "go": self.go, "drop": False}
        settings |= {"recipe_seed": 0, "split": None}  # tw_cooking reads both, unguarded
        try:
            compile_game(cooking.make(settings, options), options)
        except Exception as exc:  # noqa: BLE001 - tw_cooking cannot make these knobs: one line
            msg = f"cannot make a cooking game {self.slug()} (seed {seed}): {type(exc).__name__}"
            raise UsageError(msg) from None


def cooking_env(arg: str | None) -> TextWorldEnv:
    """`cooking` (5 games), `cooking:N`, or `cooking:N,recipe=R,take=T,go=G,cook=0|1,cut=0|1,
    open=0|1,steps=S` (any of the knobs). Nothing is held out: the visible replay decides."""
    if arg is None:
        return TextWorldEnv(5, Cooking())
    count, knobs = split_spec("cooking", arg)
    return TextWorldEnv(count, _knobs(knobs))


def _knobs(knobs: list[str]) -> Cooking:
    values: dict[str, Any] = {}  # Any: the keyword arguments of Cooking (ints here)
    for knob in knobs:
        name, _, value = knob.partition("=")
        if name not in KNOBS or not value.isdigit() or int(value) not in KNOBS[name]:
            msg = f"{USAGE}; got {knob!r}"
            raise UsageError(msg)
        values[name] = int(value)
    skills = frozenset(skill for skill in SKILLS if values.pop(skill, 0))
    game = dataclasses.replace(Cooking(skills=skills), **values)
    if game.take > game.recipe:
        msg = f"cooking: take={game.take} is more than recipe={game.recipe} (take counts of them)"
        raise UsageError(msg)
    return game
