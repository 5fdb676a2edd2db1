"""What code envs share: extracting code from an answer, checks from test code, and scoring."""

from envs.code_tasks.asserts import assert_checks, task_helpers
from envs.code_tasks.extract import CodeExtractionError, extract_code
from envs.code_tasks.scoring import CodeProblem, no_code

__all__ = [
    "CodeExtractionError",
    "CodeProblem",
    "assert_checks",
    "extract_code",
    "no_code",
    "task_helpers",
]
