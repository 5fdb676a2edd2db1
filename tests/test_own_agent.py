"""ReflexionMemory and its retriever, as a user of their own agent meets them: a lesson
remembered is recalled at the next attempt with no episode numbers to manage, its recalls are
credited when the outcome comes, and the store is the one `reflexion memory list/show/why` and
the web page read. Real Chroma stores on disk, with the hash embedder for speed."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import CountingModel, scripted
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from starlette.testclient import TestClient

import reflexion
from reflexion import ReflexionMemory, ReflexionRetriever, RunConfig, Task, UsageError, run
from reflexion.cli import main

HASH = "hash-64"  # the deterministic test embedder: fast, no model to load
TRIP = Task("oslo-trip", "Should I pack an umbrella for Oslo tomorrow? Answer yes or no.")
LESSON = "I answered without the forecast: check the Oslo forecast (rain) before answering."
LINE = re.compile(r"^([0-9a-f]{16})\s")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    got = capsys.readouterr()
    return code, got.out, got.err


def listed(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """`memory list`'s lessons: id -> its line."""
    code, out, err = cli(capsys, "memory", "list", str(path))
    assert code == 0, err
    return {m[1]: line for line in out.splitlines() if (m := LINE.match(line))}


def failed_then_passed(path: Path) -> str:
    """Attempt 1 fails and leaves a lesson; attempt 2 recalls it and passes. The lesson's id."""
    with ReflexionMemory(path, embedder=HASH) as memory:
        assert memory.recall(TRIP) == []
        assert memory.outcome(TRIP, passed=False, feedback="it rained in Oslo") is None
        lesson = memory.remember(TRIP, LESSON, feedback="it rained in Oslo")
        assert [hit.reflection.text for hit in memory.recall(TRIP)] == [LESSON]
        assert memory.outcome(TRIP, passed=True) == "helped"
    return lesson.id


def test_a_lesson_is_recalled_at_the_next_attempt_and_by_a_later_session(tmp_path: Path) -> None:
    path = tmp_path / "agent"
    with ReflexionMemory(path, embedder=HASH) as memory:
        lesson = memory.remember("t1", "Quote the ticket number 4411 in the reply.")
        assert lesson.task_id == "t1" and lesson.run_id == memory.run_id and lesson.episode == 1
        assert [h.reflection.id for h in memory.recall("t1")] == [lesson.id]  # no episode=2 to say
        assert memory.recall("t2") == []  # another task's lesson: only with scope="global"
        assert [h.reflection.id for h in memory.recall("t2", scope="global")] == [lesson.id]
    with ReflexionMemory(path, embedder=HASH) as later:  # a new process, days later
        assert [h.reflection.text for h in later.recall("t1")] == [lesson.text]


def test_two_lessons_on_one_attempt_are_both_kept(tmp_path: Path) -> None:
    with ReflexionMemory(tmp_path / "agent", embedder=HASH) as memory:
        first = memory.remember(TRIP, "Check the Oslo forecast before answering.")
        second = memory.remember(TRIP, "Answer yes or no, as the question asks, about Oslo.")
        assert first.id != second.id
        assert {h.reflection.id for h in memory.recall(TRIP)} == {first.id, second.id}


def test_memory_list_show_and_why_read_what_the_agent_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agent"
    rid = failed_then_passed(path)
    lessons = listed(path, capsys)
    assert list(lessons) == [rid]
    assert re.search(r"my-agent/oslo-trip  my-agent seed 0 ep 1  run \w{12}  score 0", lessons[rid])
    assert "[recalled 1: helped 1, hurt 0, same 0]" in lessons[rid]
    code, shown, err = cli(capsys, "memory", "show", str(path), rid[:6])
    assert code == 0, err
    assert "recalled by my-agent task oslo-trip seed 0 episode 2" in shown
    assert "score 0 -> 1; from this task, this run" in shown
    code, why, err = cli(capsys, "memory", "why", str(path), "oslo-trip", "2")
    assert code == 0, err
    assert f"1. {rid}" in why and "query: Should I pack an umbrella" in why
    assert "then: the attempt scored 1, after 0: rose" in why


