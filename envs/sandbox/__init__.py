r"""Running generated code: a locked-down child process (`Sandboxed`, `run_python`), and checks
split over two such processes, one holding the code and one deciding the verdicts
(`run_checks`). See docs/sandbox-and-safety.md for what it guarantees.

    >>> run_checks("def inc(x):\n    return x + 1\n", [Check("inc(1)", "inc(1)", "2")]).passed
    1
"""

from envs.sandbox.checks import Check, CheckResult, CheckRun, render, run_checks
from envs.sandbox.probe import run_python, sandbox_layers, sandbox_plan
from envs.sandbox.process import Sandboxed, SandboxResult

__all__ = [
    "Check",
    "CheckResult",
    "CheckRun",
    "SandboxResult",
    "Sandboxed",
    "render",
    "run_checks",
    "run_python",
    "sandbox_layers",
    "sandbox_plan",
]
