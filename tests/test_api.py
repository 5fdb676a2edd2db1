"""The Python API a user runs experiments with: the public names (`dir(reflexion)`, a star
import), `reflexion.run` and `arun` and the results they return, objects in place of names (env,
model, memory, actor, strategies), and what LangChain callbacks see."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from conftest import SECRET, KeywordEnv, scripted
from langchain_core.callbacks import BaseCallbackHandler

import memory
import reflexion
from memory import WindowMemory
from reflexion import RunConfig, Strategy, UsageError, arun, run
from reflexion.cli import main
from reflexion.core.records import Call, Message


def test_run_inside_a_running_event_loop_says_what_to_do_and_writes_nothing(
    tmp_path: Path,
) -> None:
    config = RunConfig(env="quadratic", strategies=("single",), out=str(tmp_path / "run"))

    async def notebook_cell() -> None:
        run(config)

    with pytest.raises(UsageError, match=r"await arun\(\.\.\.\)"):
        asyncio.run(notebook_cell())
    assert not (tmp_path / "run").exists()


def test_arun_runs_inside_an_event_loop(tmp_path: Path) -> None:
    config = RunConfig(env="quadratic", strategies=("single",), out=str(tmp_path / "run"))
    results = asyncio.run(arun(config))
    assert len(results) == 8 and results.folder == tmp_path / "run"


def test_an_env_object_needs_no_env_name_and_out_has_a_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    model = scripted(["apple river zebra"])
    [result] = run(RunConfig(strategies=("single",), tasks=1), env=KeywordEnv(), model=model)
    assert result.final_passed and result.env == "keywords"
    [folder] = (tmp_path / "runs").iterdir()
    assert folder.name.startswith("keywords-")
    saved = json.loads((folder / "config.json").read_text())
    assert saved["env"] == "keywords" and saved["model"].startswith("object:CountingModel")


def test_a_memory_object_is_used_by_reflexion(tmp_path: Path) -> None:
    memory = WindowMemory()
    model = scripted(["apple", "use the word river", "apple river zebra"])
    config = RunConfig(strategies=("reflexion",), out=str(tmp_path / "r"), episodes=2, tasks=1)
    [result] = run(config, env=KeywordEnv(), model=model, memory=memory)
    assert result.final_passed and result.attempts == 2
    assert [r.text for r in memory.reflections()] == ["use the word river"]
    assert not (tmp_path / "r" / "memory").exists()  # no Chroma store was made
    saved = json.loads((tmp_path / "r" / "config.json").read_text())
    assert saved["memory_backend"] == "object:WindowMemory"


def test_a_strategy_object_runs_by_its_name(tmp_path: Path) -> None:
    async def twice(trial: Any) -> None:  # two samples (a second greedy one would be reused)
        for episode in (1, 2):
            sample = trial.actor.generate(trial.task, (), sample=episode - 1)
            call = await trial.ask(sample, episode)
            await trial.attempt(call, episode)

    mine = Strategy("twice", twice)
    model = scripted(["apple", "apple river zebra"])
    config = RunConfig(strategies=("twice",), out=str(tmp_path / "s"), tasks=1)
    [result] = run(config, env=KeywordEnv(), model=model, strategies=[mine])
    assert (result.strategy, result.attempts, result.final_passed) == ("twice", 2, True)
    assert "twice" not in reflexion.STRATEGIES  # passed in, not registered


class Parrot:
    """An actor with no model: repeats the task's first word."""

    async def generate(self, task: Any, lessons: Any, sample: int) -> Call:
        return Call("generate", (Message("human", task.prompt),), "apple river zebra", llm=False)

    async def feedback(self, task: Any, history: Any) -> Call:
        raise NotImplementedError

    refine = correct = feedback

    async def reflect(self, task: Any, attempt: Any) -> Call:
        raise NotImplementedError


