"""Reading the package's imports with `ast` (nothing is executed), for the layout tests.

Rooms and layers (a room may import its own modules and any lower layer, nothing else):

    0  reflexion.core                      records, protocols, errors
    1  memory, envs, reflexion.models,     each imports only reflexion.core (and itself)
       reflexion.strategies
    2  reflexion.trial                     one trial: its state, board, provenance, self-tests
    3  reflexion.actor                     the model's roles: prompts, replies, retries, rollouts
    4  reflexion.runner                    the run: settings, set-up, schedule, cluster, budget
    5  reflexion.curate                    curating stored lessons (`memory`, the web memory page)
    6  reflexion.report,                   the report; the memory in your own agent (`agent`:
       reflexion.agent                     ReflexionMemory, its retriever, GraphActor)
    7  reflexion.web                       the web page (`reflexion serve`)
    8  reflexion.cli
    9  reflexion (the package's __init__ and __main__: the public API)
    10 scripts                             measurements and tools, run as `python scripts/x.py`

A script uses the package as a user would: it imports packages (what an `__init__.py` offers:
`reflexion`, `reflexion.report`, `reflexion.models`, `memory`, `envs.sandbox`, ...), never a module
inside one, and nothing of the run's machinery (`reflexion.trial`, `reflexion.actor`,
`reflexion.runner`) or a store's insides
(`memory.chroma`).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOMS = {
    "reflexion.core": 0,
    "memory": 1,
    "envs": 1,
    "reflexion.models": 1,
    "reflexion.strategies": 1,
    "reflexion.trial": 2,
    "reflexion.actor": 3,
    "reflexion.runner": 4,
    "reflexion.curate": 5,
    "reflexion.report": 6,
    "reflexion.agent": 6,
    "reflexion.web": 7,
    "reflexion.cli": 8,
    "reflexion": 9,
    "scripts": 10,
}
# Every store stays behind the curation contract (reflexion.core.curation): no module outside
# `memory` imports a store's own modules, and none tests `isinstance` on a store's class.
STORE_INSIDES = ("memory.chroma", "memory.window")
STORE_CLASSES = ("ChromaMemory", "WindowMemory")
OURS = ("reflexion", "memory", "envs", "scripts")
SCRIPTS = "scripts"
# what no script may import, not even a package of it: reached through `reflexion` and `memory`
INTERNALS = ("reflexion.trial", "reflexion.actor", "reflexion.runner", "memory.chroma")
# The programs that run inside a sandbox, where none of our packages exist: the launcher imports
# the standard library only; the harness also its own modules, by relative imports (it is the
# top-level package `harness` there).
HARNESS, LAUNCHER = "envs.sandbox.harness", "envs.sandbox.launcher"


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module (or package)
    line: int
    relative: bool = False  # `from .wire import ...`
    # `from a import b` with b a module reads package a's namespace too, so it runs a's
    # __init__ first: a cycle through that __init__ is a cycle
    package: str = ""


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path) -> dict[str, Path]:
    """Every module of our packages and scripts under `root`, by dotted name."""
    found = {}
    for top in OURS:
        for path in sorted((root / top).rglob("*.py")):
            found[module_name(root, path)] = path
    return found


def imports(root: Path) -> Iterator[Import]:
    """Every import statement of our modules (in functions and TYPE_CHECKING blocks too),
    resolved to the module it loads: `from a.b import c` is a.b.c when that is a module."""
    known = modules(root)
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield Import(name, alias.name, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, package)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    target, read = (full, base) if full in known else (base, "")
                    yield Import(name, target, node.lineno, node.level > 0, read)


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


def room(module: str) -> str | None:
    """The most specific room holding `module`, or None when it is not ours."""
    if module.split(".")[0] not in OURS:
        return None
    matches = [r for r in ROOMS if module == r or module.startswith(r + ".")]
    return max(matches, key=len)


def layer_violations(root: Path) -> list[str]:
    bad = []
    known = modules(root)
    for imp in imports(root):
        src, dst = room(imp.source), room(imp.target)
        where = f"{imp.source}:{imp.line} imports {imp.target}"
        if src == SCRIPTS and dst is not None and not _public_face(imp.target, known):
            bad.append(
                f"{where}: a script may import a package (its __init__) only, not a "
                f"module inside one, and nothing of {' or '.join(INTERNALS)}"
            )
        elif imp.source.startswith((HARNESS, LAUNCHER)):
            stdlib = imp.target.split(".")[0] in sys.stdlib_module_names and not imp.relative
            own = imp.relative and imp.source.startswith(HARNESS) and imp.target.startswith(HARNESS)
            if not (stdlib or own):
                bad.append(f"{where}: a sandbox program may import the standard library only")
        elif dst is not None and src != dst and ROOMS[dst] >= ROOMS[str(src)]:
            bad.append(f"{where}: {src} (layer {ROOMS[str(src)]}) may not import {dst}")
    return bad


def _public_face(target: str, known: dict[str, Path]) -> bool:
    """A package of ours (its __init__), outside the internals no script may reach."""
    inside = any(target == i or target.startswith(i + ".") for i in INTERNALS)
    path = known.get(target)
    return not inside and path is not None and path.name == "__init__.py"


def store_inside_imports(root: Path) -> list[str]:
    """Imports of a store's own modules from outside the `memory` package."""
    return [
        f"{imp.source}:{imp.line} imports {imp.target}: a store's insides (use `memory`)"
        for imp in imports(root)
        if room(imp.source) != "memory"
        and any(imp.target == m or imp.target.startswith(m + ".") for m in STORE_INSIDES)
    ]


