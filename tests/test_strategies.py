"""Each strategy against a scripted fake chat model: the exact calls it makes, and what it sees.

The fake model fails on one call too many, and the loop records that failure as an error on the
trial, so `errors == ()` plus an exhausted script pins the call count exactly.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from conftest import SECRET, CountingModel, KeywordEnv, schema_scripted, scripted
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from prompt_model import SECRET as HELD_OUT
from prompt_model import PromptModel, WordsEnv
from running import RunConfig, run

from memory import WindowMemory
from reflexion.actor.prompts import CORRECT_REQUEST
from reflexion.core.records import TaskResult
from reflexion.core.runfolder import RunFolder
from reflexion.strategies import BUILTIN, STRATEGIES
from reflexion.trial.feedback import GENERIC_FEEDBACK

MARK = "MARK-visible"  # in every task's prompt: a visible text the memory may keep


def run_one(
    tmp_path: Path,
    strategy: str,
    replies: list[str],
    episodes: int = 3,
    feedback: str = "actionable",
    make: Any = scripted,  # the fake model's maker (schema_scripted records each call's settings)
    **settings: Any,
):
    model = make(replies)
    config = RunConfig(
        env="keywords",
        strategies=(strategy,),
        out=str(tmp_path / "run"),
        episodes=episodes,
        tasks=1,
        embedder="hash-64",
        feedback=feedback,
        **settings,
    )
    [result] = run(config, model=model, env=KeywordEnv())
    return result, model


def assert_exact_calls(result: TaskResult, model, n: int) -> None:
    assert result.errors == (), result.errors
    assert result.llm_calls == n == len(model.prompts)
    with pytest.raises(StopIteration):
        next(model.messages)  # the script was used up: no call was skipped


def test_single_makes_one_call(tmp_path: Path) -> None:
    result, model = run_one(tmp_path, "single", ["an apple"])
    assert_exact_calls(result, model, 1)
    assert (result.attempts, result.final_passed, result.best_score) == (1, False, 0.5)
    assert result.input_tokens == 10 and result.output_tokens == 3


def test_resample_keeps_the_best_and_stops_when_solved(tmp_path: Path) -> None:
    result, model = run_one(tmp_path, "resample", ["apple", "apple river zebra"])
    assert_exact_calls(result, model, 2)  # the second sample solved it: no third call
    assert result.best_candidate == "apple river zebra" and result.final_passed


def test_correct_shows_no_feedback(tmp_path: Path) -> None:
    result, model = run_one(tmp_path, "correct", ["apple", "apple", "apple river"])
    assert_exact_calls(result, model, 3)
    second = "\n".join(str(m.content) for m in model.prompts[1])
    assert CORRECT_REQUEST in second
    assert "missing words" not in second  # intrinsic correction: no visible signal either
    assert result.best_score == 1.0 and not result.final_passed  # no hidden word


def test_self_refine_inlines_the_whole_history(tmp_path: Path) -> None:
    replies = ["apple", "FB0: add river", "apple river", "FB1: fine", "apple river zebra"]
    result, model = run_one(tmp_path, "self-refine", replies)
    # apple river is solved by the visible score, so no FB1 / y2: 3 calls.
    assert result.errors == () and result.llm_calls == 3
    refine_prompt = [str(m.content) for m in model.prompts[2]]
    assert refine_prompt.index("apple") < refine_prompt.index("FB0: add river")
    assert any("missing words: river" in m for m in refine_prompt)  # visible result inlined


def test_self_refine_stops_when_feedback_says_stop(tmp_path: Path) -> None:
    result, model = run_one(tmp_path, "self-refine", ["apple", "Looks good to me.\nSTOP"])
    assert_exact_calls(result, model, 2)
    assert result.attempts == 1


def test_self_refine_spends_the_whole_budget_when_never_solved(tmp_path: Path) -> None:
    replies = ["a", "fb0", "b", "fb1", "c"]
    result, model = run_one(tmp_path, "self-refine", replies, episodes=3)
    assert_exact_calls(result, model, 5)
    assert result.attempts == 3
    last = [str(m.content) for m in model.prompts[-1]]
    assert [x for x in last if x in {"a", "fb0", "b", "fb1"}] == ["a", "fb0", "b", "fb1"]


@pytest.mark.parametrize("strategy", ["self-refine", "self-refine-sampled"])
def test_self_refine_sampled_samples_each_feedback_and_refinement(
    tmp_path: Path, strategy: str
) -> None:
    """The first answer is greedy in both; `self-refine-sampled` decodes every later call at
    --temperature, each with a seed of its own, where `self-refine` stays greedy."""
    replies = ["a", "fb0", "b", "fb1", "c"]  # 2 feedbacks, 2 refinements
    result, model = run_one(tmp_path, strategy, replies, make=schema_scripted, temperature=0.7)
    assert_exact_calls(result, model, 5)
    temperatures = [b["temperature"] for b in model.bound]
    seeds = [b.get("seed") for b in model.bound[1:]]
    if strategy == "self-refine":
        assert temperatures == [0.0] * 5
    else:
        assert temperatures == [0.0, 0.7, 0.7, 0.7, 0.7]
        assert None not in seeds and len(set(seeds)) == 4
    last = [str(m.content) for m in model.prompts[-1]]  # the history is inlined either way
    assert [x for x in last if x in {"a", "fb0", "b", "fb1"}] == ["a", "fb0", "b", "fb1"]
    steps = RunFolder(tmp_path / "run").steps()
    traced = [s.data.get("sample", 0) for s in steps if s.kind in {"feedback", "refine"}]
    assert (min(traced) > 0) == (strategy == "self-refine-sampled") and len(traced) == 4


def test_self_refine_sampled_samples_its_refinements_when_no_feedback_is_written(
    tmp_path: Path,
) -> None:
    """Under --feedback none the loop is `retry`'s; the sampled form samples each refinement."""
    result, model = run_one(
        tmp_path,
        "self-refine-sampled",
        ["a", "b", "c"],
        feedback="none",
        make=schema_scripted,
        temperature=0.7,
    )
    assert_exact_calls(result, model, 3)
    assert [b["temperature"] for b in model.bound] == [0.0, 0.7, 0.7]
    assert len({b["seed"] for b in model.bound[1:]}) == 2