def test_an_actor_object_replaces_the_model(tmp_path: Path) -> None:
    config = RunConfig(strategies=("single",), out=str(tmp_path / "a"), tasks=1)
    [result] = run(config, env=KeywordEnv(), actor=Parrot())
    assert result.final_passed and result.llm_calls == 0
    saved = json.loads((tmp_path / "a" / "config.json").read_text())
    assert saved["model"] == "actor:Parrot"


class OldStyleRefiner:
    """An actor written before feedback and refine took a sample number."""

    async def generate(self, task: Any, lessons: Any, sample: int) -> Call:
        return Call("generate", (Message("human", task.prompt),), "apple", llm=False)

    async def feedback(self, task: Any, history: Any) -> Call:
        return Call("feedback", (Message("human", "?"),), "add river and zebra", llm=False)

    async def refine(self, task: Any, history: Any) -> Call:
        return Call("refine", (Message("human", "?"),), "apple river zebra", llm=False)

    correct = refine

    async def reflect(self, task: Any, attempt: Any) -> Call:
        raise NotImplementedError


def test_an_actor_without_sample_numbers_still_runs_self_refine(tmp_path: Path) -> None:
    config = RunConfig(strategies=("self-refine",), out=str(tmp_path / "o"), tasks=1)
    [result] = run(config, env=KeywordEnv(), actor=OldStyleRefiner())
    assert result.errors == () and result.final_passed and result.attempts == 2


def test_a_resume_with_another_memory_object_is_refused(tmp_path: Path) -> None:
    config = RunConfig(env="quadratic", strategies=("reflexion",), out=str(tmp_path / "q"))
    run(config, memory=WindowMemory())
    with pytest.raises(UsageError, match="memory_backend"):
        run(config)  # now with the default chroma backend


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.seen: list[tuple[list[str], dict[str, Any]]] = []

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: UUID, **kwargs: Any
    ) -> None:
        self.seen.append((kwargs.get("tags") or [], kwargs.get("metadata") or {}))


def test_model_calls_carry_tags_and_metadata_for_langsmith(tmp_path: Path) -> None:
    recorder = Recorder()
    model = scripted(["apple", "add river", "apple river zebra"])
    model.callbacks = [recorder]
    config = RunConfig(strategies=("reflexion",), out=str(tmp_path / "t"), episodes=2, tasks=1)
    run(config, env=KeywordEnv(), model=model, memory=WindowMemory())
    roles = [meta["role"] for _, meta in recorder.seen]
    assert roles == ["generate", "reflect", "generate"]
    tags, meta = recorder.seen[1]
    assert {"reflexion", "role:reflect", "strategy:reflexion", "task_id:k0", "episode:1"} <= set(
        tags
    )
    assert meta | {"seed": 0, "env": "keywords"} == meta
    assert SECRET not in json.dumps(recorder.seen)  # held-out feedback is not in the metadata


def test_an_actor_class_is_a_factory_of_actors(tmp_path: Path) -> None:
    from envs.quadratic import QuadraticActor

    config = RunConfig(env="quadratic", strategies=("single",), out=str(tmp_path / "c"))
    results = run(config, actor=QuadraticActor)  # QuadraticActor(seed) makes one per seed
    assert len(results) == 8 and all(r.errors == () for r in results)


def test_a_memory_object_that_no_strategy_would_use_is_refused(tmp_path: Path) -> None:
    config = RunConfig(env="quadratic", strategies=("single", "reflexion-window"))
    with pytest.raises(UsageError, match="none of single, reflexion-window does"):
        run(dataclasses.replace(config, out=str(tmp_path / "m")), memory=WindowMemory())
    assert not (tmp_path / "m").exists()


def test_dir_shows_the_public_api_and_no_helpers() -> None:
    shown = dir(reflexion)
    assert {"run", "arun", "RunConfig", "make_env", "load_model", "__version__"} <= set(shown)
    assert not {"Any", "importlib", "annotations", "TYPE_CHECKING", "VERSION"} & set(shown)
    assert not [name for name in shown if name.startswith("_") and name != "__version__"]


