"""What a run's memory cost and did, read from its trace: per strategy and role, the share of
prompt tokens that was memory text and the share the runtime served from its prefix cache; for
`proactive`, how often the answer refined itself and whether that changed the held-out verdict;
and what each strategy wrote (reflexion.report.memory.writes).

>>> use = memory_use(run_steps("runs/x"), run_results("runs/x"))  # doctest: +SKIP
>>> print(format_memory(use))                                      # doctest: +SKIP
memory and prefix cache, as shares of each role's prompt tokens:
strategy  role      calls  prompt tokens  memory  cached
insights  generate      2             20   30.0%    0.0%
...
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from reflexion.core.records import Record, Step, TaskResult
from reflexion.report.memory.writes import (
    WRITES_COLUMNS,
    WRITES_TEXT,
    WRITES_TITLE,
    Writes,
    writes,
    writes_rows,
)
from reflexion.report.summary import align


@dataclass(frozen=True)
class RoleUse(Record):
    """One strategy's calls of one role (generate, refine, reflect, distill, propose, ...)."""

    strategy: str
    role: str
    calls: int
    prompt_tokens: int
    memory_tokens: int  # the memory text placed in those prompts (trace data.memory_tokens)
    cached_tokens: int  # prompt tokens the runtime served from its prefix cache


@dataclass(frozen=True)
class Refining(Record):
    """How one strategy's answers revised themselves (`<refine>`, the proactive format): for an
    answer with a draft before its first refine, the final held-out verdict against the draft's."""

    strategy: str
    answers: int
    refined: int  # answers with at least one <refine>
    refines: int  # <refine> blocks in all
    drafts: int  # answers whose draft was checked
    fixed: int  # the draft failed held-out, the final answer passed
    broke: int  # the draft passed held-out, the final answer failed
    same: int


@dataclass(frozen=True)
class Recalls(Record):
    """The lessons one strategy's episodes recalled, by where each came from (the trace's
    data.hits[].source): the asking task's own in this run, another task's in this run, or
    another run's (a store shared with it: --memory DIR, --chroma-url)."""

    strategy: str
    recalls: int  # recall steps: an episode asking its memory
    lessons: int  # lessons those returned, in all (a trace without sources counts here only)
    this_task: int
    other_tasks: int
    other_runs: int


@dataclass(frozen=True)
class MemoryUse(Record):
    roles: tuple[RoleUse, ...] = ()  # empty when no prompt held memory or a cached prefix
    refining: tuple[Refining, ...] = ()
    writes: tuple[Writes, ...] = ()
    recalls: tuple[Recalls, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.roles or self.refining or self.writes or self.recalls)


def memory_use(
    steps: Sequence[Step], results: Sequence[TaskResult], order: Sequence[str] = ()
) -> MemoryUse:
    """The four views of `steps`, strategies in `order` first, then as they appear.

    >>> memory_use([], []).roles
    ()
    """
    names = list(dict.fromkeys([*order, *(s.strategy for s in steps)]))
    rank = {name: i for i, name in enumerate(names)}
    roles = role_use(steps)
    if not any(r.memory_tokens or r.cached_tokens for r in roles):
        roles = []
    return MemoryUse(
        tuple(sorted(roles, key=lambda r: rank[r.strategy])),
        tuple(sorted(refining(steps, results), key=lambda r: rank[r.strategy])),
        tuple(sorted(writes(steps), key=lambda w: rank[w.strategy])),
        tuple(sorted(recalls(steps), key=lambda r: rank[r.strategy])),
    )


def is_call(step: Step) -> bool:
    """A step that records a call of an actor role (the trial logs its usage in `data`)."""
    return "reused" in step.data or bool(step.input_tokens or step.output_tokens)