@pytest.mark.parametrize(
    ("feedback", "shown"),
    [("generic", GENERIC_FEEDBACK), ("none", "score 0.5, not solved")],
)
def test_self_refine_without_feedback_writes_none_and_shows_only_the_result(
    tmp_path: Path, feedback: str, shown: str
) -> None:
    result, model = run_one(tmp_path, "self-refine", ["apple", "apple stone"], 2, feedback)
    assert_exact_calls(result, model, 2)  # no feedback call between the answers
    refine = "\n".join(str(m.content) for m in model.prompts[1])
    assert shown in refine and "missing words" not in refine  # the env's text is not shown
    assert any(m.type == "ai" and m.content == "apple" for m in model.prompts[1])  # inline
    steps = RunFolder(tmp_path / "run").steps()
    scored = [s for s in steps if s.kind == "score"][0]
    assert "missing words" in scored.output and scored.data["shown"] == shown  # trace keeps both
    config = RunFolder(tmp_path / "run").load_config()
    assert config is not None and config["feedback"] == feedback


def test_retry_shows_each_result_and_writes_no_feedback(tmp_path: Path) -> None:
    result, model = run_one(tmp_path, "retry", ["apple", "apple stone", "apple river zebra"])
    assert_exact_calls(result, model, 3)
    last = [str(m.content) for m in model.prompts[2]]
    assert [x for x in last if x in {"apple", "apple stone"}] == ["apple", "apple stone"]
    shown = [x for x in last if x.startswith("Result of checking this answer")]
    assert len(shown) == 2 and all("missing words: river" in x for x in shown)
    assert result.final_passed


def test_reflexion_reflects_on_the_generic_line_only(tmp_path: Path) -> None:
    replies = ["apple", "LESSON", "apple river zebra"]
    result, model = run_one(tmp_path, "reflexion", replies, feedback="generic")
    assert_exact_calls(result, model, 3)
    reflect = "\n".join(str(m.content) for m in model.prompts[1])
    assert GENERIC_FEEDBACK in reflect and "missing words" not in reflect