def test_a_later_session_numbers_its_attempts_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agent"
    rid = failed_then_passed(path)
    with ReflexionMemory(path, embedder=HASH) as later:
        assert [h.reflection.id for h in later.recall(TRIP)] == [rid]
        assert later.outcome(TRIP, passed=True) is None  # no attempt before in this session
    code, why, err = cli(capsys, "memory", "why", str(path), "oslo-trip", "3")
    assert code == 0, err
    assert f"1. {rid}" in why and "from this task, another run" in why
    assert "[recalled 2: helped 1, hurt 0, same 0]" in listed(path, capsys)[rid]


def test_credit_says_hurt_when_the_attempt_with_the_lesson_scored_lower(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agent"
    with ReflexionMemory(path, embedder=HASH) as memory:
        memory.outcome(TRIP, passed=False, score=0.5)
        rid = memory.remember(TRIP, LESSON).id
        memory.recall(TRIP)
        assert memory.outcome(TRIP, passed=False, score=0.2) == "hurt"
        memory.recall(TRIP)  # an attempt whose outcome never comes: a recall only, at close
    assert "[recalled 2: helped 0, hurt 1, same 0]" in listed(path, capsys)[rid]


def test_a_vague_lesson_is_flagged_as_a_run_flags_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agent"
    with ReflexionMemory(path, embedder=HASH) as memory:
        vague = memory.remember(TRIP, "I will try harder and be more careful next time.")
        specific = memory.remember(TRIP, LESSON)
    assert vague.flag == "names nothing from the task or from what the check found"
    assert specific.flag == ""
    lines = listed(path, capsys)
    assert "[vague: names nothing from the task" in lines[vague.id]
    assert "[vague" not in lines[specific.id]


def test_the_web_page_shows_the_agents_lessons(tmp_path: Path) -> None:
    from reflexion.web.app import make_app
    from reflexion.web.site import Site

    path = tmp_path / "agent"
    rid = failed_then_passed(path)
    web = TestClient(make_app(Site.from_paths([path], token="t0k")), base_url="http://127.0.0.1")
    assert web.get("/").status_code == 200 and web.get("/runs/agent").status_code == 200
    page = web.get("/runs/agent/memory")
    assert page.status_code == 200 and f"/runs/agent/memory/{rid}" in page.text
    lesson = web.get(f"/runs/agent/memory/{rid}")
    assert lesson.status_code == 200 and "check the Oslo forecast" in lesson.text


def test_a_chroma_server_holds_the_lessons_and_the_folder_says_where(
    chroma_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agent"
    with ReflexionMemory(
        path, url=chroma_server, collection="agent-lessons", embedder=HASH
    ) as memory:
        rid = memory.remember(TRIP, LESSON).id
    assert not (path / "memory").exists()  # on the server, not in the folder
    assert list(listed(path, capsys)) == [rid]  # `memory list` finds the server in config.json
    with ReflexionMemory(url=chroma_server, collection="agent-lessons", embedder=HASH) as other:
        assert [h.reflection.id for h in other.recall(TRIP)] == [rid]


def test_a_run_of_compare_lends_its_lessons_to_an_agent(tmp_path: Path) -> None:
    out = tmp_path / "q"
    config = RunConfig(env="quadratic", strategies=("reflexion",), episodes=3, tasks=1)
    [result] = run(replace(config, out=str(out), embedder="hash-64"), report=False)
    trace = (out / "trace.jsonl").read_text()
    with ReflexionMemory(out, env="quadratic") as memory:  # the embedder its config records
        hits = memory.recall(result.task_id)
    assert hits and {h.reflection.strategy for h in hits} == {"reflexion"}
    assert (out / "trace.jsonl").read_text() == trace  # the run's trace is its trials' alone


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: ReflexionMemory(p / "nowhere", create=False), "no memory at"),
        (lambda p: ReflexionMemory(), "needs a folder or a Chroma server"),
        (lambda p: ReflexionMemory(p / "file.txt"), "is not a folder"),
        (lambda p: ReflexionMemory(p / "project"), "holds other files and no memory"),
        (lambda p: ReflexionMemory(p / "agent", collection="other"), "records collection"),
        (lambda p: ReflexionMemory(p / "agent", url="http://127.0.0.1:9"), "records chroma_url"),
    ],
)
def test_a_wrong_place_is_a_one_line_error(tmp_path: Path, make: object, says: str) -> None:
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.md").write_text("mine")
    ReflexionMemory(tmp_path / "agent", embedder=HASH).close()
    with pytest.raises(UsageError, match=says) as caught:
        make(tmp_path)  # type: ignore[operator]
    assert "\n" not in str(caught.value)
    assert (tmp_path / "project").exists() and not (tmp_path / "project" / "memory").exists()


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    with ReflexionMemory(tmp_path / "agent", embedder=HASH) as memory:
        with pytest.raises(UsageError, match="a lesson needs some text"):
            memory.remember(TRIP, "   ")
        with pytest.raises(UsageError, match="k is the number of lessons"):
            memory.recall(TRIP, k=0)
        with pytest.raises(UsageError, match="scope is one of task, global"):
            memory.recall(TRIP, scope="everything")
        with pytest.raises(UsageError, match="a task is a reflexion Task or a non-empty string"):
            memory.recall("")
        assert memory.recall(TRIP) == []  # nothing was stored by the refused calls


