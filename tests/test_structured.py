"""Structured reflections (--reflection structured): the JSON reply parsed tolerantly, stored as
labelled text, the local model held to the schema by its runtime, and the free default unchanged."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from conftest import KeywordEnv, schema_scripted, scripted
from langchain_core.messages import HumanMessage

from memory.chroma.store import ChromaMemory
from reflexion import RunConfig, run
from reflexion.actor.chat import ChatActor
from reflexion.actor.prompts import reflect_messages
from reflexion.actor.structured import FIELDS, SCHEMA, lesson_text, parse, render
from reflexion.core.records import Attempt, Score, Task
from reflexion.models.local import ChatLocalGGUF


@pytest.mark.parametrize(
    ("reply", "diagnosis"),
    [
        ('{"diagnosis": "off by one", "fix": "use <=", "failing_test": "f(3) == 6"}', "off by one"),
        ('```json\n{"diagnosis": "off by one", "fix": "use <="}\n```', "off by one"),
        ("Here it is: {'diagnosis': 'wrong sign', 'fix': 'negate'} Hope it helps.", "wrong sign"),
        ('{"diagnosis": "a {brace} in text", "fix": "x", "extra": 1}', "a {brace} in text"),
        ('{"diagnosis": "spread\\n  over   lines", "fix": ""}', "spread over lines"),
        ('Example: {"x": 1}. Mine: {"diagnosis": "second block", "fix": "y"}', "second block"),
    ],
)
def test_replies_are_parsed_tolerantly(reply: str, diagnosis: str) -> None:
    fields = parse(reply)
    assert fields is not None and fields["diagnosis"] == diagnosis


@pytest.mark.parametrize("reply", ["no object here", '{"a": 1}', "{not json at all}", "[1, 2]", ""])
def test_a_reply_without_a_diagnosis_or_fix_is_kept_as_it_came(reply: str) -> None:
    assert parse(reply) is None and lesson_text(reply) == reply


def test_the_lesson_is_one_labelled_line_per_field() -> None:
    fields = {"diagnosis": "off by one", "fix": "use <=", "failing_test": "f(3) == 6"}
    assert render(fields) == "Diagnosis: off by one\nFix: use <=\nFailing test: f(3) == 6"


def test_a_structured_run_asks_for_json_and_stores_the_rendered_lesson(tmp_path: Path) -> None:
    reflection = {"diagnosis": "river is missing", "fix": "use the word river", "failing_test": ""}
    model = scripted(["apple", json.dumps(reflection), "apple river zebra"])
    config = RunConfig(
        strategies=("reflexion",),
        episodes=2,
        tasks=1,
        reflection="structured",
        out=str(tmp_path / "r"),
        embedder="hash-64",
    )
    [result] = run(config, env=KeywordEnv(), model=model)
    assert result.final_passed and result.attempts == 2
    asked = model.prompts[1][-1].text
    assert "Reply with only a JSON object" in asked and "missing words: river" in asked
    assert "use the word river" in model.prompts[2][-1].text  # recalled, as rendered
    with ChromaMemory.open(tmp_path / "r" / "memory") as memory:
        [lesson] = memory.reflections()
    assert lesson.text == "Diagnosis: river is missing\nFix: use the word river"
    saved = json.loads((tmp_path / "r" / "config.json").read_text())
    assert saved["reflection"] == "structured"


def test_the_free_default_asks_in_prose(tmp_path: Path) -> None:
    model = scripted(["apple", "Use the word river.", "apple river zebra"])
    config = RunConfig(strategies=("reflexion",), episodes=2, tasks=1, out=str(tmp_path / "f"))
    run(config, env=KeywordEnv(), model=model)
    assert "JSON" not in model.prompts[1][-1].text and "few sentences" in model.prompts[1][-1].text


def test_the_schema_goes_to_the_local_runtime_only_when_asked() -> None:
    model = ChatLocalGGUF.named("smollm2-135m")
    asked = [HumanMessage("Why did it fail?")]
    assert model.request(asked, json_schema=SCHEMA)["json_schema"] == SCHEMA
    assert "json_schema" not in model.request(asked)


@pytest.mark.slow
def test_the_local_model_replies_with_exactly_the_schema_s_object() -> None:
    """With the schema, llama.cpp's grammar lets smollm2-135m write nothing but the object."""
    model = ChatLocalGGUF.named("smollm2-135m", max_tokens=200)
    task = Task("t", "Write add(a, b) that returns the sum.")
    failed = Attempt(
        1, "def add(a, b):\n    return a - b", Score(0.0, False, "add(1, 2) == 3 failed")
    )
    messages = reflect_messages(task, failed, structured=True)
    reply = model.bind(json_schema=SCHEMA).invoke(messages)
    assert set(json.loads(reply.text)) == set(FIELDS)
    call = asyncio.run(ChatActor(model, reflection="structured").reflect(task, failed))
    assert call.error is None and call.output.startswith("Diagnosis: "), call.output


