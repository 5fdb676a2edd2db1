"""How much of our code one `reflexion` command enters: its steps and the files they live in.

    .venv/bin/python tests/tools/trace_command.py -- reflexion memory forget runs/q 3f2a9c
    .venv/bin/python tests/tools/trace_command.py --list -- reflexion memory list runs/q
    .venv/bin/python tests/tools/trace_command.py --within Trials.run --list -- reflexion compare \\
        --env quadratic --strategies reflexion --episodes 3 --tasks 1 --concurrency 1 --out /tmp/q

prints e.g. `85 steps in 35 files`, then a line saying which code ran and how the command exited;
with --list each file and the number of its steps; with --json all of it, each step named.

- A step is a function of ours that the command called at least once, counted once however often
  it ran: a function, method or lambda (a code object, keyed by file and qualified name) in a file
  under the `reflexion`, `memory` or `envs` package that `import` finds (so PYTHONPATH picks the
  tree measured); scripts/ and tests/ are not ours here. What an import runs (module and class
  bodies) is not a step, nor is a comprehension or generator expression (a part of its function),
  nor a method that dataclasses write (its code is in no file of ours). A coroutine or generator
  is called when it starts; its resumptions are not calls.
- A file is a file of ours holding at least one step.
- --within NAME counts only the calls made on behalf of a function of ours whose qualified name is
  NAME or ends with `.NAME` (e.g. `Trials.run`, which runs one trial), itself included. The mark
  is a context variable set when that function starts and cleared when it returns for good, not
  when it suspends at an `await`: so other asyncio tasks interleaving with it do not count, and
  what it hands to `asyncio.to_thread` or to tasks it creates does. Every call of NAME counts: to
  measure one trial, run one (one strategy, `--tasks 1`, one seed, `--concurrency 1`); the report
  says how many times NAME ran.

The command runs in this process (`reflexion.cli.main`), its imports included, with every thread
it starts traced (sys.setprofile, threading.setprofile). Its own output goes to stderr, so stdout
holds the report only; the exit status is the command's. A bad command line here is one line on
stderr and exit 2.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import dis
import importlib.util
import inspect
import json
import os
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any, NoReturn, TypeVar

PACKAGES = ("reflexion", "memory", "envs")
EXIT_USAGE = 2
YIELD_VALUE = dis.opmap["YIELD_VALUE"]
RESUMABLE = (
    inspect.CO_GENERATOR
    | inspect.CO_COROUTINE
    | inspect.CO_ASYNC_GENERATOR
    | inspect.CO_ITERABLE_COROUTINE
)
EXAMPLE = "trace_command.py --list -- reflexion memory list RUN"
T = TypeVar("T")


class UsageError(Exception):
    """A bad command line for this script: one line on stderr, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


@dataclass
class _Mark:
    """One call of the --within function, from its start to its last return."""

    open: bool = True


@dataclass(frozen=True)
class _Code:
    """A step of ours: the file shown, whether it is the --within function, and the instruction
    offset up to which a profile 'call' event starts it rather than resumes it."""

    shown: str
    is_within: bool
    starts_at: int


_INSIDE: contextvars.ContextVar[_Mark | None] = contextvars.ContextVar("within", default=None)


def package_roots() -> dict[str, str]:
    """The folder of each package of ours, as `import` would find it (nothing is imported)."""
    roots = {}
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            msg = f"cannot find the package {name!r}: run from the repository's venv"
            raise UsageError(msg)
        roots[name] = os.path.realpath(next(iter(spec.submodule_search_locations)))
    return roots


