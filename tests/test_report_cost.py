"""The cost of a run as a user reads it, through `reflexion compare` and `reflexion report`: tokens
per trial beside tokens per solved task, the cost in money at --price IN,OUT (or the price
table's for an API model; none for a local model, which says so), and one CSV row per trial."""

from __future__ import annotations

import csv
import dataclasses
import json
import re
from pathlib import Path

import pytest

from reflexion.cli import main
from reflexion.core.records import TaskResult
from reflexion.core.runfolder import RunFolder
from reflexion.models.prices import PRICES
from reflexion.report.summary import dollars

STRATEGIES = ("single", "reflexion")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four keyword tasks, answered by prompt_model's model (no task solved), priced at
    $2.5 and $10 per million input and output tokens."""
    out = tmp_path_factory.mktemp("cost") / "run"
    argv = ["compare", "--env", "python:prompt_model:WordsEnv", "--tasks", "4"]
    argv += ["--model", "python:prompt_model:PromptModel", "--strategies", ",".join(STRATEGIES)]
    argv += ["--episodes", "2", "--embedder", "hash-64", "--out", str(out), "--no-progress"]
    assert main([*argv, "--price", "2.5,10"]) == 0
    return out


def by_strategy(folder: Path) -> dict[str, list[TaskResult]]:
    results = RunFolder(folder).results()
    return {s: [r for r in results if r.strategy == s] for s in STRATEGIES}


def money(results: list[TaskResult], price_in: float, price_out: float) -> float:
    tokens_in = sum(r.input_tokens for r in results)
    tokens_out = sum(r.output_tokens for r in results)
    return tokens_in * price_in / 1e6 + tokens_out * price_out / 1e6


def printed_row(out: str, strategy: str) -> list[str]:
    """The cells of the strategy's row of the printed table (split on 2+ spaces)."""
    line = next(x for x in out.splitlines() if x.startswith(strategy + " "))
    return re.split(r"\s{2,}", line.strip())


