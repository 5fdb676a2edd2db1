"""Interactive text games (`--env textworld:N`, `--env cooking:N`), generated offline with
`textworld`."""

from envs.textgames.cooking import Cooking, cooking_env
from envs.textgames.env import TextWorldEnv

__all__ = ["Cooking", "TextWorldEnv", "cooking_env"]