@pytest.mark.parametrize("strategy", ["reflexion", "reflexion-window"])
def test_reflexion_recalls_the_reflection_next_episode(tmp_path: Path, strategy: str) -> None:
    replies = ["apple", "LESSON: I forgot the river.", "apple river zebra"]
    result, model = run_one(tmp_path, strategy, replies)
    assert_exact_calls(result, model, 3)
    first, second = (
        "\n".join(str(m.content) for m in p) for p in (model.prompts[0], model.prompts[2])
    )
    assert "LESSON" not in first and "LESSON: I forgot the river." in second
    assert result.final_passed and result.best_episode == 2


@pytest.mark.parametrize("strategy", ["reflexion", "reflexion-window"])
def test_reflexion_writes_no_reflection_after_the_last_episode(
    tmp_path: Path, strategy: str
) -> None:
    result, model = run_one(tmp_path, strategy, ["a", "r1", "b", "r2", "c"])
    assert_exact_calls(result, model, 5)
    kinds = [s.kind for s in RunFolder(tmp_path / "run").steps()]
    assert kinds.count("reflect") == 2 and kinds.count("generate") == 3


@pytest.mark.parametrize(
    "strategy",
    ["single", "resample", "correct", "retry", "self-refine", "reflexion", "reflexion-window"],
)
def test_held_out_signal_never_reaches_a_prompt(tmp_path: Path, strategy: str) -> None:
    replies = ["apple", "fb", "apple river", "fb", "apple river stone"] * 2
    model = scripted(replies)
    config = RunConfig(
        env="keywords",
        strategies=(strategy,),
        out=str(tmp_path / "run"),
        episodes=3,
        embedder="hash-64",
    )
    run(config, model=model, env=KeywordEnv())
    steps = RunFolder(tmp_path / "run").steps()
    assert any(SECRET in s.output for s in steps if s.kind == "evaluate")  # it was produced...
    sent = [str(m.content) for prompt in model.prompts for m in prompt]
    assert sent and not any(SECRET in text for text in sent)  # ...and never sent
    assert not any(SECRET in m.content for s in steps for m in s.prompt)


class RecordingPromptModel(PromptModel):
    """PromptModel (a reply made from the prompt, copying any marker it sees), keeping prompts."""

    prompts: list[str] = []  # noqa: RUF012 - pydantic field, copied per instance

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.prompts.append("\n".join(m.text for m in messages))
        return super()._generate(messages, *args, **kwargs)


@pytest.mark.parametrize("strategy", BUILTIN)
def test_held_out_signal_never_reaches_a_prompt_or_a_lesson(tmp_path: Path, strategy: str) -> None:
    """Every strategy, in a stream: the model copies any marker it is shown into its replies,
    so held-out feedback in a prompt would end up in a lesson; none is in a prompt, nor in any
    file of the memory (every kind, every version). The visible MARK in each task's prompt does
    reach the memory: a leak would be seen."""
    model = RecordingPromptModel(prompts=[])
    env = WordsEnv(4, marker=MARK, programs="skills" in strategy)  # skills keep programs only
    config = RunConfig(
        env=env.name,
        strategies=(strategy,),
        out=str(tmp_path / "run"),
        episodes=3,
        embedder="hash-64",
        order="stream",
    )
    run(config, model=model, env=env)
    steps = RunFolder(tmp_path / "run").steps()
    assert any(HELD_OUT in s.output for s in steps if s.kind == "evaluate")  # it was produced...
    assert model.prompts and not any(HELD_OUT in p for p in model.prompts)  # ...and never sent
    assert not any(HELD_OUT in m.content for s in steps for m in s.prompt)
    stores = [tmp_path / "run" / "memory", tmp_path / "run" / "window.jsonl"]
    files = [f for p in stores for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file()]
    # subtle: hnswlib writes its index files (*.bin) from malloc'd memory it never clears, so they
    # carry stray bytes of this process's heap (SQL text, trial records, any string the tests
    # made); what a lesson holds is in the sqlite file and the jsonl, which are read whole.
    files = [f for f in files if f.suffix != ".bin"]
    assert not any(HELD_OUT.encode() in f.read_bytes() for f in files)
    if STRATEGIES[strategy].memory is not None:
        assert any(MARK.encode() in f.read_bytes() for f in files), "the memory kept nothing"


