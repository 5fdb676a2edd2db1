"""The Game of 24: four numbers from 1 to 13, an expression that makes 24."""

from envs.game24.env import Game24Env

__all__ = ["Game24Env"]