def report(folder: Path, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    assert main(["report", str(folder), *options]) == 0
    return capsys.readouterr().out


def test_the_table_shows_tokens_per_trial_and_the_cost_at_the_price(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = report(run_dir, capsys)
    header = re.split(r"\s{2,}", out.splitlines()[1].strip())  # under the headline
    assert header[6:8] == ["tok/trial", "tok/solved"] and header[10] == "cost"
    comparison = json.loads((run_dir / "comparison.json").read_text())
    assert comparison["price"] == {"input": 2.5, "output": 10.0, "source": "--price 2.5,10"}
    for summary, (name, results) in zip(
        comparison["strategies"], by_strategy(run_dir).items(), strict=True
    ):
        tokens = sum(r.input_tokens + r.output_tokens for r in results)
        assert not any(r.final_passed for r in results)  # nothing solved: tokens/solved is n/a
        row = printed_row(out, name)
        assert row[6] == f"{tokens / len(results):,.0f}" and row[7] == "n/a"
        assert summary["cost_usd"] == pytest.approx(money(results, 2.5, 10))
        assert row[10] == dollars(money(results, 2.5, 10))
    md = (run_dir / "report.md").read_text()
    assert "| tokens/trial | tokens/solved |" in md and "cost (USD) |" in md
    assert "Cost is input tokens x $2.5 + output tokens x $10 per million" in md


def test_report_prices_a_finished_run_and_leaves_its_config_alone(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = (run_dir / "config.json").read_bytes()
    out = report(run_dir, capsys, "--price", "1,4")
    comparison = json.loads((run_dir / "comparison.json").read_text())
    for summary, (name, results) in zip(
        comparison["strategies"], by_strategy(run_dir).items(), strict=True
    ):
        assert summary["cost_usd"] == pytest.approx(money(results, 1, 4))
        assert printed_row(out, name)[10] == dollars(money(results, 1, 4))
    assert comparison["config"]["price"] == "1,4"
    assert (run_dir / "config.json").read_bytes() == config  # the run's own price stays
    out = report(run_dir, capsys, "--price", "gpt-4o-mini")  # a model of the price table
    results = by_strategy(run_dir)["single"]
    assert printed_row(out, "single")[10] == dollars(money(results, *PRICES["gpt-4o-mini"]))


@pytest.mark.parametrize(
    ("model", "cell"),
    [
        ("qwen2.5-coder-1.5b", "local model: no money cost"),
        ("models/my.gguf", "local model: no money cost"),
        ("openai-compatible:http://127.0.0.1:8080/v1#qwen", "local model: no money cost"),
        ("openai-compatible:http://localhost:8080/v1#qwen", "local model: no money cost"),
        ("openai-compatible:http://[::1]:8080/v1#qwen", "local model: no money cost"),
        ("openai-compatible:http://gpu-box:8080/v1#qwen", "no price: give --price IN,OUT"),
        ("openai-compatible:http://10.0.0.7:8080/v1#qwen", "no price: give --price IN,OUT"),
        ("openai-compatible:http://127.example.com/v1#qwen", "no price: give --price IN,OUT"),
        ("openai:some-new-model", "no price: give --price IN,OUT"),
    ],
)
def test_a_run_without_a_price_says_why_it_costs_no_money(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], model: str, cell: str
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    for name in ("results.jsonl", "trace.jsonl"):
        (folder / name).write_bytes((run_dir / name).read_bytes())
    config = json.loads((run_dir / "config.json").read_text()) | {"model": model, "price": None}
    (folder / "config.json").write_text(json.dumps(config))
    out = report(folder, capsys)
    assert printed_row(out, "reflexion")[10] == cell and "$" not in printed_row(out, "single")[10]
    comparison = json.loads((folder / "comparison.json").read_text())
    assert comparison["price"] == {"none": cell}
    assert [s["cost_usd"] for s in comparison["strategies"]] == [None, None]


def test_an_api_model_of_the_price_table_is_priced_without_a_price(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "results.jsonl").write_bytes((run_dir / "results.jsonl").read_bytes())
    config = {"env": "words", "model": "openai:gpt-4o-2024-08-06", "strategies": list(STRATEGIES)}
    (folder / "config.json").write_text(json.dumps(config))
    out = report(folder, capsys)
    results = by_strategy(folder)["reflexion"]
    assert printed_row(out, "reflexion")[10] == dollars(money(results, *PRICES["gpt-4o"]))
    assert "gpt-4o, list price of" in (folder / "report.md").read_text()


@pytest.mark.parametrize("price", ["2.5", "a,b", "-1,2", "1,2,3", "nan,1", "", "gpt-5-imaginary"])
def test_a_bad_price_is_one_line_and_writes_nothing(
    run_dir: Path, capsys: pytest.CaptureFixture[str], price: str
) -> None:
    before = (run_dir / "comparison.json").read_bytes()
    with pytest.raises(SystemExit) as stopped:
        main(["report", str(run_dir), f"--price={price}"])  # `=`: -1,2 is no option
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--price" in err[0] and "expected IN,OUT" in err[0]
    assert (run_dir / "comparison.json").read_bytes() == before


def test_compare_refuses_a_bad_price_before_it_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["compare", "--env", "quadratic", "--out", str(tmp_path / "o"), "--price", "1;2"]
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2 and not (tmp_path / "o").exists()
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_csv_writes_one_row_per_trial_with_the_records_columns(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "trials.csv"
    out = report(run_dir, capsys, "--csv", str(path))
    results = RunFolder(run_dir).results()
    assert f"wrote {len(results)} trials to {path}" in out
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(results) == 8  # 4 tasks x 2 strategies
    assert "curve" not in rows[0]
    assert {"run_id", "task_id", "strategy", "seed", "final_passed", "tokens", "errors"} <= set(
        rows[0]
    )
    for row, r in zip(rows, results, strict=True):
        assert (row["task_id"], row["strategy"]) == (r.task_id, r.strategy)
        assert int(row["tokens"]) == r.input_tokens + r.output_tokens
        assert int(row["llm_calls"]) == r.llm_calls and row["final_passed"] == str(r.final_passed)


def test_csv_never_overwrites_a_file(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mine.csv"
    path.write_text("keep me")
    before = (run_dir / "comparison.json").read_bytes()
    assert main(["report", str(run_dir), "--csv", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "exists" in err[0]
    assert path.read_text() == "keep me" and (run_dir / "comparison.json").read_bytes() == before


def test_a_bad_price_from_python_is_refused_before_the_run(tmp_path: Path) -> None:
    from running import RunConfig, run

    from reflexion.core.errors import UsageError

    config = RunConfig(env="quadratic", strategies=("single",), out=str(tmp_path / "o"))
    with pytest.raises(UsageError, match="--price expected IN,OUT"):
        run(dataclasses.replace(config, price="2.5 10"))
    assert not (tmp_path / "o" / "results.jsonl").exists()
