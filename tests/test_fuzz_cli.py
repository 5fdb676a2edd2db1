"""Fuzz the command line: whatever the arguments, the answer is a result or one line and exit 2,
never a traceback."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reflexion.cli import main

FLAGS = [
    "--env",
    "--strategy",
    "--strategies",
    "--episodes",
    "--tasks",
    "--seeds",
    "--model",
    "--k",
    "--scope",
    "--temperature",
    "--seed",
    "--max-tokens",
    "--retries",
    "--call-timeout",
    "--max-tokens-total",
    "--timeout",
    "--concurrency",
    "--embedder",
]
VALUES = st.one_of(
    st.sampled_from(
        [
            "quadratic:2",
            "quadratic",
            "nope",
            "single",
            "self-refine,reflexion",
            "0",
            "-1",
            "1",
            "2",
            "1e9",
            "nan",
            "x",
            "",
            "global",
            "task",
            "hash-64",
            "generate=5",
            "reflect=-3",
            "openai-compatible:",
            "python:os:getcwd",
        ]
    ),
    st.text(max_size=12),
)
ARGV = st.tuples(
    st.sampled_from(
        [["run"], ["compare"], ["memory", "list"], ["report"], ["models", "list"], ["bogus"], []]
    ),
    st.lists(st.tuples(st.sampled_from(FLAGS), VALUES), max_size=5),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(argv=ARGV)
def test_any_command_line_is_a_result_or_one_clear_line(tmp_path: Path, capsys, argv) -> None:
    command, pairs = argv
    args = [*command, *(x for pair in pairs for x in pair)]
    if command in (["run"], ["compare"]):
        args += [
            "--tasks",
            "1",
            "--episodes",
            "1",
            "--embedder",
            "hash-64",
            "--no-progress",
            "--out",
            str(tmp_path / "out"),
        ]
    try:
        code = main(args)
    except SystemExit as stop:
        code = stop.code
    err = capsys.readouterr().err
    assert code in (0, 2), (args, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, (args, err)