def test_a_failed_greedy_call_is_not_handed_to_the_other_askers() -> None:
    import asyncio

    from reflexion.actor.chat import CallCache
    from reflexion.core.records import Call

    cache, calls = CallCache(), []

    async def make() -> Call:
        calls.append(1)
        await asyncio.sleep(0.01)
        return Call(
            "generate", (), "" if len(calls) == 1 else "ok", error=None if calls[1:] else "429"
        )

    async def both():
        return await asyncio.gather(cache.get_or_call("k", make), cache.get_or_call("k", make))

    (first, _), (second, reused) = asyncio.run(both())
    assert first.error == "429" and second.output == "ok" and not reused and len(calls) == 2


def test_the_cost_of_a_final_stop_feedback_is_on_the_curve(tmp_path: Path) -> None:
    result, _ = run_one(tmp_path, "self-refine", ["apple", "Looks good to me.\nSTOP"])
    assert result.curve[-1].calls == result.llm_calls == 2
    assert result.curve[-1].tokens == result.input_tokens + result.output_tokens


class Prefiller(CountingModel):
    prefills_answers: bool = True


def test_a_reflection_continues_the_conversation_of_its_attempt(tmp_path: Path) -> None:
    """Reflect asks within the conversation that produced the attempt (so a prefix cache holds
    it), without the answer's prefill, and the next attempt is prefilled again."""
    replies = ["an apple", "use the word river", "apple river zebra"]
    model = Prefiller(messages=iter(AIMessage(r) for r in replies), prompts=[])
    env = KeywordEnv()
    env._tasks = [
        dataclasses.replace(t, spec=t.spec | {"answer_prefix": "Sentence: "}) for t in env._tasks
    ]
    config = RunConfig(strategies=("reflexion",), out=str(tmp_path / "r"), episodes=2, tasks=1)
    run(config, model=model, env=env, memory=WindowMemory())
    generate, reflect, again = ([(m.type, str(m.content)) for m in p] for p in model.prompts)
    assert generate[-1] == ("ai", "Sentence: ")  # the prefill
    assert reflect[: len(generate) - 1] == generate[:-1]  # the same conversation, then:
    assert reflect[len(generate) - 1] == ("ai", "an apple") and reflect[-1][0] == "human"
    assert "missing words: river" in reflect[-1][1] and again[-1] == ("ai", "Sentence: ")


def budget_run(tmp_path: Path, replies: list[str], tokens: int) -> tuple[TaskResult, int]:
    model = scripted(replies)
    config = RunConfig(
        env="keywords",
        strategies=("self-refine",),
        out=str(tmp_path / "run"),
        episodes=10,
        tasks=1,
        task_tokens=tokens,
    )
    [result] = run(config, model=model, env=KeywordEnv())
    assert result.errors == ()
    return result, len(model.prompts)


def test_a_token_budget_per_task_stops_the_strategy(tmp_path: Path) -> None:
    # every call costs 13 tokens: the feedback (to 26) and the refine (to 39) start under 30;
    # the next feedback would start past it, so the strategy stops with two answers
    result, calls = budget_run(tmp_path, ["apple", "fb", "apple stone", "never asked"], 30)
    assert calls == 3 and result.attempts == 2
    last = RunFolder(tmp_path / "run").steps()[-1]
    assert last.kind == "budget" and last.output == "39 tokens used of 30"


def test_the_report_counts_only_what_was_done_within_the_token_budget(tmp_path: Path) -> None:
    from reflexion.report.build import write_report

    result, calls = budget_run(tmp_path, ["apple", "fb", "apple river zebra"], 30)
    assert calls == 3 and result.final_passed  # the answer that crossed 30 tokens passed...
    saved = RunFolder(tmp_path / "run").load_config()
    assert saved is not None
    report = write_report(tmp_path / "run", [result], saved, resamples=50)
    [summary] = report.summaries
    # ... but it ended at 39 tokens: within the budget of 30, nothing passed
    assert summary.final_success == 1.0 and summary.at_tokens == 0.0
    assert "final @ 30 tok" in (tmp_path / "run" / "report.md").read_text()


def test_each_kind_of_lesson_is_defined_by_its_design_module() -> None:
    from reflexion.core.lesson_records import Kind
    from reflexion.strategies import LESSONS, cheatsheet, insights

    assert set(LESSONS) == set(Kind)  # a new kind needs a design that says what it is
    assert LESSONS[Kind.RULE] is insights.RULES and LESSONS["cheatsheet"] is cheatsheet.SHEETS
