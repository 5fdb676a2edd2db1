"""The SQL env's gold queries and gold rows never reach a prompt or a memory, for every kind of
memory that carries feedback: a stream of questions through insights, cheatsheet, bank and
reflexion (global scope), with a model that copies what follows the question in every prompt
(the attempts and their feedback) into its answers, reflections and curator replies. So
whatever reached a prompt would be in the memory, and the memory is searched whole. (Exemplars
and skills keep only an answer its check passed, the model's own text: this model passes
none.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from running import RunConfig, run

from envs import make_env
from envs.sql.env import SqlEnv
from envs.sql.run import run_direct
from memory import ChromaMemory
from reflexion.core.runfolder import RunFolder

# insights writes rules only from a task that succeeded: never on this stream, where every
# answer is wrong; beside reflexion, its board and prompts are still read
DESIGNS = ("reflexion+insights", "cheatsheet", "bank", "bank-scaled", "reflexion")
FENCE = "`" * 3
TAIL = 600  # the characters of a prompt the model copies


class EchoModel(BaseChatModel):
    """Copies the end of its prompt into every reply; its SQL is always wrong (SELECT 1)."""

    @property
    def _llm_type(self) -> str:
        return "echo"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt = "\n".join(m.text for m in messages)
        # what follows the last question: the question, the attempts and their feedback
        seen = prompt.split("Question: ")[-1][:TAIL].replace(FENCE, "~~~")  # one SQL block
        if "Reply with a JSON object" in messages[-1].text:  # a curator
            item = {"title": "seen", "when": "always", "do": seen[:380]}
            op = {"op": "add", "text": seen[:280]}
            reply = json.dumps({"reason": seen[:280], "items": [item], "operations": [op]})
        else:
            reply = f"{seen}\n```sql\nSELECT 1\n```"
        usage = {"input_tokens": len(prompt) // 4, "output_tokens": 50, "total_tokens": 0}
        message = AIMessage(reply, usage_metadata=usage)  # type: ignore[arg-type]
        return ChatResult(generations=[ChatGeneration(message=message)])


def renderings(env: SqlEnv, task_id: str) -> set[str]:
    """How a task's gold would show if it leaked: its query, and each whole row of its result
    with more than one column, as Python and as SQLite's samples write rows."""
    task = next(t for t in env.tasks() if t.id == task_id)
    gold = env.gold(task)
    found = {gold.gold}
    for row in run_direct(env.path, gold.gold).rows:
        if len(row) > 1:
            found.add(repr(tuple(row)))
            found.add(json.dumps(list(row)))
    return found


@pytest.mark.parametrize("design", DESIGNS)
def test_no_gold_query_or_row_reaches_a_prompt_or_the_memory(tmp_path: Path, design: str) -> None:
    env = make_env("sql:4")
    assert isinstance(env, SqlEnv)
    config = RunConfig(
        env="sql:4",
        strategies=(design,),
        out=str(tmp_path / "run"),
        episodes=2,
        embedder="hash-64",
        order="stream",
        scope="global",
    )
    results = run(config, model=EchoModel(), env=env)
    assert len(results) == 4 and not any(r.final_passed for r in results)
    steps = RunFolder(tmp_path / "run").steps()
    sent = "\n".join(m.content for s in steps for m in s.prompt)
    assert "your query returned" in sent  # the visible feedback did reach the prompts
    with ChromaMemory.open(tmp_path / "run" / "memory") as store:
        kept = "\n".join(r.text for r in store.reflections())
    assert "your query returned" in kept  # and, copied by the model, the memory
    for task in env.tasks():
        for leak in renderings(env, task.id):
            assert leak not in sent and leak not in kept, (task.id, leak)
