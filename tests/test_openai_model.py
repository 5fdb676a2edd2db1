"""`--model openai:NAME` end to end against a local OpenAI-compatible stub (no network)."""

from __future__ import annotations

from pathlib import Path

from conftest import KeywordEnv
from openai_stub import StubServer

from envs.registry import register_env
from reflexion.cli import main
from reflexion.runfolder import RunFolder


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