@dataclass
class Tracer:
    """A profile hook counting the steps of ours it sees called (see the module's docstring)."""

    roots: dict[str, str]
    within: str | None = None
    steps: dict[str, set[str]] = field(default_factory=dict)  # file shown -> qualified names
    within_calls: int = 0
    on: bool = True
    _codes: dict[CodeType, _Code | None] = field(default_factory=dict)  # None: no step of ours
    _open: dict[FrameType, tuple[_Mark, contextvars.Token[_Mark | None]]] = field(
        default_factory=dict
    )

    def hook(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":  # a call, or a coroutine or generator resumed
            self._enter(frame)
        elif event == "return" and frame in self._open:  # it returned, or it suspended
            self._leave(frame)

    def _enter(self, frame: FrameType) -> None:
        code = frame.f_code
        try:
            ours = self._codes[code]
        except KeyError:
            ours = self._codes[code] = self._classify(code)
        if ours is None or not self.on or frame.f_lasti > ours.starts_at:
            return  # not ours, or a coroutine or generator resumed: counted when it started
        if ours.is_within:
            mark = _Mark()
            self._open[frame] = (mark, _INSIDE.set(mark))
            self.within_calls += 1
        if self.within is None or _inside():
            self.steps.setdefault(ours.shown, set()).add(code.co_qualname)

    def _leave(self, frame: FrameType) -> None:
        if frame.f_code.co_code[frame.f_lasti] == YIELD_VALUE:
            return  # suspended at an await or a yield: it resumes later, still open
        mark, token = self._open.pop(frame)
        mark.open = False
        with contextlib.suppress(ValueError, RuntimeError):  # a token of another context
            _INSIDE.reset(token)

    def _classify(self, code: CodeType) -> _Code | None:
        name = code.co_name
        if not code.co_flags & inspect.CO_OPTIMIZED:  # a module or class body
            return None
        if name.startswith("<") and name != "<lambda>":  # <listcomp>, <genexpr>, ...
            return None
        shown = self._shown(code.co_filename)
        if shown is None:
            return None
        within = self.within
        is_within = within is not None and (
            code.co_qualname == within or code.co_qualname.endswith("." + within)
        )
        starts_at = sys.maxsize  # a plain function: every call starts it
        if code.co_flags & RESUMABLE:  # a call past its first RESUME resumes it
            starts_at = next(i.offset for i in dis.get_instructions(code) if i.opname == "RESUME")
        return _Code(shown, is_within, starts_at)

    def _shown(self, filename: str) -> str | None:
        """`reflexion/cli/main.py` for a file of ours, else None."""
        path = os.path.realpath(filename)
        for name, root in self.roots.items():
            if path.startswith(root + os.sep):
                return f"{name}/{Path(os.path.relpath(path, root)).as_posix()}"
        return None


def _inside() -> bool:
    mark = _INSIDE.get()
    return mark is not None and mark.open


def traced(tracer: Tracer, call: Callable[[], T]) -> T:
    """`call()` under `tracer`, in this thread and every thread started meanwhile."""
    threading.setprofile(tracer.hook)
    sys.setprofile(tracer.hook)
    try:
        return call()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
        tracer.on = False  # threads the call left running are traced still: ignore them


def run_traced(tracer: Tracer, command: Sequence[str]) -> int:
    """Run `reflexion COMMAND...` here under `tracer`; the command's exit status."""
    saved = sys.argv
    sys.argv = ["reflexion", *command]
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return traced(tracer, lambda: _run(list(command)))
    finally:
        sys.argv = saved


def _run(command: list[str]) -> int:
    # the console script's entry point, `reflexion.cli:main`; imported here, so under the tracer
    import reflexion.cli

    try:
        return reflexion.cli.main(command)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    except Exception:  # the command's own bug: its traceback, then what it entered
        traceback.print_exc()
        return 1


def summary(tracer: Tracer, command: Sequence[str], code: int) -> dict[str, Any]:
    """Everything measured, as the JSON that --json prints."""
    return {
        "steps": sum(len(names) for names in tracer.steps.values()),
        "files": len(tracer.steps),
        "within": tracer.within,
        "within_calls": tracer.within_calls if tracer.within else None,
        "command": ["reflexion", *command],
        "exit": code,
        "code": tracer.roots,
        "by_file": {f: sorted(names) for f, names in sorted(tracer.steps.items())},
    }


def report(found: dict[str, Any], listed: bool) -> str:
    """`N steps in M files`, which code ran, and with `listed` each file's number of steps."""
    top = os.path.commonpath(list(found["code"].values()))
    lines = [f"{found['steps']} steps in {found['files']} files"]
    where = f"code in {top}; {' '.join(found['command'])} exited {found['exit']}"
    if found["within"]:
        calls = found["within_calls"]
        where = f"within {found['within']} (ran {calls} time{'s' * (calls != 1)}); {where}"
    lines.append(where)
    if listed:
        lines += [f"{len(names):5d}  {name}" for name, names in found["by_file"].items()]
    return "\n".join(lines)


def parse(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """This script's options (before `--`) and the command (after it, starting `reflexion`)."""
    parser = _Parser(
        prog="trace_command.py",
        description=(__doc__ or "").split("\n\n")[0],
        usage="%(prog)s [--within NAME] [--list] [--json] -- reflexion ARGS...",
    )
    parser.add_argument("--within", metavar="NAME", help="count calls on behalf of NAME only")
    parser.add_argument("--list", action="store_true", help="each file with its number of steps")
    parser.add_argument("--json", action="store_true", help="print everything as JSON")
    cut = list(argv).index("--") if "--" in argv else len(argv)
    options = parser.parse_args(argv[:cut])
    command = list(argv[cut + 1 :])
    if cut == len(argv):
        msg = f"put the command after --, e.g. {EXAMPLE}"
        raise UsageError(msg)
    if not command or command[0] != "reflexion":
        msg = f"the command after -- must start with reflexion, e.g. {EXAMPLE}"
        raise UsageError(msg)
    if options.within is not None and not options.within.strip("."):
        msg = "--within needs a function's name, e.g. --within Trials.run"
        raise UsageError(msg)
    return options, command[1:]


def main(argv: Sequence[str] | None = None) -> int:
    try:
        options, command = parse(sys.argv[1:] if argv is None else argv)
        tracer = Tracer(package_roots(), options.within)
    except UsageError as exc:
        print(f"trace_command: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    code = run_traced(tracer, command)
    found = summary(tracer, command, code)
    if options.within and not tracer.within_calls:
        print(
            f"trace_command: note: no function of ours named {options.within} ran", file=sys.stderr
        )
    print(json.dumps(found, indent=2) if options.json else report(found, options.list))
    return code


if __name__ == "__main__":
    sys.exit(main())
