"""The drill from the Self-Refine notes: the loop with no LLM (see envs.quadratic.env)."""

from envs.quadratic.actor import QuadraticActor
from envs.quadratic.env import QuadraticEnv
from envs.quadratic.problems import Problem, format_vector, gradient_step, parse_vector

__all__ = [
    "Problem",
    "QuadraticActor",
    "QuadraticEnv",
    "format_vector",
    "gradient_step",
    "parse_vector",
]
