"""HumanEval: 164 Python problems, docstring examples visible, official tests held out."""

from envs.humaneval.env import HumanEvalEnv, Problem, load_problems

__all__ = ["HumanEvalEnv", "Problem", "load_problems"]
