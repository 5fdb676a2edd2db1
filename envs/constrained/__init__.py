"""Constrained generation (Self-Refine's CommonGen-Hard): a paragraph using 20-30 concepts."""

from envs.constrained.env import ConstrainedEnv

__all__ = ["ConstrainedEnv"]
