"""Memory over one database, in the answer's prompt and in the curator's.

Exemplars show each earlier question with the query its check ran, not the shared schema again
nor the reasoning before the query, and are found by the question. Before the fix, a shot was
the whole prompt: the schema, cut off by --memory-tokens before its question and answer, so the
model saw none. Every memory block goes after the schema, and a curator's request opens as the
answer's prompt did, so that the model's cache keeps the schema from call to call."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from prompt_model import PromptModel, WordsEnv
from running import RunConfig, run

from envs import make_env
from envs.sql.env import SqlEnv
from reflexion.actor.prompts import SHARED_CONTEXT_ENDS
from reflexion.core.runfolder import RunFolder
from reflexion.strategies import bank

SCHEMA_MARK = "CREATE TABLE stores"
REASONING = "First I find the tables the question needs."


def stream_config(tmp_path: Path, env: str, strategy: str) -> RunConfig:
    """One attempt per task, in stream order, into tmp_path/run."""
    out = str(tmp_path / "run")
    return RunConfig(
        env=env, strategies=(strategy,), out=out, episodes=1, embedder="hash-64", order="stream"
    )


def oracle(env: SqlEnv) -> PromptModel:
    """Answers every question with a line of reasoning, then its gold query (a test-only oracle,
    read from the env)."""

    def answer(prompt: str) -> str:
        asked = prompt.split("Question: ")[-1].strip()
        task = next(t for t in env.tasks() if t.question == asked)
        return f"{REASONING}\n```sql\n{env.gold(task).gold}\n```"

    return PromptModel(answer=answer)


def test_a_shot_shows_the_question_and_its_query_and_the_schema_once(tmp_path: Path) -> None:
    env = make_env("sql:4")
    assert isinstance(env, SqlEnv)
    config = stream_config(tmp_path, "sql:4", "exemplars")
    results = run(config, model=oracle(env), env=env)
    assert all(r.final_passed for r in results)
    steps = RunFolder(tmp_path / "run").steps()
    order = [s.task_id for s in steps if s.kind == "generate"]
    last = next(t for t in env.tasks() if t.id == order[-1])
    prompt = next(s for s in steps if s.kind == "generate" and s.task_id == last.id)
    text = "\n".join(m.content for m in prompt.prompt)
    assert text.count(SCHEMA_MARK) == 1  # the task's own schema, and no shot repeats it
    assert REASONING not in text  # a shot keeps the query the check ran, as StreamBench's do
    asked = prompt.prompt[-1].content  # the schema first, a prefix the model's cache reuses;
    assert asked.startswith(last.prompt[:200])  # then the shots, then the question
    assert asked.index(SCHEMA_MARK) < asked.index("Example 1:") < asked.index(last.question)
    for earlier in (t for t in env.tasks() if t.id in order[:-1]):
        assert earlier.question in text  # every earlier question, with its query
        assert env.gold(earlier).gold in text
    recall = next(s for s in steps if s.kind == "recall" and s.task_id == last.id)
    assert [m.content for m in recall.prompt] == [last.question]  # found by the question


def test_a_curator_over_one_database_opens_as_the_answer_did(tmp_path: Path) -> None:
    """bank's distill request over a database opens with the answer's own system message and
    schema (a prefix the model's cache keeps between the two calls), says the context has ended,
    shows the schema once, and asks about the task by its question."""
    env = make_env("sql:3")
    assert isinstance(env, SqlEnv)
    answer = oracle(env).answer
    assert answer is not None

    def reply(prompt: str) -> str:
        if "Write at most 3 notes" in prompt:
            items = [{"title": "Cents", "when": "money", "do": "Divide cents by 100."}]
            return json.dumps({"reason": "it ran", "items": items})
        return answer(prompt)

    config = stream_config(tmp_path, "sql:3", "bank")
    run(config, model=PromptModel(answer=reply), env=env)
    steps = RunFolder(tmp_path / "run").steps()
    distills = [s for s in steps if s.kind == "distill"]
    assert len(distills) == 3
    for distill in distills:
        task = next(t for t in env.tasks() if t.id == distill.task_id)
        answered = next(s for s in steps if s.kind == "generate" and s.task_id == task.id)
        context = task.prompt[: task.prompt.rindex(task.question)]
        context = context[: context.rstrip().rindex("\n\n") + 2]
        assert distill.prompt[0].content == answered.prompt[0].content  # the same system message
        asked = distill.prompt[1].content
        assert asked.startswith(context) and answered.prompt[1].content.startswith(context)
        assert asked.count(SCHEMA_MARK) == 1
        assert asked[len(context) :].startswith(SHARED_CONTEXT_ENDS)  # then the curator's words
        assert task.question in asked[len(context) :]


def test_a_task_without_a_context_is_asked_by_the_curator_as_before(tmp_path: Path) -> None:
    """No shared context: the curator's own system message, and the task's whole prompt."""
    config = stream_config(tmp_path, "words", "bank")
    env = WordsEnv(4)
    run(config, model=PromptModel(), env=env)
    distills = [s for s in RunFolder(tmp_path / "run").steps() if s.kind == "distill"]
    assert len(distills) == 4
    for distill in distills:
        task = next(t for t in env.tasks() if t.id == distill.task_id)
        assert distill.prompt[0].content == bank.SYSTEM
        assert distill.prompt[1].content.startswith(f"Task:\n{task.prompt}\n\n")
        assert SHARED_CONTEXT_ENDS not in distill.prompt[1].content


@pytest.mark.parametrize(
    ("strategy", "said", "questions", "calls"),
    [("insights", "Rule", 9, 10), ("cheatsheet", "Tip", 4, 8)],
)
def test_a_board_goes_after_the_schema_and_the_system_message_never_changes(
    tmp_path: Path, strategy: str, said: str, questions: int, calls: int
) -> None:
    """Rules and a sheet change from task to task; over one database they sit after the schema,
    just before the question, so every prompt (answers and curator requests alike) opens with
    the same system message and schema, which the model's cache keeps. (`insights` writes its
    first rule from its first 8 successes, the cheatsheet after every task.)"""
    env = make_env(f"sql:{questions}")
    assert isinstance(env, SqlEnv)
    answer = oracle(env).answer
    assert answer is not None

    def reply(prompt: str) -> str:
        if "Reply with a JSON object" in prompt:
            number = len(re.findall(r"Tip \d|Rule \d", prompt))
            ops = [{"op": "add", "text": f"{said} {number}: money is in cents."}]
            return json.dumps({"reason": "it ran", "operations": ops})
        return answer(prompt)

    config = stream_config(tmp_path, f"sql:{questions}", strategy)
    run(config, model=PromptModel(answer=reply), env=env)
    steps = [s for s in RunFolder(tmp_path / "run").steps() if s.kind in ("generate", "distill")]
    assert len(steps) == calls
    assert len({s.prompt[0].content for s in steps}) == 1  # one system message throughout
    generates = [s for s in steps if s.kind == "generate"]
    last = next(t for t in env.tasks() if t.id == generates[-1].task_id)
    asked = generates[-1].prompt[1].content
    assert asked.startswith(last.prompt[:200])
    assert asked.index(SCHEMA_MARK) < asked.index(f"{said} 0") < asked.index(last.question)
    schema = last.prompt[: last.prompt.index(SCHEMA_MARK) + 500]
    assert all(s.prompt[1].content.startswith(schema) for s in steps)
