"""`--env sql:N`: the shop database is built the same from a seed, every gold query answers with
rows no trivial query gives, candidates run read-only in the sandbox, the check compares rows as
asked, and no gold query or gold row reaches a prompt or the visible feedback."""

from __future__ import annotations

import hashlib
import json
import random
import re
import sqlite3
import time
from collections import Counter
from pathlib import Path

import pytest

from envs.registry import make_env
from envs.sql import SqlEnv
from envs.sql.build import database, make_rows
from envs.sql.check import verdict
from envs.sql.child import REFUSED
from envs.sql.env import DB_SEED
from envs.sql.questions import DIFFICULTIES, NEEDS, load_questions
from envs.sql.run import Result, extract_query
from envs.sql.schema import TABLES, literal
from reflexion.core.errors import UsageError
from reflexion.core.records import Task


@pytest.fixture(scope="module")
def env() -> SqlEnv:
    return SqlEnv()


@pytest.fixture(scope="module")
def gold_results(env: SqlEnv) -> dict[str, Result]:
    return {task.id: _direct(env.path, env.gold(task).gold) for task in env.tasks()}


def _direct(path: Path, query: str, reverse: bool = False) -> Result:
    """A query run straight on the file; `reverse` scans tables the other way round, so that a
    result that hangs on ties in an order comes out different."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        conn.execute(f"PRAGMA reverse_unordered_selects = {int(reverse)}")
        cursor = conn.execute(query)
        rows = tuple(cursor.fetchall())
        return Result(tuple(d[0] for d in cursor.description), rows)
    finally:
        conn.close()


def _task(env: SqlEnv, starts: str) -> Task:
    return next(t for t in env.tasks() if env.gold(t).question.startswith(starts))


def _sql(query: str) -> str:
    return f"Here it is:\n```sql\n{query}\n```"


def _checksum(path: Path, tables: tuple[str, ...] = TABLES) -> str:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        digest = hashlib.sha256()
        for table in tables:
            for row in conn.execute(f"SELECT * FROM {table} ORDER BY rowid"):
                digest.update(repr(row).encode())
        return digest.hexdigest()
    finally:
        conn.close()


# -- the database ----------------------------------------------------------------------------


def test_the_database_is_built_the_same_from_the_same_seed(tmp_path: Path) -> None:
    start = time.monotonic()
    first = database(DB_SEED, tmp_path / "one")
    assert time.monotonic() - start < 5
    second = database(DB_SEED, tmp_path / "two")
    assert 8 <= len(TABLES) <= 12
    counts = {t: len(rows) for t, rows in make_rows(DB_SEED).items()}
    assert list(counts) == list(TABLES) and 3_000 <= sum(counts.values()) <= 10_000
    assert _checksum(first) == _checksum(second)
    assert _checksum(first, ("orders", "order_lines")) != _checksum(
        database(DB_SEED + 1, tmp_path / "three"), ("orders", "order_lines")
    )
    assert database(DB_SEED, tmp_path / "one") == first  # found again, not rebuilt
    first.unlink()
    assert database(DB_SEED, tmp_path / "one").exists()  # rebuilt when missing


# -- the questions ---------------------------------------------------------------------------


def test_the_questions_are_many_distinct_and_tagged() -> None:
    questions = load_questions()
    assert len(questions) >= 150
    assert [q.id for q in questions] == [f"sql/{i:03d}" for i in range(1, len(questions) + 1)]
    assert len({q.question for q in questions}) == len(questions)
    assert len({q.gold for q in questions}) == len(questions)
    assert set(Counter(q.difficulty for q in questions)) == set(DIFFICULTIES)
    assert {n for q in questions for n in q.needs} == set(NEEDS)
    assert 0 < sum(q.ordered for q in questions) < len(questions)


def test_no_two_questions_are_one_template_with_other_constants() -> None:
    """No two questions may be the same template with other constants. Two gold
    queries that differ only in their literals must test different schema knowledge (March
    2024's orders, and FY2025's, which needs the fiscal year's start)."""
    questions = load_questions()

    def template(gold: str) -> str:
        shape = re.sub(r"\b\d+(?:\.\d+)?\b", "?", re.sub(r"'[^']*'", "?", gold))
        return " ".join(shape.lower().split())

    seen: dict[tuple[str, frozenset[str]], str] = {}
    for q in questions:
        key = (template(q.gold), frozenset(q.needs))
        assert key not in seen, f"{q.id} repeats {seen[key]} with other constants"
        seen[key] = q.id


def test_every_gold_query_gives_rows_that_no_trivial_query_gives(
    env: SqlEnv, gold_results: dict[str, Result]
) -> None:
    trivial = []
    for table in TABLES:
        trivial.append(_direct(env.path, f"SELECT * FROM {table}"))
        trivial.append(_direct(env.path, f"SELECT COUNT(*) FROM {table}"))
    for task in env.tasks():
        gold = gold_results[task.id]
        assert gold.rows and not gold.problem, task.id
        for other in trivial:
            assert not verdict(other, gold, ordered=False)[0], task.id


def test_no_gold_result_hangs_on_ties(env: SqlEnv, gold_results: dict[str, Result]) -> None:
    for task in env.tasks():
        question = env.gold(task)
        reversed_scan = _direct(env.path, question.gold, reverse=True)
        assert verdict(reversed_scan, gold_results[task.id], question.ordered)[0], task.id


def test_gold_queries_score_solved_through_the_sandbox(env: SqlEnv) -> None:
    for task in random.Random(0).sample(env.tasks(), 10):
        for check in (env.score, env.evaluate):
            score = check(task, _sql(env.gold(task).gold))
            assert score.solved and score.value == 1.0, (task.id, score)
            assert score.feedback == "the result matches"


# -- feedback and refusals -------------------------------------------------------------------


def test_a_wrong_query_is_told_its_shape_or_that_values_differ(env: SqlEnv) -> None:
    task = _task(env, "How many customer accounts are open")
    shape = env.score(task, _sql("SELECT customer_id, city FROM customers LIMIT 12"))
    assert not shape.solved and shape.value == 0.0
    assert shape.feedback == "your query returned 12 rows x 2 columns; expected 1 row x 1 column"
    values = env.score(task, _sql("SELECT COUNT(*) FROM customers"))  # deleted ones counted
    assert values.feedback == (
        "your query returned 1 row x 1 column, as expected, but the values differ"
    )
    error = env.score(task, _sql("SELECT COUNT(* FROM customers"))
    assert error.feedback.startswith("SQLite error: ") and "syntax error" in error.feedback
    missing = env.score(task, _sql("SELECT COUNT(*) FROM customer"))
    assert missing.feedback == "SQLite error: no such table: customer"
    assert env.score(task, "").feedback.startswith("no SQL query found")


def test_order_counts_only_when_the_question_asks_for_one(env: SqlEnv) -> None:
    ordered = _task(env, "List the names of the top-level categories in alphabetical order")
    asked = "SELECT name FROM categories WHERE parent_id IS NULL ORDER BY name"
    assert env.score(ordered, _sql(asked)).solved
    wrong = env.score(ordered, _sql(asked + " DESC"))
    assert wrong.feedback == "the rows are right but not in the order asked"
    unordered = _task(env, "How many open stores does each region have")
    query = "SELECT region, COUNT(*) FROM stores WHERE closed_on IS NULL GROUP BY region"
    assert env.score(unordered, _sql(query + " ORDER BY region DESC")).solved


@pytest.mark.parametrize(
    ("query", "feedback"),
    [
        ("DELETE FROM orders", REFUSED),
        ("DROP TABLE orders", REFUSED),
        ("ATTACH DATABASE 'other.sqlite' AS other", REFUSED),
        ("SELECT 1; SELECT 2", REFUSED),
        ("PRAGMA writable_schema=1", REFUSED),
        ("WITH gone AS (SELECT 1) DELETE FROM orders", REFUSED),
        ("UPDATE products SET price_cents = 0", REFUSED),
        (
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000)"
            " SELECT COUNT(*) FROM n",
            "the query ran past 5 s",
        ),
    ],
)
def test_writes_and_runaway_queries_are_refused(env: SqlEnv, query: str, feedback: str) -> None:
    before = hashlib.sha256(env.path.read_bytes()).hexdigest()
    task = env.tasks()[0]
    score = env.score(task, _sql(query))
    assert not score.solved and score.feedback == feedback
    assert hashlib.sha256(env.path.read_bytes()).hexdigest() == before


