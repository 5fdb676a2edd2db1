"""Text games made offline by the `textworld` package (MIT), one per seed, cached on disk.

A family of games (`GameFamily`: TextWorld's own quests, or its cooking games) makes game `seed`
with its knobs. Each game is generated once (a few seconds) into the cache
(`$REFLEXION_CACHE/<family>`, by default ~/.cache/reflexion/<family>) and reused. Generation
writes into a temporary folder and moves the finished files in, so an interrupted one leaves
nothing half-made.

    >>> path = game_file(1000, Difficulty(rooms=2, objects=3, length=2))   # doctest: +SKIP
    >>> path.name                                                          # doctest: +SKIP
    'r2-o3-q2-s1000.z8'
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from reflexion.core.errors import UsageError
from reflexion.core.packages import cache_dir

FIRST_SEED = 1000  # game i of `textworld:N` (or `cooking:N`) is made from seed FIRST_SEED + i


class GameFamily(Protocol):
    """Games made from a seed with fixed knobs: the env's name, the step limit of an episode,
    the knobs' slug (the cache key and task ids: different knobs, different games), and the
    maker, which writes the compiled game and its `.json` at `path`."""

    @property
    def name(self) -> str: ...

    @property
    def steps(self) -> int: ...

    def slug(self) -> str: ...

    def make(self, seed: int, path: Path) -> None: ...


@dataclass(frozen=True)
class Difficulty:
    """The knobs of a generated TextWorld quest, and the step limit of an episode in it."""

    name: ClassVar[str] = "textworld"
    rooms: int = 3
    objects: int = 6
    length: int = 3  # the quest: the fewest actions that win
    steps: int = 20  # the most actions an episode may take

    def slug(self) -> str:
        return f"r{self.rooms}-o{self.objects}-q{self.length}"

    def make(self, seed: int, path: Path) -> None:
        textworld: Any = textworld_module()
        options = textworld.GameOptions()
        options.seeds = seed
        options.nb_rooms, options.nb_objects = self.rooms, self.objects
        options.quest_length = self.length
        options.path = str(path)
        options.force_recompile = True
        try:
            textworld.make(options)
        except Exception as exc:  # noqa: BLE001 - textworld cannot make these knobs: one line
            msg = (
                f"cannot make a textworld game with rooms={self.rooms}, objects={self.objects}"
                f", length={self.length} (seed {seed}): {type(exc).__name__}; try a shorter "
                "quest or more rooms and objects"
            )
            raise UsageError(msg) from None


def textworld_module() -> object:
    try:
        import textworld
    except ImportError:
        msg = "the textworld env needs textworld: pip install 'reflexion-memory[textworld]'"
        raise UsageError(msg) from None
    return textworld


def game_file(seed: int, family: GameFamily) -> Path:
    """The compiled game of this seed and family, made now if it is not in the cache."""
    folder = cache_dir() / family.name
    target = folder / f"{family.slug()}-s{seed}.z8"
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=folder, prefix=".making-"))
    try:
        family.make(seed, work / target.name)
        # the game's metadata first, the game last: a game file present means a finished pair
        os.replace(work / target.with_suffix(".json").name, target.with_suffix(".json"))
        os.replace(work / target.name, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target
