"""The memory of the designs that learn across tasks, under replies that do not parse, calls that
fail, and more than one seed: a bad reply (the prompt's blanks copied back) is said in the trace
and changes nothing, and every lesson a trial keeps is stored, once, on its own seed's board."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from commands import said
from conftest import KeywordEnv, scripted
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from prompt_model import PromptModel, WordsEnv
from running import RunConfig, run

from memory import ChromaMemory
from reflexion.core.lesson_records import Kind, Reflection

DISTILL_ASKS = ("Change the rules so that", "Rewrite the whole cheatsheet", "Write at most 3 notes")
LONG_SHEET = "Use every listed word, each spelled as the task spells it. " * 5
KEPT = f"the rewrite keeps 14 of {len(LONG_SHEET.strip())} characters"  # under half: refused


def stream(tmp_path: Path, strategy: str, model: BaseChatModel, env: Any, **more: Any) -> Path:
    config = RunConfig(
        env=env.name,
        strategies=(strategy,),
        out=str(tmp_path / "run"),
        embedder="hash-64",
        order="stream",
        **({"episodes": 2, "curation": "text"} | more),
    )
    run(config, model=model, env=env)
    return tmp_path / "run"


def steps(folder: Path, kind: str) -> list[dict[str, Any]]:
    lines = (folder / "trace.jsonl").read_text().splitlines()
    return [s for s in map(json.loads, lines) if s["kind"] == kind]


def stored(folder: Path) -> list[Reflection]:
    with ChromaMemory.open(folder / "memory") as memory:
        return memory.reflections()


def board(folder: Path, kind: str) -> list[tuple[str, str, int]]:
    return sorted((r.id, r.text, r.votes) for r in stored(folder) if r.kind == kind)


def test_two_items_from_one_reply_are_both_stored(tmp_path: Path) -> None:
    reply = "TITLE: One\nWHEN: always\nDO: first.\nTITLE: Two\nWHEN: always\nDO: second."
    folder = stream(tmp_path, "bank", scripted(["apple river", reply, "cloud", "x"]), KeywordEnv(),
                    episodes=1)  # fmt: skip
    kept = [s["data"]["id"] for s in steps(folder, "remember")]
    assert len(set(kept)) == 2  # two lessons, two ids
    assert sorted(r.text for r in stored(folder)) == [
        "One. When: always. Do: first.",
        "Two. When: always. Do: second.",
    ]


@pytest.mark.parametrize("strategy", ["exemplars", "insights", "cheatsheet", "bank"])
def test_each_seed_keeps_its_own_lessons(tmp_path: Path, strategy: str) -> None:
    # The model's replies depend on the prompt alone, so the two seeds live the same stream,
    # each on its own board: their memories must come out the same, lesson for lesson.
    folder = stream(tmp_path, strategy, PromptModel(), WordsEnv(4), seeds=2)
    by_seed: dict[int, list[tuple[Any, ...]]] = {0: [], 1: []}
    for r in stored(folder):
        by_seed[r.seed].append((r.task_id, r.episode, r.kind, r.text, r.votes))
    assert by_seed[0], "the stream taught nothing"
    assert sorted(by_seed[0]) == sorted(by_seed[1])
    assert len({r.id for r in stored(folder)}) == 2 * len(by_seed[0])


def test_garbage_replies_leave_the_rules_exactly_as_they_were(tmp_path: Path) -> None:
    garbage = "ADD\nEDIT: no number\nEDIT 1:\nUPVOTE\nUPVOTE 0\nDOWNVOTE 5\nADD 2: numbered\n##"
    replies = ["apple", "apple river", "ADD: Use every listed word."]
    replies += ["cloud", "cloud stone", garbage]
    folder = stream(tmp_path, "insights", scripted(replies), KeywordEnv())
    [rule] = [r for r in stored(folder) if r.kind == Kind.RULE]
    assert (rule.text, rule.votes) == ("Use every listed word.", 2)  # as it was added
    [second] = steps(folder, "unparsed")  # k0's reply parsed
    assert second["task_id"] == "k1" and second["output"].splitlines() == garbage.splitlines()
    assert [s["task_id"] for s in steps(folder, "revise")] == ["k0"]  # k1 changed nothing


def test_an_edit_of_a_missing_rule_changes_nothing(tmp_path: Path) -> None:
    replies = ["apple", "apple river", "ADD: Use every listed word."]
    replies += ["cloud", "cloud stone", "EDIT 2: a rule that is not there\nDOWNVOTE 3"]
    folder = stream(tmp_path, "insights", scripted(replies), KeywordEnv())
    assert [(t, v) for _, t, v in board(folder, Kind.RULE)] == [("Use every listed word.", 2)]
    assert "EDIT 2: a rule that is not there" in steps(folder, "unparsed")[-1]["output"]


def sheet_run(tmp_path: Path, second: str) -> Path:
    replies = ["apple river", f"<sheet>{LONG_SHEET}</sheet>", "cloud stone", second]
    return stream(tmp_path, "cheatsheet", scripted(replies), KeywordEnv(), episodes=1)


@pytest.mark.parametrize(
    ("second", "why"),
    [
        ("<sheet>  \n </sheet>", "an empty sheet"),
        ("<sheet></sheet>", "an empty sheet"),
        ("<sheet>Use the words.</sheet>", KEPT),
        ("<sheet>unclosed", "no <sheet>...</sheet> in the reply"),
    ],
)
def test_a_refused_rewrite_keeps_the_sheet(tmp_path: Path, second: str, why: str) -> None:
    folder = sheet_run(tmp_path, second)
    [(_, text, _)] = board(folder, Kind.CHEATSHEET)
    assert text == LONG_SHEET.strip()
    assert [s["output"] for s in steps(folder, "unparsed")] == [why]
    assert [s["task_id"] for s in steps(folder, "revise")] == ["k0"]


def test_items_without_do_are_noted_and_not_stored(tmp_path: Path) -> None:
    reply = "TITLE: No action\nWHEN: always\nTITLE: Too long\nDO: " + "x" * 500
    folder = stream(tmp_path, "bank", scripted(["apple river", reply, "cloud", "y"]), KeywordEnv(),
                    episodes=1)  # fmt: skip
    assert stored(folder) == []
    [first, _] = steps(folder, "unparsed")
    assert first["data"]["malformed"] == 2 and first["output"] == reply


class FailingDistill(PromptModel):
    """PromptModel, except that every distill call raises."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if any(ask in m.text for m in messages for ask in DISTILL_ASKS):
            msg = "the distill model is down"
            raise ValueError(msg)
        return super()._generate(messages, *args, **kwargs)