def test_a_huge_result_is_cut_and_said_so(env: SqlEnv) -> None:
    score = env.score(env.tasks()[0], "SELECT * FROM order_lines")
    assert score.feedback.startswith("your query returned more than 1,000 rows; expected ")


def test_the_query_is_the_last_sql_block_else_the_reply() -> None:
    reply = "First:\n```sql\nSELECT 1\n```\nBetter:\n```SQL\nSELECT 2;\n```\n```\nnot this\n```"
    assert extract_query(reply) == "SELECT 2;"
    assert extract_query("```\nSELECT 3\n```") == "SELECT 3"
    assert extract_query("  SELECT 4\n") == "SELECT 4"


# -- the check -------------------------------------------------------------------------------


def test_rows_compare_as_a_multiset_unless_ordered() -> None:
    gold = Result(("a", "b"), ((1, "x"), (2, "y"), (2, "y")))
    shuffled = Result(("c", "d"), ((2, "y"), (1, "x"), (2, "y")))
    assert verdict(shuffled, gold, ordered=False) == (True, "the result matches")
    assert (
        verdict(shuffled, gold, ordered=True)[1] == "the rows are right but not in the order asked"
    )
    once = Result(("a", "b"), ((1, "x"), (2, "y"), (1, "x")))  # the same set, other counts
    assert not verdict(once, gold, ordered=False)[0]


