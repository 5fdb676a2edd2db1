# reflexion-memory: the start-up check (reflexion/core/packages.py) looks for this line.
"""reflexion-memory's tasks: each with a visible signal (for feedback) and a held-out one (for
the reported result)."""

from envs.registry import env_names, make_env, register_env

__all__ = ["env_names", "make_env", "register_env"]