def role_use(steps: Sequence[Step]) -> list[RoleUse]:
    """One RoleUse per strategy and role, in order of appearance."""
    sums: dict[tuple[str, str], list[int]] = {}
    for s in steps:
        if is_call(s):
            row = sums.setdefault((s.strategy, s.kind), [0, 0, 0, 0])
            row[0] += 1
            row[1] += s.input_tokens
            row[2] += int(s.data.get("memory_tokens", 0))
            row[3] += int(s.data.get("cached_tokens", 0))
    return [RoleUse(strategy, role, *row) for (strategy, role), row in sums.items()]


def refining(steps: Sequence[Step], results: Sequence[TaskResult]) -> list[Refining]:
    """One Refining per strategy with "refined" steps; the final verdict of an episode's answer
    is its point on the trial's curve."""
    passed = {
        (r.strategy, r.task_id, r.seed, p.episode): p.passed for r in results for p in r.curve
    }
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for s in steps:
        c = counts[s.strategy] if s.kind in ("refined", "draft") else None
        if c is None:
            continue
        if s.kind == "refined":
            refines = int(s.data.get("refines", 0))
            c.update(answers=1, refined=int(refines > 0), refines=refines)
            continue
        final = passed.get((s.strategy, s.task_id, s.seed, s.episode))
        if final is None:  # an answer with no recorded verdict (a trial cut off mid-way)
            continue
        draft = bool(s.data.get("passed"))
        verdict = "same" if final == draft else ("fixed" if final else "broke")
        c.update({"drafts": 1, verdict: 1})
    fields = ("answers", "refined", "refines", "drafts", "fixed", "broke", "same")
    return [Refining(name, *(c[f] for f in fields)) for name, c in counts.items()]


def recalls(steps: Sequence[Step]) -> list[Recalls]:
    """One Recalls per strategy that recalled, in order of appearance.

    >>> hit = {"id": "r1", "source": "this task, another run"}
    >>> recalls([Step("s", "R", "reflexion", "t", 0, 2, "recall", data={"hits": [hit]})])[0]
    Recalls(strategy='reflexion', recalls=1, lessons=1, this_task=0, other_tasks=0, other_runs=1)
    """
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for s in steps:
        if s.kind != "recall":
            continue
        hits = s.data.get("hits", [])
        counts[s.strategy].update(recalls=1, lessons=len(hits))
        for hit in hits:
            source = str(hit.get("source", ""))
            if source.endswith("another run"):
                counts[s.strategy]["other_runs"] += 1
            elif source.startswith("another task"):
                counts[s.strategy]["other_tasks"] += 1
            elif source:
                counts[s.strategy]["this_task"] += 1
    fields = ("recalls", "lessons", "this_task", "other_tasks", "other_runs")
    return [Recalls(name, *(c[f] for f in fields)) for name, c in counts.items()]


ROLE_COLUMNS = ("strategy", "role", "calls", "prompt tokens", "memory", "cached")
REFINING_COLUMNS: tuple[str, ...] = ("strategy", "answers", "refined", "refines")
REFINING_COLUMNS += ("with a draft", "fixed", "broke", "same")
RECALLS_COLUMNS: tuple[str, ...] = ("strategy", "recalls", "lessons recalled", "this task")
RECALLS_COLUMNS += ("other tasks", "other runs")


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "n/a"


def role_rows(roles: Sequence[RoleUse]) -> list[tuple[str, ...]]:
    """The role table's cells.

    >>> role_rows([RoleUse("insights", "generate", 4, 2000, 300, 1500)])[0][3:]
    ('2,000', '15.0%', '75.0%')
    """
    return [
        (
            r.strategy,
            r.role,
            str(r.calls),
            f"{r.prompt_tokens:,}",
            _share(r.memory_tokens, r.prompt_tokens),
            _share(r.cached_tokens, r.prompt_tokens),
        )
        for r in roles
    ]


def refining_rows(rows: Sequence[Refining]) -> list[tuple[str, ...]]:
    """The refining table's cells.

    >>> refining_rows([Refining("proactive", 10, 4, 6, 3, 1, 0, 2)])[0][1:3]
    ('10', '4 (40.0%)')
    """
    return [
        (
            r.strategy,
            str(r.answers),
            f"{r.refined} ({_share(r.refined, r.answers)})",
            str(r.refines),
            str(r.drafts),
            str(r.fixed),
            str(r.broke),
            str(r.same),
        )
        for r in rows
    ]


