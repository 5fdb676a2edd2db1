"""`--model openai:NAME` end to end against a local OpenAI-compatible stub (no network)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import KeywordEnv
from openai_stub import StubServer

from envs.registry import register_env
from reflexion.cli import main
from reflexion.core.runfolder import RunFolder


def test_openai_model_runs_reflexion_and_counts_tokens(tmp_path: Path, monkeypatch, capsys) -> None:
    register_env("keywords", lambda arg: KeywordEnv())
    replies = ["an apple", "I left out the river.", "apple river zebra"]
    with StubServer(replies) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        code = main(
            [
                "run",
                "--env",
                "keywords",
                "--strategy",
                "reflexion",
                "--tasks",
                "1",
                "--episodes",
                "3",
                "--model",
                "openai:stub-model",
                "--out",
                str(tmp_path / "r"),
                "--embedder",
                "hash-64",
                "--no-progress",
            ]
        )
    assert code == 0, capsys.readouterr().err
    [result] = RunFolder(tmp_path / "r").results()
    assert result.final_passed and result.errors == ()
    assert (result.llm_calls, result.input_tokens, result.output_tokens) == (3, 60, 15)
    assert [r["model"] for r in stub.requests] == ["stub-model"] * 3
    last_prompt = " ".join(m["content"] for m in stub.requests[2]["messages"])
    assert "I left out the river." in last_prompt  # the reflection came back from memory


def test_openai_without_the_extra_or_key_is_a_one_line_error(monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    register_env("keywords", lambda arg: KeywordEnv())
    code = main(
        [
            "run",
            "--env",
            "keywords",
            "--strategy",
            "single",
            "--model",
            "openai:x",
            "--out",
            "/nonexistent-dir/never-created",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("reflexion: error: cannot create openai model") and "\n" not in err


def test_openai_compatible_endpoint_gets_concurrent_requests(tmp_path: Path, capsys) -> None:
    register_env("keywords", lambda arg: KeywordEnv())
    with StubServer(["no keywords here"] * 20, delay_s=0.4) as stub:
        code = main(
            [
                "run",
                "--env",
                "keywords",
                "--strategy",
                "resample",
                "--episodes",
                "3",
                "--seeds",
                "2",
                "--concurrency",
                "4",
                "--temperature",
                "0.7",
                "--model",
                f"openai-compatible:{stub.url}#served-model",
                "--out",
                str(tmp_path / "r"),
                "--no-progress",
            ]
        )
    assert code == 0, capsys.readouterr().err
    # 2 tasks x 2 seeds = 4 trials of 3 samples. The greedy first sample is one prompt per task,
    # asked once and reused by the other seed: 2 + 4 x 2 sampled = 10 requests, not 12.
    assert len(stub.requests) == 10
    sampled = [r for r in stub.requests if r.get("temperature") == 0.7]
    assert len(sampled) == 8 and len({r["seed"] for r in sampled}) == 4  # per-seed sample seeds
    assert {r["model"] for r in stub.requests} == {"served-model"}
    assert stub.max_in_flight == 4  # --concurrency 4 kept four requests in flight
    results = RunFolder(tmp_path / "r").results()
    assert sum(r.llm_calls for r in results) == 12 and sum(r.reused_calls for r in results) == 2


def test_an_openai_curator_is_asked_for_structured_output_and_an_answer_is_not(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """Every curator reply is held to its JSON schema where the model supports it; an
    OpenAI model by its structured output (`response_format`), never the answer itself."""
    register_env("keywords", lambda arg: KeywordEnv())
    edit = '{"reason": "it missed words", "operations": [{"op": "add", "text": "Name a river."}]}'
    with StubServer(["an apple", edit]) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        args = ["run", "--env", "keywords", "--strategy", "cheatsheet", "--order", "stream"]
        args += ["--tasks", "1", "--episodes", "1", "--model", "openai:stub-model"]
        args += ["--out", str(tmp_path / "r"), "--embedder", "hash-64", "--no-progress"]
        code = main(args)
    assert code == 0, capsys.readouterr().err
    answer, curator = stub.requests
    assert "response_format" not in answer
    form = curator["response_format"]
    assert form["type"] == "json_schema"
    assert "operations" in json.dumps(form["json_schema"]["schema"])
    steps = [json.loads(line) for line in (tmp_path / "r" / "trace.jsonl").read_text().splitlines()]
    assert [s["kind"] for s in steps if s["kind"] in ("unparsed", "revised")] == ["revised"]