def concrete_store_checks(root: Path) -> list[str]:
    """`isinstance(x, ChromaMemory)` and the like: code that treats one store apart (ask the
    store's `can` instead, or a protocol)."""
    bad = []
    for name, path in modules(root).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and _called(node) == "isinstance"):
                continue
            kinds = node.args[1:2]
            named = [
                _called(k)
                for k in (kinds[0].elts if kinds and isinstance(kinds[0], ast.Tuple) else kinds)
            ]
            bad += [
                f"{name}:{node.lineno} tests isinstance on {k}: ask the store's `can`"
                for k in named
                if k in STORE_CLASSES
            ]
    return bad


def _called(node: ast.expr) -> str:
    """The last name of a call's function or of an expression (`a.b.C` -> `C`)."""
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


def cycles(root: Path) -> list[list[str]]:
    """Import cycles between our modules (strongly connected groups of more than one), of any
    length, a package's `__init__` counted as a module: `from a import b` imports a and a.b."""
    graph: dict[str, set[str]] = {m: set() for m in modules(root)}
    for imp in imports(root):
        for target in (imp.target, imp.package):
            if target in graph and target != imp.source:
                graph[imp.source].add(target)
    return [group for group in _components(graph) if len(group) > 1]


def _components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        group.append(top)
                        if top == node:
                            break
                    found.append(sorted(group))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def oversized(root: Path, max_module: int, max_function: int) -> list[str]:
    """Modules over `max_module` lines, and functions whose body (docstring aside) is over
    `max_function` lines."""
    bad = []
    for name, path in modules(root).items():
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > max_module:
            bad.append(f"{name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                body = (
                    node.body[1:] if ast.get_docstring(node) and len(node.body) > 1 else node.body
                )
                length = (node.end_lineno or 0) - body[0].lineno + 1
                if length > max_function:
                    bad.append(f"{name}.{node.name}: {length} lines")
    return bad


def crowded_folders(root: Path, max_modules: int) -> list[str]:
    """Folders of our packages holding more than `max_modules` modules, `__init__` included."""
    count: dict[Path, int] = {}
    for path in modules(root).values():
        if path.parent.name != SCRIPTS:
            count[path.parent] = count.get(path.parent, 0) + 1
    return [
        f"{folder.relative_to(root)}: {n} modules"
        for folder, n in sorted(count.items())
        if n > max_modules
    ]


def same_names(root: Path, package: str) -> list[str]:
    """Module file names used twice under `package` (`__init__` aside): a reader who finds
    `experience.py` must not have to ask which one."""
    seen: dict[str, list[str]] = {}
    for name, path in modules(root).items():
        if name.startswith(package + ".") and path.name != "__init__.py":
            seen.setdefault(path.name, []).append(name)
    return [f"{file}: {', '.join(names)}" for file, names in sorted(seen.items()) if len(names) > 1]
