"""What this machine can do to hold generated code, probed once per process, and the one-call
way to run a script in the sandbox.

    >>> result = run_python("print(6 * 7)", timeout_s=5)
    >>> result.returncode, result.stdout
    (0, '42\\n')
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Sequence

from envs.sandbox.plan import Plan, candidate_plans
from envs.sandbox.process import Sandboxed, SandboxResult


def run_python(
    source: str,
    *,
    timeout_s: float = 10,
    memory_mb: int = 512,
    cpu_s: int | None = None,
    max_output: int = 64_000,
    stdin: str = "",
    hide: Sequence[str] = (),
) -> SandboxResult:
    """Run `source` as a script in a sandboxed child process and collect what it did.

    `cpu_s` (CPU seconds) defaults to the timeout rounded up plus one. stdout and stderr are
    each cut to `max_output` characters, keeping the start and the end (where a traceback is).
    `stdin` is what the child reads on its standard input; `hide` names more directories
    (a task file's, say) to hide from it, besides our home, data and working directories.

        >>> run_python("while True: pass", timeout_s=1).reason
        'timed out after 1 s'
    """
    with Sandboxed(
        source,
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        cpu_s=cpu_s,
        stdin=stdin,
        hide=hide,
        plan=sandbox_plan(),
    ) as child:
        return child.finish(max_output=max_output)


def sandbox_layers() -> dict[str, object]:
    """What holds generated code on this machine, for a run's config.json: the layers it has,
    and in words what it lacks (empty when nothing)."""
    plan = sandbox_plan()
    return {
        "network_isolated": plan.isolates_network,
        "filesystem_isolated": plan.isolates_files,
        "pid_namespace": "-p" in plan.prefix,
        "unprivileged": plan.uid >= 0 or os.geteuid() != 0,
        "missing": plan.missing(),
    }


@functools.cache  # two threads racing here both probe; the answers are the same
def sandbox_plan() -> Plan:
    """The strongest way this machine can hold a child that still runs Python (probed once
    per process, by running a small program through each candidate plan in turn); one warning
    names what is missing."""
    fallback = Plan((), sys.executable, -1)
    for plan in candidate_plans():
        if _works(plan):
            break
    else:
        plan = fallback
    missing = plan.missing()
    if missing:
        warnings.warn(f"sandbox: {missing}", RuntimeWarning, stacklevel=2)
    return plan


# What a plan must run: the modules the harness uses, and a package beside main.py (as the
# harness is), in a working directory that is HOME.
PROBE = "import json, linecache, os, resource, signal\nfrom probe.mark import HERE\n"
PROBE += "print(os.environ['HOME'] == os.getcwd() and HERE)"
PROBE_FILES = {"probe/__init__.py": "", "probe/mark.py": "HERE = True\n"}


def _works(plan: Plan) -> bool:
    try:
        with Sandboxed(PROBE, timeout_s=10, plan=plan, files=PROBE_FILES) as child:
            result = child.finish(max_output=1000)
    except OSError:
        return False
    return result.ok and result.stdout == "True\n"
