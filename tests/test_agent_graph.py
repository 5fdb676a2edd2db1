"""A LangGraph agent with Reflexion's memory: a real tool-using graph fails, reflects,
and its next episode starts with the lesson in the model's prompt; and GraphActor runs such a
graph as the Actor of `compare`. The chat models are fakes; the graphs, stores and runs are
real. LangGraph is the `agent` extra, which the test extras (scripts/setup.sh) install."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import CountingModel, KeywordEnv
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from reflexion import GraphActor, ReflexionMemory, RunConfig, Task, run

langgraph = pytest.importorskip("langgraph")  # the `agent` extra; setup.sh installs it

from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import ToolNode, tools_condition  # noqa: E402

USAGE = {"input_tokens": 20, "output_tokens": 5, "total_tokens": 25}
WORDS = re.compile(r"using the words: ([a-z, ]+)\.")
LESSON = "I left out a listed word: use every listed word, and add zebra."


@tool
def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    return f"Tomorrow in {city}: heavy rain."


@tool
def listed_words(task: str) -> str:
    """The words a keyword task asks for, comma-separated."""
    found = WORDS.search(task)
    return found[1] if found else ""


def agent_graph(model: BaseChatModel, tools: list[Any]) -> Any:
    """The usual tool loop: the model, then any tool it asked for, then the model again."""

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


def calls_tool(name: str, args: dict[str, str]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


def test_a_graph_reflects_after_a_failed_episode_and_recalls_at_the_next(tmp_path: Path) -> None:
    task = Task("oslo", "Should I pack an umbrella for Oslo tomorrow? Answer yes or no.")
    replies = [
        calls_tool("forecast", {"city": "Oslo"}),
        AIMessage("No."),  # episode 1: it ignores the forecast
        AIMessage("I ignored the forecast tool: it said heavy rain in Oslo, so answer yes."),
        calls_tool("forecast", {"city": "Oslo"}),
        AIMessage("Yes: heavy rain in Oslo."),
    ]
    model = CountingModel(messages=iter(replies), prompts=[])
    graph = agent_graph(model, [forecast])
    results = []
    with ReflexionMemory(tmp_path / "agent", embedder="hash-64") as memory:
        for _ in range(2):
            notes = "\n".join(h.reflection.text for h in memory.recall(task))
            start = [SystemMessage(f"Lessons from earlier attempts:\n{notes}")]
            state = graph.invoke({"messages": [*start, HumanMessage(task.prompt)]})
            answer = state["messages"][-1].text
            passed = answer.startswith("Yes")
            results.append((passed, memory.outcome(task, passed)))
            if not passed:
                why = model.invoke([*state["messages"], HumanMessage("Why did this fail?")])
                memory.remember(task, why.text, feedback="it rained in Oslo")
    assert results == [(False, None), (True, "helped")]
    tool_runs = [m for p in model.prompts for m in p if m.type == "tool"]
    assert tool_runs and "heavy rain" in tool_runs[0].text  # the episodes used the tool
    first_of_episode_2 = model.prompts[3]
    assert "I ignored the forecast tool" in first_of_episode_2[0].text
    assert "I ignored the forecast tool" not in model.prompts[0][0].text


class KeywordModel(BaseChatModel):
    """A fake chat model whose reply is a function of its prompt: on a keyword task it asks the
    `listed_words` tool, then writes a sentence with the first word only, or with every word
    and zebra when a lesson saying so is in its prompt. Asked why an answer failed, it writes
    that lesson."""

    @property
    def _llm_type(self) -> str:
        return "keyword-fake"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        last, text = messages[-1], "\n".join(m.text for m in messages)
        if "say why the answer failed" in last.text:
            reply = AIMessage(LESSON)
        elif last.type == "tool":
            words = [w.strip() for w in last.text.split(",")]
            lesson = "use every listed word" in text
            said = " and ".join([*words, "a zebra"]) if lesson else words[0]
            reply = AIMessage(f"I saw {said}.")
        else:
            reply = calls_tool("listed_words", {"task": text})
        reply.usage_metadata = USAGE  # type: ignore[assignment]
        return ChatResult(generations=[ChatGeneration(message=reply)])


def test_graph_actor_runs_a_tool_using_graph_in_compare(tmp_path: Path) -> None:
    graph = agent_graph(KeywordModel(), [listed_words])
    config = RunConfig(
        strategies=("single", "reflexion"), episodes=2, out=str(tmp_path / "c"), embedder="hash-64"
    )
    results = run(config, env=KeywordEnv(), actor=GraphActor(graph))
    by = {(r.strategy, r.task_id): r for r in results}
    assert len(results) == 4 and all(r.errors == () for r in results)
    assert not by["single", "k0"].final_passed and by["reflexion", "k0"].final_passed
    assert by["reflexion", "k0"].attempts == 2
    # each role is one graph run: the model was asked twice (tool call, answer), 25 tokens each
    assert by["single", "k0"].input_tokens == 40 and by["single", "k0"].output_tokens == 10
    steps = [json.loads(line) for line in (tmp_path / "c" / "trace.jsonl").read_text().splitlines()]
    second = [
        s
        for s in steps
        if s["strategy"] == "reflexion" and s["kind"] == "generate" and s["episode"] == 2
    ]
    assert second and all(LESSON in json.dumps(s["prompt"]) for s in second)


def test_a_graph_that_raises_fails_its_attempt_and_the_run_goes_on(tmp_path: Path) -> None:
    def broken(state: MessagesState) -> dict[str, list[BaseMessage]]:
        raise RuntimeError("the tool server is down")

    graph = StateGraph(MessagesState)
    graph.add_node("agent", broken)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    config = RunConfig(strategies=("single",), out=str(tmp_path / "b"), tasks=1)
    [result] = run(config, env=KeywordEnv(), actor=GraphActor(graph.compile()))
    assert not result.final_passed
    assert result.errors == ("episode 1 generate: RuntimeError: the tool server is down",)


def test_a_graph_runs_self_refine_sampled_and_the_trace_says_which_calls_were_samples(
    tmp_path: Path,
) -> None:
    replies = [
        AIMessage(r, usage_metadata=USAGE) for r in ("apple", "add river", "apple river zebra")
    ]
    graph = agent_graph(CountingModel(messages=iter(replies), prompts=[]), [])
    config = RunConfig(strategies=("self-refine-sampled",), out=str(tmp_path / "s"), tasks=1)
    [result] = run(config, env=KeywordEnv(), actor=GraphActor(graph))
    assert result.errors == () and result.final_passed and result.attempts == 2
    steps = [json.loads(line) for line in (tmp_path / "s" / "trace.jsonl").read_text().splitlines()]
    sampled = {s["kind"]: s["data"].get("sample") for s in steps if s["kind"] != "score"}
    assert (sampled["feedback"], sampled["refine"]) == (102, 2)
