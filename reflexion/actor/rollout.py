"""Episodes that are rollouts (an InteractiveEnv, e.g. `textworld`): the actor plays the game
from its start, one model call per action, and the trajectory is the candidate.

The roles that make a candidate (generate, refine, correct) each play one game; what they differ
in is the context the player gets: lessons recalled from memory (Reflexion), or the earlier
plays' actions with the feedback on them (Self-Refine: the refined plan is played again from the
start). Feedback and reflections are the chat actor's own calls on the trajectory text. A
rollout is recorded as one call whose tokens are the sum of its steps; identical greedy steps
(the same game start) are answered once per run, as any call.

Each step's prompt holds the game so far. When the model answers that a prompt is over its
context (the local model has 4,096 tokens), the play leaves out the older half of its turns and
asks again, instead of ending there; the goal, the lessons and the game's start stay (the trace
counts these in the play's `shortened`). A reflection on a long play sees its start and its end
(PLAY_CHARS), as a distill prompt does; Self-Refine's feedback sees every play so far that way,
all of them within PLAY_CHARS.

    >>> too_long("request (4200 tokens) exceeds the available context size (4096 tokens)")
    True

    >>> pick("Go West.", ("go west", "look"))
    'go west'
    >>> pick("I will open the box", ("open box", "look"))
    'open box'
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from reflexion.actor.chat import ChatActor
from reflexion.actor.memory_text import place
from reflexion.actor.prompts import CORRECT_REQUEST, ends
from reflexion.core.lesson_records import Curation, Kind, Recalled, Reflection
from reflexion.core.protocols import InteractiveEnv
from reflexion.core.records import Attempt, Call, Observation, Task, Turn, alone_total

PLAY_SYSTEM = (
    "You are playing a text adventure game. Reach the goal in as few actions as you can. "
    "Each turn, answer with exactly one command from the list of commands, and nothing else."
)
EARLIER = "\n\nYour earlier plays of this game (their actions) and the feedback on them:\n"
AGAIN = "\n\nPlay again from the start, using the feedback."
WORDS = re.compile(r"[a-z0-9']+")
# a play as a reflection or feedback prompt shows it (its start and its end), or all the plays
# together in a feedback prompt: within a 4,096-token context
PLAY_CHARS = 6000
# how model servers say a prompt is over the context: llama.cpp, OpenAI-style APIs
TOO_LONG = re.compile(r"exceeds the available context|context.length", re.I)


@dataclass(frozen=True)
class Play:
    """What a play's first prompt holds beyond the game: text after the goal, the system
    prompt (with any boards), text before the goal, and which sample of best-of-N it is."""

    context: str
    system: str = PLAY_SYSTEM
    start: str = ""
    sample: int = 0
    memory_tokens: int = 0  # the lessons in one step's prompt (counted tokens)


class RolloutActor:
    """The Actor roles for an interactive env, on top of a ChatActor (its model, cache, retries
    and token limits)."""

    def __init__(self, actor: ChatActor, env: InteractiveEnv) -> None:
        self.actor, self.env = actor, env

    @property
    def curation(self) -> Curation:
        """How the chat actor asks a curator for memory (json or text)."""
        return self.actor.curation

    @property
    def memory_chars(self) -> int:
        """The most memory text one step's prompt shows, in characters."""
        return self.actor.memory_chars

    async def generate(self, task: Task, lessons: Sequence[Recalled], sample: int) -> Call:
        """A play with the lessons placed as in any prompt (reflexion.actor.memory_text): the
        boards after the system prompt, examples and notes before the goal, the task's own
        reflections after it, all within --memory-tokens."""
        placed = place([r.reflection for r in lessons], self.actor.memory_tokens)
        context = "\n\n" + placed.after_task if placed.after_task else ""
        system = f"{PLAY_SYSTEM}\n\n{placed.system}" if placed.system else PLAY_SYSTEM
        start = f"{placed.before_task}\n\nYour task:\n" if placed.before_task else ""
        play = Play(context, system, start, sample, placed.tokens)
        call = await self._play("generate", task, play)
        return dataclasses.replace(call, left_out=tuple(placed.left_out))

    async def refine(self, task: Task, history: Sequence[Turn], sample: int = 0) -> Call:
        return await self._play("refine", task, Play(_earlier(history) + AGAIN, sample=sample))

    async def correct(self, task: Task, history: Sequence[Turn]) -> Call:
        return await self._play("correct", task, Play(f"{_earlier(history)}\n\n{CORRECT_REQUEST}"))

    async def feedback(self, task: Task, history: Sequence[Turn], sample: int = 0) -> Call:
        """Self-Refine's feedback on the plays so far: each play by its start and its end, all
        of them together within PLAY_CHARS, so 30-step plays fit the local model's context."""
        share = PLAY_CHARS // max(1, len(history))
        shown = [_bounded(turn, share) for turn in history]
        return await self.actor.feedback(task, shown, sample)

    async def reflect(self, task: Task, attempt: Attempt) -> Call:
        return await self.actor.reflect(task, _ends(attempt, PLAY_CHARS))

    async def distill(
        self, task: Task, kind: Kind, attempts: Sequence[Attempt], board: Sequence[Reflection]
    ) -> Call:
        """Experience for other games, from this game's trajectories (the chat actor's call)."""
        return await self.actor.distill(task, kind, attempts, board)

    async def _play(self, role: str, task: Task, play: Play) -> Call:
        game = await asyncio.to_thread(self.env.play, task)
        calls: list[Call] = []
        transcript: list[str] = []
        refused: list[Call] = []  # prompts refused as over the context: their time still counts
        try:
            seen = await asyncio.to_thread(game.reset)
            transcript.append(seen.text)
            messages: list[BaseMessage] = [
                SystemMessage(play.system),
                HumanMessage(f"{play.start}{task.prompt}{play.context}\n\n{_turn(seen)}"),
            ]
            for _ in range(self.env.max_steps):
                call = await self.actor.act(messages, play.sample)
                while call.error and too_long(call.error) and len(messages) > 2:
                    refused.append(call)
                    messages = shorter(messages)
                    call = await self.actor.act(messages, play.sample)
                calls.append(call)
                if call.error:
                    break
                action = pick(call.output, seen.actions)
                seen = await asyncio.to_thread(game.step, action)
                transcript += [f"> {action}", seen.text]
                if seen.done:
                    break
                messages += [AIMessage(action), HumanMessage(_turn(seen))]
        finally:
            await asyncio.to_thread(game.close)
        call = _total(role, "\n".join(transcript), calls)
        # every step's prompt carries the lessons again
        return dataclasses.replace(
            call,
            memory_tokens=play.memory_tokens * len(calls),
            sample=play.sample,
            shortened=len(refused),
            latency_s=call.latency_s + sum(c.latency_s for c in refused),
            alone_s=None if call.alone_s is None else call.alone_s + sum(c.alone for c in refused),
        )