def test_numbers_match_within_rounding_and_ints_equal_floats() -> None:
    gold = Result(("n",), ((0.1 + 0.2,), (3,), (None,)))
    assert verdict(Result(("n",), ((3.0,), (0.3,), (None,))), gold, ordered=False)[0]
    assert verdict(Result(("n",), ((0.3000001,), (3,), (None,))), gold, ordered=False)[0]
    assert not verdict(Result(("n",), ((0.30001,), (3,), (None,))), gold, ordered=False)[0]
    assert not verdict(Result(("n",), ((0.3,), ("3",), (None,))), gold, ordered=False)[0]
    assert not verdict(Result(("n",), ((0.3,), (3,), (0,))), gold, ordered=False)[0]


# -- nothing held out leaks ------------------------------------------------------------------


def _distinctive(result: Result) -> set[str]:
    """How a gold result would show if it leaked: whole rows as the prompt writes sample rows,
    numbers that are not whole, and a one-value answer. (A single text cell of a bigger result
    may be a group the question names, as 'Clothing' in "each top-level category".)"""
    shown = set()
    for row in result.rows:
        if len(row) > 1:
            shown.add("(" + ", ".join(map(literal, row)) + ")")
        shown.update(repr(c) for c in row if isinstance(c, float) and not c.is_integer())
    if len(result.rows) == 1 and len(result.rows[0]) == 1 and isinstance(result.rows[0][0], str):
        shown.add(result.rows[0][0])
    return shown


def test_no_gold_query_or_row_is_in_a_prompt_or_spec(
    env: SqlEnv, gold_results: dict[str, Result]
) -> None:
    schema = env.tasks()[0].prompt.split("Question: ")[0]
    for task in env.tasks():
        gold = env.gold(task)
        head, question = task.prompt.split("Question: ")
        assert head == schema and question == gold.question
        assert gold.gold not in task.prompt and gold.gold not in json.dumps(task.spec)
        assert set(task.spec) == {"difficulty", "needs", "ordered"}
        for value in _distinctive(gold_results[task.id]):
            assert value not in question, (task.id, value)
            if value.startswith("(") or re.fullmatch(r"[\d.]+", value):  # not a name
                assert value not in task.prompt, (task.id, value)


FEEDBACK = re.compile(
    r"your query returned (\d+ rows? x \d+ columns?|more than 1,000 rows)(; expected \d+ rows? x "
    r"\d+ columns?|, as expected, but the values differ)|the rows are right but not in the order "
    r"asked|SQLite error: .*"
)


def test_visible_feedback_shows_no_gold_query_or_row(
    env: SqlEnv, gold_results: dict[str, Result]
) -> None:
    wrong = [
        "SELECT name, city FROM stores",
        "SELECT full_name FROM customers WHERE tier = 2 LIMIT 7",
        "SELECT COUNT(*) + 1 FROM orders",
        "SELECT * FROM products LIMIT 3",
    ]
    for task in random.Random(1).sample(env.tasks(), 8):
        gold = env.gold(task)
        for query in [
            *wrong,
            gold.gold + " LIMIT 0",
            f"SELECT * FROM ({gold.gold}) LIMIT 1 OFFSET 1",
        ]:
            feedback = env.score(task, _sql(query)).feedback
            assert gold.gold not in feedback
            if feedback != "the result matches":
                assert FEEDBACK.fullmatch(feedback), feedback
            for value in _distinctive(gold_results[task.id]):
                assert value not in feedback, (task.id, value)


# -- the env ---------------------------------------------------------------------------------


def test_the_prompt_shows_the_schema_then_asks_the_question_last(env: SqlEnv) -> None:
    task = env.tasks()[0]
    assert len(task.prompt) < 7_000
    for table in TABLES:
        assert f"CREATE TABLE {table} (" in task.prompt
    for convention in ("4 = cancelled", "in cents", "fiscal year FYn", "(the row is kept)"):
        assert convention in task.prompt
    assert task.prompt.rstrip().endswith(env.gold(task).question)


def test_make_env_takes_a_count_and_a_seed() -> None:
    ten = make_env("sql:10")
    assert ten.name == "sql" and len(ten.tasks()) == 10
    assert [t.id for t in ten.tasks()] == [t.id for t in make_env("sql:10").tasks()]
    assert [t.id for t in make_env("sql:10,seed=5").tasks()] != [t.id for t in ten.tasks()]
    assert [t.id for t in make_env("sql:10").tasks()[:5]] == [
        t.id for t in make_env("sql:5").tasks()
    ]
    assert len(make_env("sql").tasks()) == len(load_questions())
    assert Counter(t.spec["difficulty"] for t in make_env("sql:30").tasks()).keys() == set(
        DIFFICULTIES
    )


@pytest.mark.parametrize("spec", ["sql:0", "sql:abc", "sql:5,bogus=1", "sql:5,seed=x", "sql:999"])
def test_bad_specs_are_one_line_usage_errors(spec: str) -> None:
    with pytest.raises(UsageError) as caught:
        make_env(spec)
    assert "\n" not in str(caught.value) and str(caught.value).startswith("sql")


def test_the_sandbox_is_described(env: SqlEnv) -> None:
    assert set(env.sandbox()) >= {"network_isolated", "filesystem_isolated", "missing"}