# insights asks its curator about a failure once its task succeeds: with a model whose reply is
# a function of its prompt, only a reflection makes the retry differ
@pytest.mark.parametrize("strategy", ["reflexion+insights", "cheatsheet", "bank"])
def test_a_distill_call_that_fails_changes_nothing_and_the_run_goes_on(
    tmp_path: Path, strategy: str
) -> None:
    folder = stream(tmp_path, strategy, FailingDistill(), WordsEnv(4))
    results = [json.loads(x) for x in (folder / "results.jsonl").read_text().splitlines()]
    assert len(results) == 4  # every task ran
    assert any("the distill model is down" in e for r in results for e in r["errors"])
    curated = (Kind.RULE, Kind.CHEATSHEET, Kind.ITEM)  # reflections, exemplars: no curator
    assert [r for r in stored(folder) if r.kind in curated] == []
    assert steps(folder, "revise") == []


def test_a_run_on_a_shared_store_rewrites_an_inherited_sheet_into_its_own(tmp_path: Path) -> None:
    shared = str(tmp_path / "shared")
    first = [
        "apple river",
        f"<sheet>{LONG_SHEET}</sheet>",
        "cloud stone",
        f"<sheet>{LONG_SHEET}</sheet>",
    ]
    stream(tmp_path / "a", "cheatsheet", scripted(first), KeywordEnv(), episodes=1, memory=shared)
    second = ["apple river", f"<sheet>{LONG_SHEET}\nAnd check.</sheet>", "cloud", "y"]
    folder = stream(
        tmp_path / "b", "cheatsheet", scripted(second), KeywordEnv(), episodes=1, memory=shared
    )
    with ChromaMemory.open(Path(shared)) as memory:
        sheets = sorted(
            (r.run_id, r.text) for r in memory.reflections() if r.kind == Kind.CHEATSHEET
        )
    runs = [json.loads((tmp_path / x / "run" / "config.json").read_text())["run_id"] for x in "ab"]
    assert sheets == sorted([(runs[0], LONG_SHEET.strip()), (runs[1], LONG_SHEET + "\nAnd check.")])
    assert "belongs to another run" not in " ".join(s["output"] for s in steps(folder, "revised"))


def bank_run(tmp_path: Path, curation: str, replies: list[str]) -> Path:
    config = RunConfig(
        env="keywords",
        strategies=("bank",),
        out=str(tmp_path / curation),
        episodes=1,
        embedder="hash-64",
        order="stream",
        curation=curation,
    )
    run(config, model=scripted(replies), env=KeywordEnv())
    return tmp_path / curation


ECHOES = {  # the prompt's blanks, copied back
    "json": json.dumps(
        {
            "reason": "x",
            "items": [
                {
                    "title": "<a few words>",
                    "when": "<when it applies>",
                    "do": "<what to do, in one or two sentences>",
                },
                {"title": "*", "when": "*", "do": "*"},
            ],
        }
    ),
    "text": "TITLE: <a few words>\nWHEN: <when it applies>\n"
    "DO: <what to do, in one or two sentences>\nTITLE: *\nWHEN: *\nDO: *",
}


VAGUE = {  # a real item, but about nothing the task or its check named
    "json": json.dumps(
        {"reason": "x", "items": [{"title": "Care", "when": "always", "do": "be careful"}]}
    ),
    "text": "TITLE: Care\nWHEN: always\nDO: be careful",
}


@pytest.mark.parametrize("curation", ["json", "text"])
def test_bank_refuses_an_echo_of_its_placeholders_and_flags_a_vague_item(
    curation: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replies = ["apple", ECHOES[curation], "cloud", VAGUE[curation]]
    folder = bank_run(tmp_path, curation, replies)
    with ChromaMemory.open(folder / "memory") as memory:
        [item] = memory.reflections()  # the echoes were not stored
    assert item.text == "Care. When: always. Do: be careful."
    assert item.flag == "names nothing from the task or from what the check found"
    refused = [s for s in steps(folder, "unparsed") if "refused" in s["data"]]
    assert len(refused) == 2 and "<a few words>" in refused[0]["data"]["refused"]
    assert "[vague: " in said(["memory", "list", str(folder), "--kind", "item"], capsys)