def test_star_import_gives_the_api_and_nothing_private() -> None:
    code = "from reflexion import *; print(sorted(k for k in dir() if not k.startswith('__')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names = set(ast.literal_eval(out.stdout))
    assert names == set(reflexion.__all__)


def test_run_returns_the_comparison_and_writes_what_compare_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "py"
    config = RunConfig(env="quadratic", strategies=("single", "retry"), tasks=3, out=str(out))
    results = run(config)
    assert isinstance(results, list) and len(results) == 6  # as before: a list of TaskResult
    assert [r.strategy for r in results[:1]] == ["single"] and all(r.task_id for r in results)
    assert [p.name for p in results.files] == [
        "comparison.json",
        "success_by_episode.png",
        "success_by_tokens.png",
        "report.md",
        "report.html",
    ]
    assert all(p.is_file() and p.parent == out for p in results.files)
    saved = json.loads((out / "comparison.json").read_text())
    assert [s["strategy"] for s in saved["strategies"]] == ["single", "retry"]
    [pair] = results.pairs
    assert (pair.a, pair.b, pair.tasks) == ("single", "retry", 3)
    # the table is the one `reflexion report` prints for the same folder
    assert main(["report", str(out)]) == 0
    printed = capsys.readouterr().out
    assert results.table.splitlines()[0].startswith("strategy")
    headline, rest = printed.split("\n", 1)  # the headline first, then the same table
    assert headline.startswith("no strategy differed") and rest.startswith(results.table + "\n")


def test_records_are_flat_dicts_one_per_trial(tmp_path: Path) -> None:
    config = RunConfig(env="quadratic", strategies=("retry",), tasks=2, out=str(tmp_path / "r"))
    results = run(config, report=False)
    assert results.files == [] and not (tmp_path / "r" / "comparison.json").exists()
    assert results.table.splitlines()[1].split()[:2] == ["retry", "2"]  # no files, same table
    rows = results.records()
    assert len(rows) == 2 and {r["task_id"] for r in rows} == {"q0", "q1"}
    assert all(isinstance(v, str | int | float | bool) for row in rows for v in row.values())
    first = results[0]
    assert rows[0]["final_passed"] == first.final_passed and rows[0]["errors"] == ""
    assert rows[0]["tokens"] == first.input_tokens + first.output_tokens
    assert json.loads(json.dumps(rows)) == rows


def test_arun_returns_the_same_kind_of_results(tmp_path: Path) -> None:
    config = RunConfig(env="quadratic", strategies=("single",), tasks=1, out=str(tmp_path / "a"))
    results = asyncio.run(reflexion.arun(config, report=False))
    assert len(results) == 1 and results.table.startswith("strategy")
    assert results.resume is not None and results.resume.message() is None  # a new run


def test_the_public_names_leave_out_what_only_the_package_calls() -> None:
    assert "generate_messages" not in dir(reflexion)  # a ChatActor's prompt gives it
    with pytest.raises(AttributeError):
        _ = reflexion.generate_messages
    internal = {"get_backend", "known_embedder"}  # the runner's checks of a name
    assert not internal & set(memory.__all__) and not internal & set(dir(memory))


def test_a_chat_actors_prompt_is_what_generate_sends() -> None:
    model = scripted(["5"])
    actor = reflexion.ChatActor(model)
    task = reflexion.Task("t", "Add 2 and 3.")
    lesson = reflexion.Reflection(
        "r1", "Check the sign.", "run", "reflexion", "drill", "t", 0, 1, -1.0, 0.0
    )
    asyncio.run(actor.generate(task, [reflexion.Recalled(lesson)], sample=0))
    assert model.prompts == [actor.prompt(task, [lesson])]
    assert "Check the sign." in str(model.prompts[0][-1].content)
