"""A chat model whose reply is a function of its prompt alone, and a stream of keyword tasks:
for tests that run the real CLI in a subprocess (`--model python:prompt_model:PromptModel
--env python:prompt_model:WordsEnv`) and must get the same replies when a run is repeated or
resumed. No weights, no network.

The model answers each role in the form its parser reads (a curator's JSON object, or under
--curation text ADD/EDIT/UPVOTE/DOWNVOTE lines, a <sheet>, TITLE/WHEN/DO items; an answer using
some of the listed words), choosing by a hash of
the prompt, so a stream mixes solved and failed tasks, edits and malformed lines. Any marker
(`MARK-...` or the held-out SECRET) it sees in a prompt it copies into its reply: a leak into a
prompt becomes a leak into the memory, where a test can find it.

    >>> model = PromptModel()
    >>> model.invoke("Write one sentence using the words: ant, bee.").text == model.invoke(
    ...     "Write one sentence using the words: ant, bee."
    ... ).text
    True
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import time
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from reflexion.core.records import Score, Task

SECRET = "HELD-OUT-SECRET-9c1d"  # in the held-out feedback only
HIDDEN = "zebra"  # the held-out check also wants this word
MARKER = re.compile(r"(?:MARK|HELD-OUT-SECRET)-[0-9a-z]+")
WORDS = re.compile(r"using the words: ([a-z, ]+)\.")
SHEET = re.compile(r"Current cheatsheet:\n(.*?)\n\nTask just done:", re.DOTALL)
PROGRAMS = "You may write a Python program."
POOL = ["apple", "river", "cloud", "stone", "lamp", "frog", "mint", "oak", "salt", "wave"]


def _hash(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def reply_to(prompt: str) -> str:
    """The reply to `prompt` (all of its messages' text): the same prompt, the same reply."""
    h, marks = _hash(prompt), " ".join(sorted(set(MARKER.findall(prompt))))
    if "Reply with a JSON object" in prompt:  # a curator under --curation json (the default)
        return _json_reply(prompt, h, marks)
    if "Change the rules so that" in prompt:
        pool = [
            f"ADD: Rule {h % 5}: use each listed word once. {marks}",
            "UPVOTE 1",
            "DOWNVOTE 1",
            f"EDIT 1: Rule {h % 7}: name every listed word. {marks}",
            "UPVOTE 2",
            f"ADD: Rule {h % 11}: read the list twice. {marks}",
            "DOWNVOTE 2",
            "EDIT 9: a rule that is not there",
            "this line is chatter",
        ]
        picks = [pool[(h >> (4 * i)) % len(pool)] for i in range(1 + h % 3)]
        return "\n".join([pool[0]] * ("(none yet)" in prompt) + picks)
    if "Rewrite the whole cheatsheet" in prompt:
        found = SHEET.search(prompt)
        old = found[1] if found and found[1] != "(empty)" else ""
        if h % 5 == 0:
            return "I would rather not rewrite it."  # no <sheet>: refused, the sheet kept
        return f"<sheet>{old}\n- tip {h % 97}: list the words first. {marks}</sheet>"
    if "Write at most 3 notes" in prompt:
        second = f"\nTITLE: Second {h % 3}\nWHEN: always\nDO: check again. {marks}" * (h % 2)
        return f"TITLE: Words {h % 4}\nWHEN: a task lists words\nDO: use each. {marks}" + second
    if "concrete plan" in prompt:
        return f"I left out a word. Plan: use every word. {marks}"
    return _answer(prompt, h, marks)


def _json_reply(prompt: str, h: int, marks: str) -> str:
    """A curator's JSON reply: rule or sheet operations (some naming a rule or bullet that is
    not there; an empty board always gets an add), or items; one in 7 is no JSON at all."""
    empty = "(none yet)" in prompt or "Current cheatsheet:\n(empty)" in prompt
    if h % 7 == 0 and not empty:
        return "I would rather not change anything."  # unparsed: nothing changes
    if "Write at most 3 notes" in prompt:
        first = {"title": f"Words {h % 4}", "when": "a list", "do": f"use each {marks}"}
        items = [first]
        items += [{"title": "Second", "when": "always", "do": f"check again {marks}"}] * (h % 2)
        return json.dumps({"reason": "the words", "items": items})
    number = "bullet" if "Update the cheatsheet" in prompt else "rule"
    pool = [
        {"op": "add", "text": f"Tip {h % 5}: use each listed word once. {marks}"},
        {"op": "upvote", number: 1},
        {"op": "edit", number: 1, "text": f"Tip {h % 7}: name every listed word. {marks}"},
        {"op": "downvote", number: 2},
        {"op": "remove", number: 1},
        {"op": "edit", number: 9, "text": "one that is not there"},
    ]
    ops = [pool[0]] * empty + [pool[(h >> (4 * i)) % len(pool)] for i in range(1 + h % 3)]
    return json.dumps({"reason": f"what the attempt shows {marks}", "operations": ops})


def _answer(prompt: str, h: int, marks: str) -> str:
    found = WORDS.findall(prompt)
    words = found[-1].split(", ") if found else []  # the last: earlier ones are shown examples
    used = [w for i, w in enumerate(words) if (h >> (2 * i)) % 3 != 0]
    hidden = [HIDDEN] if h % 3 == 0 else []
    sentence = " ".join(["The", *used, *hidden, "go together.", marks]).strip()
    if PROGRAMS in prompt:  # a task that allows a program gets one that prints the answer
        return f"```python\nprint({sentence!r})\n```\n{sentence}"
    return sentence


class PromptModel(BaseChatModel):
    """Replies with `answer(prompt)` (by default `reply_to`); one token per word."""

    answer: Callable[[str], str] | None = None

    @property
    def _llm_type(self) -> str:
        return "prompt-function"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt = "\n".join(m.text for m in messages)
        reply = (self.answer or reply_to)(prompt)
        words_in, words_out = len(prompt.split()), len(reply.split())
        usage = {"input_tokens": words_in, "output_tokens": words_out}
        usage["total_tokens"] = words_in + words_out
        message = AIMessage(reply, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])


