"""Every strategy is a small async function on the same loop, each in its paper's module
(`retry` beside Self-Refine, whose loop it shares); this registry maps names to them, and
each kind of lesson to the design module that says what it is (`LESSONS`).

A strategy is an async function of a `Trial` (reflexion.core.protocols) plus which memory it
uses. Adding one is a module and a `register_strategy` call:

    >>> async def twice(trial):
    ...     for episode in (1, 2):
    ...         call = await trial.ask(trial.actor.generate(trial.task, (), sample=0), episode)
    ...         await trial.attempt(call, episode)
    >>> register_strategy(Strategy("twice", twice))
    >>> [s.name for s in parse_strategies("single,twice")]
    ['single', 'twice']
    >>> del STRATEGIES["twice"]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from reflexion.core.errors import UsageError, did_you_mean
from reflexion.core.lesson_records import Board, Kind, Recalled
from reflexion.core.protocols import Trial
from reflexion.strategies import (
    bank,
    baselines,
    cheatsheet,
    correct,
    exemplars,
    insights,
    proactive,
    reflexion,
    self_refine,
    skills,
)
from reflexion.strategies.learning import Lessons, first_prompt

RUN_MEMORY = "run"  # a strategy's `memory`: the run's --memory-backend
_WITH = "the design's memory plus reflexion's own reflections"


@dataclass(frozen=True)
class Strategy:
    """A named strategy. `memory`: None (it keeps no lessons), RUN_MEMORY (the run's memory
    backend), or the name of a backend it always uses."""

    name: str
    run: Callable[[Trial], Awaitable[None]]
    memory: str | None = None
    help: str = ""
    curated: str = ""  # what a curator (the distill role) writes: "board", "items"; "": none
    # what it shows a task's first attempt, for the gate's replays (reflexion.trial.gate);
    # None: it keeps no lessons, or cannot be gated
    first: Callable[[Trial], Awaitable[list[Recalled]]] | None = None
    shows: tuple[str, ...] = ()  # the kinds of lesson `first` shows


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("single", baselines.single, help="one attempt, no feedback"),
        Strategy(
            "resample", baselines.resample, help="best-of-N samples, best by the visible score"
        ),
        Strategy("correct", correct.run, help='a generic "there might be an error" turn'),
        Strategy(
            "retry",
            self_refine.retry,
            help="the check's result inline, no feedback or reflection",
        ),
        Strategy("self-refine", self_refine.run, help="feedback and refine, history inline"),
        Strategy("reflexion", reflexion.run, RUN_MEMORY, help="reflections in a memory"),
        Strategy("reflexion-window", reflexion.run, "window", help="reflexion, last-k list"),
        Strategy(
            "self-refine-sampled",  # not in DEFAULT: a protocol check
            self_refine.sampled,
            help="self-refine, feedback and refinements sampled",
        ),
        # learning across tasks (learns under --order stream: the tasks before are over)
        Strategy("exemplars", exemplars.run, RUN_MEMORY, help="solved tasks as worked examples"),
        Strategy(
            "insights",
            insights.run,
            RUN_MEMORY,
            help="a shared rule list with votes",
            curated="board",
        ),
        Strategy(
            "expel",
            insights.expel,
            RUN_MEMORY,
            help="insights' rules, with the most similar solved tasks as examples (ExpeL)",
            curated="board",
        ),
        Strategy(
            "cheatsheet",
            cheatsheet.run,
            RUN_MEMORY,
            help="one sheet, rewritten per task",
            curated="board",
        ),
        Strategy(
            "bank", bank.run, RUN_MEMORY, help="items from successes and failures", curated="items"
        ),
        Strategy(
            "bank-scaled",  # ReasoningBank's parallel scaling (MaTTS)
            bank.scaled,
            RUN_MEMORY,
            help="bank, all N candidates run, one curator call compares them",
            curated="items",
        ),
        Strategy("skills", skills.run, RUN_MEMORY, help="verified programs, reused and checked"),
        Strategy("proactive", proactive.run, help="<refine> inside the answer (PASR, prompted)"),
        Strategy("reflexion+exemplars", exemplars.with_reflexion, RUN_MEMORY, help=_WITH),
        Strategy(
            "reflexion+insights", insights.with_reflexion, RUN_MEMORY, help=_WITH, curated="board"
        ),
        Strategy(
            "reflexion+cheatsheet",
            cheatsheet.with_reflexion,
            RUN_MEMORY,
            help=_WITH,
            curated="board",
        ),
        Strategy("reflexion+bank", bank.with_reflexion, RUN_MEMORY, help=_WITH, curated="items"),
        Strategy("reflexion+skills", skills.with_reflexion, RUN_MEMORY, help=_WITH),
    )
}

# What each design that keeps lessons shows a task's first attempt, and of which kinds (the gate
# replays it, and judges only the kinds a prompt shows)
First = Callable[[Trial], Awaitable[list[Recalled]]]
_FIRST: dict[str, tuple[First, tuple[str, ...]]] = {
    "reflexion": (reflexion.first, (Kind.REFLECTION,))
}
for _name, _design, _also in (
    ("exemplars", exemplars.DESIGN, ()),
    ("insights", insights.DESIGN, ()),
    ("expel", insights.EXPEL, (Kind.EXEMPLAR,)),
    ("cheatsheet", cheatsheet.DESIGN, ()),
    ("bank", bank.DESIGN, ()),
    ("bank-scaled", bank.DESIGN, ()),
    ("skills", skills.DESIGN, ()),
):
    _FIRST[_name] = (first_prompt(_design), (_design.kind, *_also))
    if f"reflexion+{_name}" in STRATEGIES:
        _kinds = (_design.kind, *_also, Kind.REFLECTION)
        _FIRST[f"reflexion+{_name}"] = (first_prompt(_design, reflected=True), _kinds)
STRATEGIES |= {
    n: dataclasses.replace(STRATEGIES[n], first=f, shows=tuple(map(str, kinds)))
    for n, (f, kinds) in _FIRST.items()
}

# Each kind of lesson (by its Kind, which equals its value) as its design's module defines it:
# its block in a prompt, its distill prompt, its board's rules (reflexion.strategies.learning)
LESSONS: dict[str, Lessons] = {
    lessons.kind: lessons
    for lessons in (
        reflexion.REFLECTIONS,
        exemplars.EXEMPLARS,
        skills.SKILLS,
        insights.RULES,
        cheatsheet.SHEETS,
        bank.ITEMS,
    )
}


def board_rules(kind: str) -> Board | None:
    """The rules of the board of `kind`, as its design's module sets them; None for a kind
    recalled by similarity, or one this version does not know."""
    lessons = LESSONS.get(kind)
    return lessons.board if lessons is not None else None


def voted(kind: str) -> bool:
    """Whether lessons of `kind` carry votes that can drop them (ExpeL's rules).

    >>> voted("rule"), voted("cheatsheet"), voted("an unknown kind")
    (True, False, False)
    """
    rules = board_rules(kind)
    return rules is not None and rules.drops_at_zero


def one_text(kind: str) -> bool:
    """Whether the board of `kind` is one text (the cheatsheet), not a list."""
    rules = board_rules(kind)
    return rules is not None and rules.one


BUILTIN = tuple(STRATEGIES)  # the ones above, before any registration
# `compare`'s default: the within-task strategies (the cross-task designs need --order stream,
# and most a chat model)
DEFAULT = BUILTIN[: BUILTIN.index("reflexion-window") + 1]


def register_strategy(strategy: Strategy) -> None:
    """Make `--strategies NAME` (and RunConfig(strategies=(NAME,))) run `strategy`."""
    STRATEGIES[strategy.name] = strategy


def parse_strategies(text: str, extra: Sequence[Strategy] = ()) -> list[Strategy]:
    """Parse "self-refine,reflexion" into strategies (the registered ones and `extra`); an
    unknown or repeated name is a UsageError."""
    known = STRATEGIES | {s.name: s for s in extra}
    names = [n.strip() for n in text.split(",") if n.strip()]
    listed = ", ".join(known)
    if not names:
        msg = f"no strategy given; known: {listed}"
        raise UsageError(msg)
    bad = [n for n in names if n not in known]
    if bad:
        msg = f"unknown strategy {bad[0]!r}{did_you_mean(bad[0], known)}; known: {listed}"
        raise UsageError(msg)
    if len(set(names)) != len(names):
        msg = f"strategy listed twice in {text!r}"
        raise UsageError(msg)
    return [known[n] for n in names]
