"""What a design that learns across tasks is, and the loop the designs share.

A design (exemplars, insights, cheatsheet, bank: one module each) is two things:

- `Lessons`: its kind of lesson as the shared machinery uses it: the header and the place of
  its block in a prompt (reflexion.actor.memory_text), its distill prompt
  (reflexion.actor.prompts), and, for a board, the board's rules (reflexion.trial.board);
- `Design`: what it shows the model before an attempt and what it learns after the task,

run in one of two loops:

- `sampled`: fresh samples (the greedy answer, then samples at --temperature), the design's
  memory in every prompt, as best-of-N with memory; set against `resample` it measures the memory
  (`bank-scaled` runs every sample, as ReasoningBank's parallel scaling does);
- `reflected`: Reflexion's loop (a reflection after each failed attempt, recalled with the
  design's memory), the design's experience plus the task's own lessons.

    >>> notes = Lessons(Kind.ITEM, "Notes:", place="before_task", body=bulleted)
    >>> async def nothing(trial, episode): return []
    >>> async def learn_nothing(trial, attempts, episode): return None
    >>> f"{Design(notes, nothing, learn_nothing).kind}", notes.body(["a", "b"])
    ('item', '- a\\n- b')
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from reflexion.core.lesson_records import Board, Kind, Recalled, Reflection
from reflexion.core.protocols import Trial
from reflexion.core.records import Attempt, Call, Task

REASON_CHARS = 300  # a curator's reason: a sentence or two, before its operations
Place = Literal["system", "before_task", "after_task"]  # a block's place in a prompt
Shown = Callable[[Trial, int], Awaitable[list[Recalled]]]
Learn = Callable[[Trial, list[Attempt], int], Awaitable[None]]
# after each attempt: what the design showed for it, and the attempt (its check's verdict)
Reused = Callable[[Trial, list[Recalled], Attempt], Awaitable[None]]
# the distill request from the task, its attempts as the prompt shows them, the attempts and
# the board
Request = Callable[[Task, str, Sequence[Attempt], Sequence[Reflection]], str]


@dataclass(frozen=True)
class Distill:
    """A distill prompt: the system message, and the request that the shared part (the task's
    attempts, each with the verdict of its check) goes into, in two forms: `request` asks for a
    JSON object that `schema` holds the reply to (--curation json, the default: a short reason
    first, then bounded operations); `text` asks for free-text lines (--curation text, to
    compare what the schema changes). `temperature`: the curator's sampling (None: greedy, as
    every other call that writes memory), with a seed of its own."""

    system: str
    request: Request
    schema: Callable[[Sequence[Reflection]], dict[str, Any]]  # of the board the curator sees
    text: Request
    # a line after either request on the board's room (the characters a prompt shows of it),
    # for a board that grows until it is cut (the cheatsheet); None: no line
    room: Callable[[Sequence[Reflection], int], str] | None = None
    temperature: float | None = None


def reason_and(name: str, items: Sequence[dict[str, Any]], most: int) -> dict[str, Any]:
    """A curator's reply schema: a short free-text `reason` first (what the attempts show), then
    at most `most` operations under `name`, each one of `items` (an operation the board allows).

    >>> list(reason_and("items", [{"type": "string"}], 2)["properties"])
    ['reason', 'items']
    """
    item = items[0] if len(items) == 1 else {"anyOf": list(items)}
    listed = {"type": "array", "items": item, "maxItems": most}
    return {
        "type": "object",
        "properties": {"reason": {"type": "string", "maxLength": REASON_CHARS}, name: listed},
        "required": ["reason", name],
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class Lessons:
    """A kind of lesson as the shared machinery uses it: its block in a prompt (the header, one
    plain sentence on how to use it, then `body` of the texts), its distill prompt (None: it
    is kept without a model call) and its board's rules (None: recalled by similarity)."""

    kind: Kind
    header: str
    place: Place
    body: Callable[[Sequence[str]], str]
    distill: Distill | None = None
    board: Board | None = None