def test_a_closed_memory_refuses_calls_and_closes_once(tmp_path: Path) -> None:
    memory = ReflexionMemory(tmp_path / "agent", embedder=HASH)
    memory.close()
    memory.close()  # a second close does nothing
    with pytest.raises(ValueError, match="is closed"):
        memory.remember(TRIP, LESSON)
    with ReflexionMemory(tmp_path / "agent", embedder=HASH) as again:
        assert again.recall(TRIP) == []  # the refused lesson was not stored


def test_the_retriever_feeds_a_chain_and_counts_its_recalls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agent"
    with ReflexionMemory(path, embedder=HASH) as memory:
        rid = memory.remember(TRIP, LESSON, feedback="it rained in Oslo").id
    model: CountingModel = scripted(["Yes, pack an umbrella."])
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Lessons from earlier attempts:\n{lessons}"), ("human", "{question}")]
    )
    with ReflexionMemory(path, embedder=HASH) as memory:
        retriever = ReflexionRetriever(memory=memory, k=2)
        lessons = retriever | (lambda docs: "\n".join(d.page_content for d in docs))
        chain = {"lessons": lessons, "question": RunnablePassthrough()} | prompt | model
        answer = (chain | StrOutputParser()).invoke("Umbrella for Oslo tomorrow?")
        [doc] = retriever.invoke("Umbrella for Oslo tomorrow?")
    assert answer == "Yes, pack an umbrella."
    assert LESSON in model.prompts[0][0].text  # the lesson reached the model's prompt
    assert doc.page_content == LESSON
    assert doc.metadata["id"] == rid and doc.metadata["task_id"] == "oslo-trip"
    assert doc.metadata["source"] == "another task, another run"
    assert "[recalled 1: helped 0, hurt 0, same 0]" in listed(path, capsys)[rid]  # once an episode


def test_the_package_exports_the_agent_api() -> None:
    assert {"ReflexionMemory", "ReflexionRetriever", "GraphActor"} <= set(dir(reflexion))
    assert reflexion.ReflexionMemory is ReflexionMemory


def test_the_config_it_writes_reads_as_a_run_folder(tmp_path: Path) -> None:
    ReflexionMemory(tmp_path / "agent", embedder=HASH).close()
    config = json.loads((tmp_path / "agent" / "config.json").read_text())
    assert config["agent"] == "reflexion.ReflexionMemory" and config["embedder"] == "hash-64"
    assert config["strategies"] == ["my-agent"] and config["collection"] == "reflections"
