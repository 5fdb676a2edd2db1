"""Interactive text games (`--env textworld:N`), generated offline with `textworld`."""

from envs.textgames.env import TextWorldEnv

__all__ = ["TextWorldEnv"]