def recalls_rows(rows: Sequence[Recalls]) -> list[tuple[str, ...]]:
    """The recall table's cells: the lessons, and each source's share of them.

    >>> recalls_rows([Recalls("reflexion", 4, 8, 2, 0, 6)])[0][3:]
    ('2 (25.0%)', '0 (0.0%)', '6 (75.0%)')
    """
    return [
        (r.strategy, str(r.recalls), str(r.lessons))
        + tuple(f"{n} ({_share(n, r.lessons)})" for n in (r.this_task, r.other_tasks, r.other_runs))
        for r in rows
    ]


def borrowed(use: MemoryUse) -> str:
    """A sentence when some strategy recalled lessons another run wrote (a shared store), else "".

    >>> borrowed(MemoryUse(recalls=(Recalls("reflexion", 4, 8, 2, 0, 6),)))[:52]
    'reflexion recalled 6 lessons written by another run '
    """
    told = [f"{r.strategy} recalled {r.other_runs} lessons" for r in use.recalls if r.other_runs]
    if not told:
        return ""
    return (
        f"{', '.join(told)} written by another run (a store shared across runs); "
        "--collection NAME keeps a run's lessons apart"
    )


ROLES_TITLE = "Memory and prefix cache, as shares of each role's prompt tokens"
ROLES_TEXT = (
    "Per strategy and role (the kind of call: generate, refine, reflect, distill, propose), the "
    "prompt tokens the model reported. Memory is the memory text placed in those prompts "
    "(lessons, rules, a cheatsheet; counted by the run's token count, bounded by "
    "--memory-tokens), as a share of them; cached is the share the runtime served from its "
    "prefix cache. Shown when some prompt held memory or a cached prefix."
)
REFINING_TITLE = "Answers that refined themselves"
REFINING_TEXT = (
    "Answers in the <refine> format: how many held at least one <refine>, and, of those with a "
    "draft before the first one, whether the final answer's held-out verdict differs from the "
    "draft's: fixed (draft failed, final passed), broke (draft passed, final failed), same."
)
RECALLS_TITLE = "Memory recalled"
RECALLS_TEXT = (
    "Per strategy, the episodes that asked the memory (recalls), the lessons they got, and "
    "where each came from: the asking task's own in this run, another task's in this run "
    "(--scope global), or another run's: a store shared across runs (--memory DIR, "
    "--chroma-url) gives a run the lessons of every run that wrote to the same --collection, "
    "but for those another run wrote on the asking task (left out unless --warm-start)."
)


LEFT = {
    ROLES_TITLE: 2,
    REFINING_TITLE: 1,
    WRITES_TITLE: 2,
    RECALLS_TITLE: 1,
}  # the columns of names and text


def memory_tables(use: MemoryUse) -> list[tuple[str, Sequence[str], list[tuple[str, ...]], str]]:
    """(title, header, rows, how to read it) for each view that has rows."""
    tables = [
        (ROLES_TITLE, ROLE_COLUMNS, role_rows(use.roles), ROLES_TEXT),
        (REFINING_TITLE, REFINING_COLUMNS, refining_rows(use.refining), REFINING_TEXT),
        (WRITES_TITLE, WRITES_COLUMNS, writes_rows(use.writes), WRITES_TEXT),
        (RECALLS_TITLE, RECALLS_COLUMNS, recalls_rows(use.recalls), RECALLS_TEXT),
    ]
    return [t for t in tables if t[2]]


def format_memory(use: MemoryUse) -> str:
    """The views as plain text, each under its title (see the module example), and a line when
    lessons came from another run."""
    views = [
        f"{title[0].lower()}{title[1:]}:\n{align(head, rows, LEFT[title])}"
        for title, head, rows, _ in memory_tables(use)
    ]
    return "\n\n".join([*views, *filter(None, [borrowed(use)])])