def json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in a reply (code fences or words around it allowed), or None.

    >>> json_object('Sure: {"reason": "x", "operations": []} done')
    {'reason': 'x', 'operations': []}
    >>> json_object("{'reason': 'x'}") is None
    True
    """
    decoder = json.JSONDecoder()
    for start in (i for i, c in enumerate(text) if c == "{"):
        try:
            data = decoder.raw_decode(text, start)[0]
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


def operation(op: str | list[str], number: str, most: int, chars: int) -> dict[str, Any]:
    """The schema of one board operation: `op` (one name, or any of several), the lesson's
    `number` on the board (1 to `most`; none for an add) and, where `chars`, a text.

    >>> sorted(operation("add", "rule", 0, 300)["properties"])
    ['op', 'text']
    """
    props: dict[str, Any] = {"op": {"const": op} if isinstance(op, str) else {"enum": op}}
    if most:
        props[number] = {"type": "integer", "minimum": 1, "maximum": most}
    if chars:
        props["text"] = {"type": "string", "minLength": 3, "maxLength": chars}
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def bulleted(texts: Sequence[str]) -> str:
    return "\n".join(f"- {t}" for t in texts)


@dataclass(frozen=True)
class Design:
    """A way of learning across tasks: its kind of lesson, what goes into a prompt for an
    episode, and what the task teaches once it is over (given its attempts)."""

    lessons: Lessons
    shown: Shown
    learn: Learn
    reused: Reused | None = None  # verifies each reuse of what was shown (skills)

    @property
    def kind(self) -> Kind:
        return self.lessons.kind


async def sampled(design: Design, trial: Trial, run_all: bool = False) -> None:
    """Fresh samples with the design's memory in every prompt, stopping at the first that
    passes the visible check, or, with `run_all`, running all of them (ReasoningBank's parallel
    scaling, whose curator then sees every candidate)."""
    attempts: list[Attempt] = []
    for sample in range(trial.budget):
        episode = sample + 1
        memory = await design.shown(trial, episode)
        call = await trial.ask(trial.actor.generate(trial.task, memory, sample=sample), episode)
        attempts.append(await trial.attempt(call, episode))
        if design.reused is not None:
            await design.reused(trial, in_prompt(memory, call), attempts[-1])
        if trial.solved and not run_all:
            break
    await design.learn(trial, attempts, attempts[-1].episode)


async def reflected(design: Design, trial: Trial) -> None:
    attempts: list[Attempt] = []
    for episode in range(1, trial.budget + 1):
        shown = await design.shown(trial, episode)
        memory = shown + await trial.recall(episode)
        call = await trial.ask(trial.actor.generate(trial.task, memory, sample=0), episode)
        attempt = await trial.attempt(call, episode)
        attempts.append(attempt)
        if design.reused is not None:
            await design.reused(trial, in_prompt(shown, call), attempt)
        if trial.solved or episode == trial.budget:
            break
        reflection = await trial.ask(trial.actor.reflect(trial.task, attempt), episode)
        await trial.remember(reflection, attempt)
    await design.learn(trial, attempts, attempts[-1].episode)


def in_prompt(shown: list[Recalled], call: Call) -> list[Recalled]:
    """The lessons shown that reached the prompt (--memory-tokens may leave some out)."""
    return [r for r in shown if r.reflection.id not in call.left_out]


def cannot_learn(trial: Trial, kind: Kind, episode: int, board: bool = True) -> bool:
    """Whether what a curator would write cannot be kept here: a board changes only under
    --order stream, in a memory that is not frozen (Trial.boards_change); items are kept by any
    memory that is not frozen (Trial.stores). Then no curator is asked; the trace says why."""
    if trial.boards_change if board else trial.stores:
        return False
    why = "the memory is frozen"
    if board:
        why = "the board changes only under --order stream, in a memory that is not frozen"
    trial.note(episode, "not learned", why, {"kind": kind})
    return True


def first_prompt(
    design: Design, reflected: bool = False
) -> Callable[[Trial], Awaitable[list[Recalled]]]:
    """What the design shows a task's first attempt (with Reflexion: its recalled reflections
    too), as the gate replays it (reflexion.trial.gate)."""

    async def shown(trial: Trial) -> list[Recalled]:
        memory = await design.shown(trial, 1)
        return memory + await trial.recall(1) if reflected else memory

    return shown


def both(design: Design) -> tuple[Callable[[Trial], Awaitable[None]], ...]:
    """The design's two strategies: sampled, and combined with Reflexion's reflections."""

    async def alone(trial: Trial) -> None:
        await sampled(design, trial)

    async def with_reflexion(trial: Trial) -> None:
        await reflected(design, trial)

    return alone, with_reflexion