def widest(schema: dict) -> object:
    """The largest value `schema` admits: every string at its maxLength (of a character that
    takes an escape in JSON no more than any other), every array at its maxItems, the largest
    branch of an anyOf."""
    if "anyOf" in schema:
        return max((widest(s) for s in schema["anyOf"]), key=lambda v: len(json.dumps(v)))
    if "const" in schema or "enum" in schema:
        return max(schema.get("enum", [schema.get("const")]), key=lambda v: len(json.dumps(v)))
    kind = schema.get("type")
    if kind == "string":
        return "x" * schema["maxLength"]
    if kind == "integer":
        return schema.get("maximum", 10**12)
    if kind == "array":
        return [widest(schema["items"])] * schema["maxItems"]
    return {key: widest(sub) for key, sub in schema["properties"].items()}


def spread(value: object) -> str:
    """`value` as JSON with as much whitespace as llama.cpp's grammar allows at every place."""
    gap = "\n\n" + " " * 20
    if isinstance(value, dict):
        pairs = [f"{json.dumps(k)}{gap}:{gap}{spread(v)}" for k, v in value.items()]
        return "{" + gap + f",{gap}".join(pairs) + "}" + gap
    if isinstance(value, list):
        return "[" + gap + f",{gap}".join(spread(v) for v in value) + "]" + gap
    return json.dumps(value) + gap


@pytest.mark.parametrize("design", ["cheatsheet", "insights", "bank"])
def test_a_curator_s_token_limit_holds_the_longest_reply_its_schema_admits(design: str) -> None:
    """On the SQL stream a cheatsheet reply (3 bullets of up to 800 characters) ran into the
    512-token limit and was cut, unparsed; the limit now follows the schema, on an empty board
    and on one with a lesson (which lets edits in). It walks the schema; the whitespace and the
    characters a token are the estimate's own assumptions, not the runtime's (see `longest`)."""
    import importlib

    from reflexion.actor.structured import CHARS_PER_TOKEN, longest, reply_tokens
    from reflexion.core.lesson_records import Reflection

    module = importlib.import_module(f"reflexion.strategies.{design}")
    text = "[1] a\n[2] b" if design == "cheatsheet" else "a rule"
    lesson = Reflection("s", text, "r", design, "e", "t", 0, 1, 0.0, 0.0, kind=design)
    for board in ([], [lesson]):
        schema = module.schema(board)
        reply = spread(widest(schema))
        assert len(reply) <= (longest(schema) or 0)
        assert reply_tokens(schema, 512) * CHARS_PER_TOKEN >= len(reply)


def test_a_curator_held_to_a_schema_gets_its_room_unless_the_user_set_a_limit() -> None:
    from reflexion.actor.structured import reply_tokens
    from reflexion.core.lesson_records import Kind
    from reflexion.strategies.cheatsheet import schema

    reply = json.dumps({"reason": "r", "operations": [{"op": "add", "text": "Check."}]})
    task, failed = Task("k0", "Use apple."), Attempt(1, "pear", Score(0.0, False, "no apple"))
    limits = []
    for chosen in ({}, {"distill": 300}):
        model = schema_scripted([reply])
        actor = ChatActor(model, max_tokens=chosen)
        asyncio.run(actor.distill(task, Kind.CHEATSHEET, [failed], []))
        limits.append(model.bound[0]["max_tokens"])
    assert limits == [reply_tokens(schema([]), 512), 300]
    assert limits[0] > 1000  # 3 bullets of 800 characters do not fit in 512 tokens
