"""Replies held to a JSON schema: structured reflections, and the curators' memory writes.

Structured reflections (`--reflection structured`): the reflect prompt asks for a short JSON
object (diagnosis, fix, failing_test). A local model is held to it by the runtime's JSON-schema
support (llama.cpp turns the schema into a grammar); any other model's reply is parsed
tolerantly (code fences, text around the object, single quotes). The stored lesson is the
rendered text, so recall, memory and the web page read it like any other lesson; a reply that
holds no such object is kept as it came.

A curator's reply (`--curation json`, the default: insights, cheatsheet, bank) is held to its
design's schema the same way (`schema_params`: a grammar for the local model, structured output
for an OpenAI model), and read strictly by the design (reflexion.strategies.learning's
`json_object`: the first JSON object in it, or None). Such a reply gets room for the longest
one its schema admits (`reply_tokens`), so that a reply running to its strings' maxLength is not
cut before its JSON closes. The room is an estimate, not a bound: it allows 2.5 characters a
token and a newline and 20 spaces at each place JSON allows whitespace, where the runtime
(llguidance, in this build of llama.cpp) allows any whitespace, and an escape (`\\n`, `\\u...`)
counts as one character of a maxLength; the context window still ends a reply that reaches it.

    >>> render(parse('```json {"diagnosis": "off by one", "fix": "use <="} ```'))
    'Diagnosis: off by one\\nFix: use <='
"""

from __future__ import annotations

import ast
import contextlib
import json
import math
import re
from typing import Any

from langchain_core.language_models import BaseChatModel

from reflexion.core.protocols import JsonSchemaModel

FIELDS = ("diagnosis", "fix", "failing_test")
LABELS = {"diagnosis": "Diagnosis", "fix": "Fix", "failing_test": "Failing test"}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {name: {"type": "string", "maxLength": 400} for name in FIELDS},
    "required": list(FIELDS),
    "additionalProperties": False,
}
REQUEST = (
    "Result of checking your answer: {result}\n\n"
    'Reply with only a JSON object of three short strings: "diagnosis" (why the answer '
    'failed), "fix" (a concrete plan for the next attempt, not the full answer) and '
    '"failing_test" (the check that failed, as given above, or "" if none was named).'
)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse(text: str) -> dict[str, str] | None:
    """The three fields from a reply, or None when it holds no object with a diagnosis or fix:
    the first JSON object in it that has one, else a Python-style dict with 'quotes'."""
    decoder = json.JSONDecoder()
    candidates: list[Any] = []
    for start in (i for i, c in enumerate(text) if c == "{"):
        try:
            candidates.append(decoder.raw_decode(text, start)[0])
        except ValueError:
            continue
    found = _OBJECT.search(text)
    if found is not None:
        with contextlib.suppress(ValueError, SyntaxError, MemoryError, RecursionError):
            candidates.append(ast.literal_eval(found.group(0)))
    for data in candidates:
        if isinstance(data, dict):
            fields = {name: " ".join(str(data.get(name) or "").split()) for name in FIELDS}
            if fields["diagnosis"] or fields["fix"]:
                return fields
    return None


def render(fields: dict[str, str] | None) -> str:
    """The lesson's text: one labelled line per non-empty field."""
    if not fields:
        return ""
    return "\n".join(f"{LABELS[k]}: {fields[k]}" for k in FIELDS if fields.get(k))


def lesson_text(reply: str) -> str:
    """What is stored for a structured reply: the rendered fields, or the reply as it came."""
    return render(parse(reply)) or reply


def schema_params(model: BaseChatModel, schema: dict[str, Any]) -> dict[str, Any]:
    """What to bind to `model` so its runtime holds the reply to `schema`: llama.cpp's
    `json_schema` (a grammar) for the local model, OpenAI's structured output for an OpenAI
    chat model, nothing for any other (its reply is read strictly, and a failure recorded)."""
    if isinstance(model, JsonSchemaModel):
        return {"json_schema": schema}
    if type(model).__module__.startswith("langchain_openai"):
        spec = {"name": "memory_edit", "schema": schema, "strict": False}
        return {"response_format": {"type": "json_schema", "json_schema": spec}}
    return {}


# whitespace allowed for at each place JSON allows it (after a bracket, a key, a colon, a comma
# or a value): llama.cpp's own grammar allows two newlines and 20 spaces or tabs (its SPACE_RULE)
SPACE = 22
# fewer characters a token than any curator reply was seen to hold (3.1 to 4.7 on the SQL stream)
CHARS_PER_TOKEN = 2.5


def longest(schema: dict[str, Any]) -> int | None:
    """The most characters of JSON a reply held to `schema` can take, with its keys and SPACE
    at each place whitespace may go (None: no bound, such as a string with no maxLength or an
    object open to other keys).

    >>> longest({"type": "string", "maxLength": 10}), longest({"type": "string"})
    (34, None)
    """
    if "anyOf" in schema:
        branches = [longest(s) for s in schema["anyOf"]]
        return None if None in branches else max(b or 0 for b in branches)
    if "const" in schema or "enum" in schema:
        values = schema.get("enum", [schema.get("const")])
        return max(len(json.dumps(v)) for v in values) + SPACE
    kind = schema.get("type")
    if kind == "string":
        most = schema.get("maxLength")
        return None if most is None else most + 2 + SPACE
    if kind == "integer":
        return len(str(schema.get("maximum", 10**12))) + SPACE
    if kind == "array":
        item, most = longest(schema.get("items", {})), schema.get("maxItems")
        return None if item is None or most is None else 2 + 2 * SPACE + most * (item + 1 + SPACE)
    if kind == "object" and schema.get("additionalProperties") is False:
        fields = {key: longest(sub) for key, sub in schema.get("properties", {}).items()}
        if None in fields.values():
            return None
        pairs = sum(len(key) + 4 + 3 * SPACE + (size or 0) for key, size in fields.items())
        return 2 + 2 * SPACE + pairs
    return None


def reply_tokens(schema: dict[str, Any], floor: int) -> int:
    """Tokens for a reply held to `schema`: enough for the longest one it admits, and at least
    `floor` (the role's limit); `floor` where the schema sets no bound.

    >>> reply_tokens({"type": "string", "maxLength": 3000}, 512), reply_tokens({}, 512)
    (1210, 512)
    """
    chars = longest(schema)
    return floor if chars is None else max(floor, math.ceil(chars / CHARS_PER_TOKEN))