class StallingModel(PromptModel):
    """PromptModel, but with REFLEXION_TEST_STALL set every call after the process's first
    blocks its worker thread for a minute, as a local model's decode does (a thread that no
    cancel can stop): for the tests of Ctrl-C, where the first call gives a result and the
    others are in flight. Without it, PromptModel (a resume gets the same replies)."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if next(CALLS) and os.environ.get("REFLEXION_TEST_STALL"):
            time.sleep(60)
        return super()._generate(messages, stop, run_manager, **kwargs)


CALLS = itertools.count()


class WordsEnv:
    """Write a sentence with every listed word (visible); the held-out check also wants HIDDEN,
    and its feedback carries SECRET. `marker` is put into every task prompt (a visible text the
    memory may carry). With `programs`, each prompt allows a program, and the model writes one
    (for the designs that keep programs, `skills`)."""

    name = "words"

    def __init__(self, n: int = 8, marker: str = "", programs: bool = False) -> None:
        note = f" ({marker})" if marker else ""
        note += f" {PROGRAMS}" if programs else ""
        pairs = [(POOL[i % 10], POOL[(i + 1) % 10]) for i in range(n)]
        self._tasks = [
            Task(f"w{i}", f"Write one sentence using the words: {a}, {b}.{note}", {"words": [a, b]})
            for i, (a, b) in enumerate(pairs)
        ]

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def score(self, task: Task, candidate: str) -> Score:
        missing = [w for w in task.spec["words"] if w not in candidate.lower()]
        text = "all words used" if not missing else f"missing words: {', '.join(missing)}"
        return Score(1 - len(missing) / len(task.spec["words"]), not missing, text)

    def evaluate(self, task: Task, candidate: str) -> Score:
        passed = self.score(task, candidate).solved and HIDDEN in candidate.lower()
        return Score(float(passed), passed, f"{SECRET}: hidden word {HIDDEN!r}")


def words_with_programs() -> WordsEnv:
    """The eight keyword tasks, each allowing a program (`--env python:prompt_model:
    words_with_programs`): the model writes one, so `skills` has programs to keep."""
    return WordsEnv(programs=True)


def twenty_words() -> WordsEnv:
    """Twenty keyword tasks (`--env python:prompt_model:twenty_words`; the word pairs repeat
    after ten): a stream long enough for `insights`' chunks of 8 successes and more pairs."""
    return WordsEnv(20)