def too_long(error: str) -> bool:
    return bool(TOO_LONG.search(error))


def shorter(messages: list[BaseMessage]) -> list[BaseMessage]:
    """A play's messages without the older half of its turns (at least one): the system prompt
    and the first message (goal, lessons, the game's start) stay. Half at a time, so the steps
    after share the new prompt's start, which a prefix cache serves again.

    >>> m = [SystemMessage("s"), HumanMessage("start")]
    >>> m += [AIMessage("a1"), HumanMessage("o1"), AIMessage("a2"), HumanMessage("o2")]
    >>> [x.content for x in shorter(m)]
    ['s', 'start', 'a2', 'o2']
    """
    head, turns = messages[:2], messages[2:]
    drop = max(1, len(turns) // 4) * 2  # turns come in pairs: the command, what it showed
    return head + turns[drop:]


def pick(reply: str, actions: Sequence[str]) -> str:
    """The admitted action the reply names: an exact match, else the one sharing the most
    words with the reply's first line (ties: the earlier one); the reply itself when the game
    admits any text."""
    first = next((line for line in reply.splitlines() if line.strip()), "").strip().lower()
    first = first.strip(" .!'\"`*")
    if not actions:
        return first
    for action in actions:
        if first == action.lower():
            return action
    said = set(WORDS.findall(first))
    return max(actions, key=lambda a: len(said & set(WORDS.findall(a.lower()))))


def _ends(attempt: Attempt, chars: int) -> Attempt:
    return dataclasses.replace(attempt, candidate=ends(attempt.candidate, chars))


def _bounded(turn: Turn, chars: int) -> Turn:
    return dataclasses.replace(turn, attempt=_ends(turn.attempt, chars))


def _turn(seen: Observation) -> str:
    commands = "; ".join(seen.actions) if seen.actions else "any"
    return f"{seen.text}\n\nCommands: {commands}\nYour command:"


def _earlier(history: Sequence[Turn]) -> str:
    plays = []
    for i, turn in enumerate(history, start=1):
        actions = [x[2:] for x in turn.attempt.candidate.splitlines() if x.startswith("> ")]
        said = turn.feedback if turn.feedback is not None else turn.attempt.score.feedback
        plays.append(f"Play {i}: {', '.join(actions) or '(no action)'}\nFeedback: {said}")
    return EARLIER + "\n".join(plays)


def _total(role: str, transcript: str, calls: list[Call]) -> Call:
    """One call for the whole rollout: its steps' tokens and time summed, the first error."""
    error = next((c.error for c in calls if c.error), None)
    return Call(
        role,
        (),  # no single prompt asked for it: a reflection gets a prompt of its own
        transcript,
        input_tokens=sum(c.input_tokens for c in calls),
        output_tokens=sum(c.output_tokens for c in calls),
        latency_s=sum(c.latency_s for c in calls),
        alone_s=alone_total(calls),
        error=error,
        cached_tokens=sum(c.cached_tokens for c in calls),
        reused=bool(calls) and all(c.reused for c in calls),
        retries=sum(c.retries for c in calls),
    )
