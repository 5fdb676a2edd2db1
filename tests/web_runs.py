"""Run folders for the web page's tests: three strategies on the keyword env, with a model whose
answers and reflections hold HTML and a script (which the page must show as text), and a real
Chroma store on disk (hash embedder: no model to load); and streams of keyword tasks answered
by a model that learns from a reflection, whose pass rates are known in advance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import KeywordEnv, scripted
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from prompt_model import HIDDEN, POOL, WORDS, PromptModel, WordsEnv

from reflexion import RunConfig, run

HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'


def hostile_run(out: Path) -> Path:
    """Every answer holds HOSTILE and is visibly wrong (the word "river" or "stone" is
    missing), so every strategy runs its 2 episodes and reflexion stores lessons."""
    replies = [f"{HOSTILE} apple cloud, try {i}\nline two of answer {i}" for i in range(200)]
    config = RunConfig(
        strategies=("single", "self-refine", "reflexion"),
        episodes=2,
        out=str(out),
        embedder="hash-64",
        concurrency=1,
    )
    run(config, env=KeywordEnv(), model=scripted(replies))
    return out


# The prompts of a curator or a reflection: prompt_model answers them (rules, a plan, ...).
OTHER_ROLES = (
    "Reply with a JSON object",
    "Change the rules so that",
    "Rewrite the whole cheatsheet",
    "Write at most 3 notes",
    "concrete plan",
)


class LearningModel(PromptModel):
    """PromptModel, but its answers follow a plan: a task whose first word is at an even place
    of prompt_model.POOL is solved at once (every word and the hidden one); any other is
    answered with its first word only, unless the prompt holds a reflection's plan or the
    check's feedback. So `single` solves half the tasks and `reflexion` (2 episodes) all."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        prompt = "\n".join(m.text for m in messages)
        found = WORDS.findall(prompt)
        if not found or any(marker in prompt for marker in OTHER_ROLES):
            return super()._generate(messages, *args, **kwargs)
        words = found[-1].split(", ")
        learned = "Plan: use every word" in prompt or "missing words" in prompt
        full = learned or POOL.index(words[0]) % 2 == 0
        reply = " ".join(["The", *(words + [HIDDEN] if full else words[:1]), "go together."])
        usage = {"input_tokens": len(prompt.split()), "output_tokens": len(reply.split())}
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        message = AIMessage(reply, usage_metadata=usage)  # type: ignore[arg-type]
        return ChatResult(generations=[ChatGeneration(message=message)])


def learning_run(out: Path, strategies: tuple[str, ...], episodes: int, tasks: int = 16) -> Path:
    """A stream of `tasks` keyword tasks (prompt_model.WordsEnv) answered by LearningModel."""
    config = RunConfig(
        strategies=strategies,
        episodes=episodes,
        out=str(out),
        embedder="hash-64",
        order="stream",
        concurrency=1,
    )
    run(config, env=WordsEnv(tasks), model=LearningModel(), report=False)  # no plots: faster
    return out
