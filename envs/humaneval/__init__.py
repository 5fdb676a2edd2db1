"""HumanEval: 164 Python problems, docstring examples visible, official tests held out."""

from envs.humaneval.env import HELD_OUT_SECONDS, HumanEvalEnv, Problem, load_problems

__all__ = ["HELD_OUT_SECONDS", "HumanEvalEnv", "Problem", "load_problems"]
