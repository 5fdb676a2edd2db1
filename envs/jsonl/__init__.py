"""Your own tasks from a JSONL file: code tasks with tests, and question-answer tasks."""

from envs.jsonl.env import JsonlEnv

__all__ = ["JsonlEnv"]
