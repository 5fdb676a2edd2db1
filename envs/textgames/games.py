"""Text games made offline by the `textworld` package (MIT), one per seed, cached on disk.

A game is generated once (a few seconds) into the cache (`$REFLEXION_CACHE/textworld`, by
default ~/.cache/reflexion/textworld) and reused. Generation writes into a temporary folder and
moves the finished files in, so an interrupted one leaves nothing half-made.

    >>> path = game_file(1000, Difficulty(rooms=2, objects=3, length=2))   # doctest: +SKIP
    >>> path.suffix                                                        # doctest: +SKIP
    '.z8'
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from reflexion.core.cache import cache_dir
from reflexion.core.errors import UsageError

FIRST_SEED = 1000  # game i of `textworld:N` is made from seed FIRST_SEED + i


@dataclass(frozen=True)
class Difficulty:
    """The knobs of a generated game, and the step limit of an episode in it."""

    rooms: int = 3
    objects: int = 6
    length: int = 3  # the quest: the fewest actions that win
    steps: int = 20  # the most actions an episode may take

    def slug(self) -> str:
        return f"r{self.rooms}-o{self.objects}-q{self.length}"


def textworld_module() -> object:
    try:
        import textworld
    except ImportError:
        msg = "the textworld env needs textworld: pip install 'reflexion-memory[textworld]'"
        raise UsageError(msg) from None
    return textworld


def game_file(seed: int, difficulty: Difficulty) -> Path:
    """The compiled game of this seed and difficulty, made now if it is not in the cache."""
    folder = cache_dir() / "textworld"
    target = folder / f"{difficulty.slug()}-s{seed}.z8"
    if target.exists():
        return target
    textworld = textworld_module()
    folder.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=folder, prefix=".making-"))
    try:
        options = textworld.GameOptions()  # type: ignore[attr-defined]
        options.seeds = seed
        options.nb_rooms, options.nb_objects = difficulty.rooms, difficulty.objects
        options.quest_length = difficulty.length
        options.path = str(work / target.name)
        options.force_recompile = True
        try:
            textworld.make(options)  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - textworld cannot make these knobs: one line
            msg = (
                f"cannot make a textworld game with rooms={difficulty.rooms}, objects="
                f"{difficulty.objects}, length={difficulty.length} (seed {seed}): "
                f"{type(exc).__name__}; try a shorter quest or more rooms and objects"
            )
            raise UsageError(msg) from None
        # the game's metadata first, the game last: a game file present means a finished pair
        os.replace(work / target.with_suffix(".json").name, target.with_suffix(".json"))
        os.replace(work / target.name, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target
