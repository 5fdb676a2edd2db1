"""`--env game24:N`: solvable puzzles by brute force, the exact-fraction check, answers found in a
reply, code answers run in the sandbox, and runs end to end."""

from __future__ import annotations

import itertools
import json
import os
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import schema_scripted, scripted
from running import run, skills_stream

import envs.game24.env as game24_env
from envs.game24 import Game24Env
from envs.game24.answers import text_answer
from envs.game24.check import check
from envs.game24.puzzles import counts, cuts, difficulty, solvable, ways
from envs.registry import make_env
from reflexion.cli import main
from reflexion.core.protocols import CodeRunningEnv, Env, SandboxedEnv
from reflexion.runner.config import RunConfig

FAST = ["--embedder", "hash-64", "--no-progress"]


def _naive_ways(numbers: tuple[int, ...]) -> int:
    """The definition, spelled out: every distinct order x 4^3 operators x 5 bracketings."""

    def op(o: str, a: Fraction | None, b: Fraction | None) -> Fraction | None:
        if a is None or b is None or (o == "/" and b == 0):
            return None
        return {"+": a + b, "-": a - b, "*": a * b}[o] if o != "/" else a / b

    found = 0
    for a, b, c, d in {tuple(map(Fraction, p)) for p in itertools.permutations(numbers)}:
        for x, y, z in itertools.product("+-*/", repeat=3):
            trees = [
                op(z, op(y, op(x, a, b), c), d),
                op(z, op(x, a, op(y, b, c)), d),
                op(y, op(x, a, b), op(z, c, d)),
                op(x, a, op(z, op(y, b, c), d)),
                op(x, a, op(y, b, op(z, c, d))),
            ]
            found += sum(t == 24 for t in trees)
    return found


def test_1362_of_the_1820_multisets_can_make_24() -> None:
    assert len(counts()) == 1820 and len(solvable()) == 1362
    assert (1, 1, 1, 1) not in solvable() and (3, 3, 8, 8) in solvable()


@pytest.mark.parametrize("numbers", [(1, 3, 4, 6), (3, 3, 8, 8), (1, 1, 4, 6), (2, 3, 4, 12)])
def test_the_count_of_ways_is_the_naive_enumeration(numbers: tuple[int, ...]) -> None:
    assert ways(numbers) == _naive_ways(numbers) > 0
    assert ways((1, 1, 1, 1)) == _naive_ways((1, 1, 1, 1)) == 0


def test_difficulty_is_the_tercile_of_the_count_of_ways() -> None:
    assert (ways((1, 3, 4, 6)), ways((3, 3, 8, 8)), ways((1, 1, 4, 6))) == (1, 1, 228)
    assert cuts() == (13, 34)
    buckets = Counter(difficulty(ms) for ms in solvable())
    assert buckets == {"hard": 451, "medium": 451, "easy": 460}
    assert difficulty((6, 4, 3, 1)) == "hard" and difficulty((1, 1, 4, 6)) == "easy"


def test_puzzles_are_distinct_solvable_and_fixed_by_the_seed() -> None:
    env = Game24Env.from_spec("50,seed=3")
    ids = [t.id for t in env.tasks()]
    assert len(set(ids)) == 50 and ids == [t.id for t in make_env("game24:50,seed=3").tasks()]
    assert ids != [t.id for t in Game24Env.from_spec("50,seed=4").tasks()]
    assert [t.id for t in make_env("game24:2").tasks()] == [t.id for t in Game24Env(2).tasks()]
    for task in env.tasks():
        numbers = tuple(task.spec["numbers"])
        assert numbers in solvable() and task.id == "game24/" + "-".join(map(str, numbers))
        assert task.spec["ways"] == ways(numbers) and task.spec["difficulty"] == difficulty(numbers)
    assert len(Game24Env.from_spec("1362").tasks()) == 1362  # every puzzle, once


def test_the_prompt_allows_a_program_and_gives_no_hint_of_how_to_solve() -> None:
    """Dynamic Cheatsheet's protocol (the default): a program may be written and will be run;
    nothing says how to solve the puzzle. The expression protocol mentions no code at all."""
    hints = ("solver", "example", "hint", "step", "brute", "permutation", "itertools", "try")
    code = Game24Env.from_spec("20")
    assert isinstance(code, Env) and isinstance(code, SandboxedEnv)
    assert isinstance(code, CodeRunningEnv) and code.programs
    for task in code.tasks():
        prompt = task.prompt.lower()
        assert ", ".join(map(str, task.spec["numbers"])) in prompt
        assert "answer: <expression>" in prompt and "exactly once" in prompt
        assert "python program" in prompt and "it will be run" in prompt
        assert not [word for word in hints if word in prompt]
    expression = Game24Env.from_spec("20,protocol=expression")
    assert not expression.programs
    for task in expression.tasks():
        prompt = task.prompt.lower()
        assert "answer: <expression>" in prompt
        words = ("python", "code", "program", "```", *hints)
        assert not [word for word in words if word in prompt]


@pytest.mark.parametrize(
    ("expression", "numbers"),
    [
        ("(6 / (1 - 3/4))", (1, 3, 4, 6)),
        ("8/(3-8/3)", (3, 3, 8, 8)),
        ("((13 * 13) - 1) / 7", (1, 7, 13, 13)),
        ("6 * 4 * (1 * 1)", (1, 1, 4, 6)),
    ],
)
def test_right_answers_pass(expression: str, numbers: tuple[int, ...]) -> None:
    verdict = check(expression, numbers)
    assert verdict.solved and verdict.value == 1.0


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        ("6 / (1 - 3/4) * 1", "It uses 1, 1, 3, 4, 6, but the numbers are 1, 3, 4, 6"),
        ("6 * 4 * 1", "It uses 1, 4, 6, but"),
        ("6 / (1 - 3/3)", "It uses 1, 3, 3, 6"),
        ("6 * 4 - 3 / 1", "equals 21, not 24"),
        ("6 * 4 - 1 / 3 - 0", "It uses 0, 1, 3, 4, 6"),
        ("(6 - 1) * 4 + 3 / 2", "It uses 1, 2, 3, 4, 6"),
        ("6 * (4 - 3 / 1)", "equals 6, not 24"),
        ("(6 * 4 - 1) + 3 / 6", "equals 47/2 (about 23.5), not 24"),
        ("6 / (3 - 3) + 4 * 1", "divides by zero"),
        ("6 / (4 - 4 * 1) + 3", "divides by zero"),
        ("a * 4 + 3 - 1", "names and function calls are not allowed"),
        ("abs(6) * 4 * (3 - 1)", "names and function calls are not allowed"),
        ("6 ** 1 * 4 * (3 - 3)", "`**` is not allowed"),
        ("(6 // 1) * 4 + 3 - 3", "`//` is not allowed"),
        ("-1 + 6 * 4 + 3 - 3", "unary minus"),
        ("6.0 * 4 * (3 - 1)", "6.0 is not a whole number"),
        ("six times four", "does not parse"),
        ("1, 3, 4, 6", "only numbers, + - * / and parentheses"),
    ],
)
def test_wrong_answers_fail_saying_what_is_wrong(expression: str, says: str) -> None:
    verdict = check(expression, (1, 3, 4, 6))
    assert not verdict.solved and says in verdict.feedback
    assert "24" not in verdict.feedback.replace("not 24", "")  # no other number is suggested


def test_a_right_expression_of_other_numbers_scores_below_a_wrong_value_of_the_right_ones() -> None:
    other, close = check("6 * 4 * 1", (1, 3, 4, 6)), check("6 * 4 - 3 + 1", (1, 3, 4, 6))
    assert (other.value, close.value) == (0.25, 0.5)
    assert check("x", (1, 3, 4, 6)).value == 0.0


@pytest.mark.parametrize(
    ("reply", "expression"),
    [
        ("Let me try 6 * 4 = 24.\nAnswer: 6 / (1 - 3/4)", "6 / (1 - 3/4)"),
        ("**Final Answer:** $6 \\div (1 - 3 \\div 4) = 24$", "6 / (1 - 3 / 4)"),
        ("Answer:\n(6 × 4) × (3 − 1 − 1)", "(6 * 4) * (3 - 1 - 1)"),
        ("Answer: <6 / (1 - 3/4)>", "6 / (1 - 3/4)"),
        ("We get\n6 / (1 - 3/4) = 24\nSo that works.", "6 / (1 - 3/4)"),
        ("Answer: 6 / (1 - 3/4)\nWait, no.\nAnswer: 2 ** 3 * 3", "2 ** 3 * 3"),
        ("```\n6 / (1 - 3/4)\n```", "6 / (1 - 3/4)"),  # a plain fence is text
        ("```python\n6 / (1 - 3/4)\n```", None),  # a python block is code, to be run
        ("I cannot find one.", None),
    ],
)
def test_the_answer_is_the_last_answer_line_or_expression(reply: str, expression: str) -> None:
    assert text_answer(reply) == expression


def test_a_reply_without_an_expression_is_told_how_to_answer() -> None:
    env = Game24Env(1)
    score = env.score(env.tasks()[0], "It is hard to say.")
    assert not score.solved and "Answer: <expression>" in score.feedback


SOLVER = """Let me write a program.
```python
from fractions import Fraction

def solve(items):
    if len(items) == 1:
        return items[0][1] if items[0][0] == 24 else None
    for i, j in ((i, j) for i in range(len(items)) for j in range(len(items)) if i != j):
        (a, x), (b, y) = items[i], items[j]
        rest = [items[k] for k in range(len(items)) if k not in (i, j)]
        options = [(a + b, f"({x} + {y})"), (a - b, f"({x} - {y})"), (a * b, f"({x} * {y})")]
        options += [(a / b, f"({x} / {y})")] if b else []
        for value, text in options:
            found = solve([*rest, (value, text)])
            if found:
                return found
    return None

import os
os.environ["GAME24_RAN_HERE"] = "yes"
print("searching...")
print(solve([(Fraction(n), str(n)) for n in [NUMS]]))
```
Answer: 1 + 1 + 1 + 1"""


def test_a_code_answer_runs_in_the_sandbox_and_its_printed_expression_is_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[str] = []
    real = game24_env.run_python

    def spy(code: str, **limits: float) -> object:
        ran.append(code)
        return real(code, **limits)

    monkeypatch.setattr(game24_env, "run_python", spy)
    game24_env._printed_expression.cache_clear()
    env = Game24Env(1)
    task = env.tasks()[0]
    reply = SOLVER.replace("NUMS", ", ".join(map(str, task.spec["numbers"])))
    score = env.score(task, reply)
    assert score.solved, score.feedback
    assert score.feedback.startswith("The code ran; it printed `(")
    assert "GAME24_RAN_HERE" not in os.environ  # it ran in another process, not in ours
    assert env.evaluate(task, reply) == score and len(ran) == 1  # run once for both checks
    # the code decides, not the guess on the Answer line; and a wrong program fails
    wrong = SOLVER.replace("NUMS", "1, 1, 1, 1")
    assert not env.score(task, wrong).solved
    assert "printed no expression" in env.score(task, wrong).feedback


def test_code_that_prints_no_expression_falls_back_to_the_answer_line() -> None:
    env = Game24Env.from_spec("1,seed=7")  # 3, 3, 3, 6
    task = env.tasks()[0]
    reply = "```python\nprint(3 * 6 + 3 + 3)\n```\nAnswer: 3 * 6 + 3 + 3"
    score = env.score(task, reply)
    assert score.solved and score.feedback.startswith("The code ran and printed no expression.")
    crash = env.score(task, "```python\nraise SystemExit(3)\n```")
    assert not crash.solved and crash.feedback.startswith("The code failed")


def test_an_endless_program_fails_within_the_limit_and_the_run_goes_on(tmp_path: Path) -> None:
    env = Game24Env.from_spec("1,seed=7,protocol=expression")  # the program runs at the check
    env.code_seconds = 1.0
    loop = "```python\nwhile True:\n    pass\n```"
    start = time.perf_counter()
    score = env.score(env.tasks()[0], loop)
    assert time.perf_counter() - start < 10
    assert not score.solved and "did not finish within 1 s" in score.feedback
    model = scripted([loop, "Write the expression itself.", "Answer: 3 * 6 + 3 + 3"])
    config = RunConfig(
        strategies=("reflexion",), out=str(tmp_path / "r"), episodes=2, embedder="hash-64"
    )
    [result] = run(config, env=env, model=model)
    assert result.final_passed and result.attempts == 2 and result.errors == ()


CODER = f'''
import re
from reflexion.models.fake import FixedChatModel

SOLVER = {SOLVER!r}


class Coder(FixedChatModel):
    """Answers every puzzle with a program that solves it (a model that learned to write one)."""

    def _result(self, messages):
        text = "\\n".join(m.text for m in messages)
        numbers = re.search(r"Use the numbers ([0-9, ]+) to make 24", text).group(1)
        return FixedChatModel(reply=SOLVER.replace("NUMS", numbers))._result(messages)
'''


def test_compare_runs_game24_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "coder.py").write_text(CODER)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "cmp"
    argv = ["compare", "--env", "game24:3", "--strategies", "single,reflexion"]
    code = main([*argv, "--model", "python:coder:Coder", "--out", str(out), *FAST])
    assert code == 0, capsys.readouterr().err
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and all(r["final_passed"] for r in rows)
    assert {r["task_id"] for r in rows} == {t.id for t in make_env("game24:3").tasks()}
    config = json.loads((out / "config.json").read_text())
    assert config["env"] == "game24:3" and "network_isolated" in json.dumps(config)


@pytest.mark.parametrize("arg", ["0", "x", "1363", "3,seed=x", "3,level=2"])
def test_a_bad_spec_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arg: str
) -> None:
    argv = ["run", "--env", f"game24:{arg}", "--strategy", "single"]
    assert main([*argv, "--out", str(tmp_path / "o"), *FAST]) == 2
    err = capsys.readouterr().err
    assert "game24" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_help_says_the_visible_and_held_out_checks_are_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    printed = " ".join(capsys.readouterr().out.split())
    assert (
        "game24:N[,seed=S,protocol=code|expression]" in printed
        and "the puzzle states its criterion" in printed
    )
    assert "are the same check" in (game24_env.__doc__ or "")


def test_code_rounds_show_the_model_what_its_program_printed_and_count_every_round(
    tmp_path: Path,
) -> None:
    """Dynamic Cheatsheet's protocol: a reply's program runs in the sandbox, the model sees
    what it printed (or that it did not finish) and answers again, up to --code-rounds times;
    the last reply is the answer, and every round's tokens and calls are the trial's cost."""
    env = Game24Env.from_spec("1,seed=7")  # 3, 3, 3, 6
    env.code_seconds = 1.0
    endless = "```python\nwhile True:\n    pass\n```"
    printing = "```python\nprint('3 * 6 + 3 + 3')\n```"
    model = scripted([endless, printing, "Answer: 3 * 6 + 3 + 3"])
    config = RunConfig(
        strategies=("single",), out=str(tmp_path / "r"), code_rounds=3, embedder="hash-64"
    )
    [result] = run(config, env=env, model=model)
    assert result.final_passed and result.attempts == 1 and result.errors == ()
    assert result.llm_calls == 3 and result.output_tokens == 9  # three rounds, each counted
    second, third = ("\n".join(str(m.content) for m in p) for p in model.prompts[1:])
    assert "did not finish within 1 s" in second and endless in second
    assert "It printed:\n3 * 6 + 3 + 3" in third
    steps = [json.loads(line) for line in (tmp_path / "r" / "trace.jsonl").read_text().splitlines()]
    [generate] = [s for s in steps if s["kind"] == "generate"]
    assert generate["data"]["code_rounds"] == 2 and generate["input_tokens"] == 30


def test_code_rounds_stop_at_the_limit_and_at_zero_none_are_run(tmp_path: Path) -> None:
    env = Game24Env.from_spec("1,seed=7")
    printing = "```python\nprint('3 * 6 + 3 + 3')\n```"
    capped = scripted([printing, printing])  # it keeps writing programs: one round, then done
    config = RunConfig(strategies=("single",), out=str(tmp_path / "a"), code_rounds=1)
    [result] = run(config, env=env, model=capped)
    assert result.llm_calls == 2 and result.final_passed  # the last program's print is scored
    none = scripted([printing])
    config = RunConfig(strategies=("single",), out=str(tmp_path / "b"), code_rounds=0)
    [result] = run(config, env=env, model=none)
    assert result.llm_calls == 1 and len(none.prompts) == 1 and result.final_passed


def test_skills_keep_a_verified_program_show_it_and_retire_it_when_reuse_keeps_failing(
    tmp_path: Path,
) -> None:
    """`skills`: the program behind a solved puzzle is stored verbatim; the next puzzles are
    shown it as code to call or adapt; each failed reuse costs it a vote, and at 0 it retires,
    its history kept. No model call writes the memory."""
    from memory import ChromaMemory

    env = Game24Env.from_spec("3,seed=7")  # 3-3-3-6, then 1-7-13-13 and 3-6-6-13
    solver = "```python\nprint('3 * 6 + 3 + 3')\n```"
    model = scripted([solver, "Answer: 1 + 7 + 13 + 13", "Answer: 3 + 6 + 6 + 13"])
    config = RunConfig(
        strategies=("skills",),
        out=str(tmp_path / "r"),
        episodes=1,
        code_rounds=0,
        embedder="hash-64",
        order="stream",
    )
    results = {r.task_id: r for r in run(config, env=env, model=model)}
    assert results["game24/3-3-3-6"].final_passed and len(model.prompts) == 3  # no curator call
    later = ["\n".join(str(m.content) for m in p) for p in model.prompts[1:]]
    assert all("Programs that solved similar tasks" in p and solver in p for p in later)
    assert "Programs that solved" not in "\n".join(str(m.content) for m in model.prompts[0])
    steps = [json.loads(line) for line in (tmp_path / "r" / "trace.jsonl").read_text().splitlines()]
    [kept] = [s for s in steps if s["kind"] == "remember"]
    assert kept["data"]["kind"] == "skill" and solver in kept["output"]
    revised = [s["output"] for s in steps if s["kind"] == "revise"]
    skill = kept["data"]["id"]
    assert revised == [f"downvote {skill}: 1 votes", f"downvote {skill}: 0 votes, dropped"]
    with ChromaMemory.open(tmp_path / "r" / "memory") as store:
        assert store.reflections() == []  # retired after two failed reuses...
        history = store.history(skill)  # ...its history kept
    assert [c.action for c in history] == ["edit", "forget"]
    assert [c.before.votes for c in history if c.before] == [2, 1]


def test_a_skill_is_found_by_the_question_of_the_task_it_solved(tmp_path: Path) -> None:
    """A skill is keyed by its task's question, as exemplars and items are: its recall looks for
    tasks like the one it solved, not for text like its program."""
    from memory import ChromaMemory

    solver = "```python\nprint('3 * 6 + 3 + 3')\n```"
    skills_stream(tmp_path, "2,seed=7", [solver, "Answer: 1 + 7 + 13 + 13"])
    with ChromaMemory.open(tmp_path / "r" / "memory") as store:
        [skill] = store.reflections()
    [task] = Game24Env.from_spec("1,seed=7").tasks()
    assert skill.key == task.lookup and solver not in skill.key


def test_a_skill_whose_reuse_passes_gains_a_vote(tmp_path: Path) -> None:
    solver = "```python\nprint('3 * 6 + 3 + 3')\n```"
    adapted = "```python\nprint('(13 * 13 - 1) / 7')\n```"
    results, steps = skills_stream(tmp_path, "2,seed=7", [solver, adapted])  # 3-3-3-6, 1-7-13-13
    assert all(r.final_passed for r in results)
    first, second = [s for s in steps if s["kind"] == "remember"]  # both solved: both kept
    assert adapted in second["output"]
    revised = [s["output"] for s in steps if s["kind"] == "revise"]
    assert revised == [f"upvote {first['data']['id']}: 3 votes"]


def test_a_skill_loses_one_vote_a_task_not_one_an_attempt(tmp_path: Path) -> None:
    """Three failed attempts at one hard puzzle with a skill shown cost it one vote, not three:
    the retries of one task do not retire a skill."""
    solver = "```python\nprint('3 * 6 + 3 + 3')\n```"
    wrong = ["Answer: 1 + 7 + 13 + 13"] * 3
    results, steps = skills_stream(tmp_path, "2,seed=7", [solver, *wrong], episodes=3)
    assert {r.task_id: r for r in results}["game24/1-7-13-13"].attempts == 3
    [kept] = [s for s in steps if s["kind"] == "remember"]
    revised = [s["output"] for s in steps if s["kind"] == "revise"]
    assert revised == [f"downvote {kept['data']['id']}: 1 votes"]


def test_a_skill_that_memory_tokens_kept_out_of_the_prompt_gets_no_vote(tmp_path: Path) -> None:
    """The third puzzle recalls both skills, but --memory-tokens 10 has room for one (cut to
    fit): its failure costs a vote only to the skill the model was shown."""
    solver = "```python\nprint('3 * 6 + 3 + 3')\n```"
    adapted = "```python\nprint('(13 * 13 - 1) / 7')\n```"
    replies = [solver, adapted, "Answer: 3 + 6 + 6 + 13"]  # 3-3-3-6, 1-7-13-13, then 3-6-6-13
    _, steps = skills_stream(tmp_path, "3,seed=7", replies, memory_tokens=10)
    [*_, third] = [s for s in steps if s["kind"] == "generate"]
    [left_out] = third["data"]["over_bound"]
    revised = [s["output"] for s in steps if s["kind"] == "revise"]
    assert len(revised) == 2 and revised[1].startswith("downvote ") and left_out not in revised[1]


def test_a_program_that_did_not_solve_the_puzzle_is_not_kept_as_a_skill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under the code protocol the model may answer by itself after its program printed
    nothing useful. That program passes no check, so it is not kept: the next puzzle is shown
    no skill. A program that prints the solving expression is kept."""
    silent = "```python\nfor x in []:\n    print(x)\n```"
    replies = [silent, "Answer: 3 * 6 + 3 + 3", "Answer: 1 + 7 + 13 + 13"]  # 3-3-3-6, 1-7-13-13
    results, steps = skills_stream(tmp_path / "a", "2,seed=7", replies, code_rounds=1)
    assert {r.task_id: r for r in results}["game24/3-3-3-6"].final_passed  # by the text after
    assert not [s for s in steps if s["kind"] == "remember"]
    [skipped] = [s for s in steps if s["kind"] == "skipped"]
    assert "does not pass the check on its own" in skipped["output"]
    [verified] = [s for s in steps if s["kind"] == "verify"]
    assert verified["data"]["solved"] is False
    last = [s for s in steps if s["kind"] == "generate"][-1]
    assert "Programs that solved" not in json.dumps(last["prompt"])
    main(["report", str(tmp_path / "a" / "r")])  # the report counts it among what was skipped
    [row] = [line.split() for line in capsys.readouterr().out.splitlines() if "none " in line]
    assert row[:4] == ["skills", "none", "1", "0"]
    # the same stream where the program prints the answer: kept, and shown next
    solver = "```python\nprint('3 * 6 + 3 + 3')\n```"
    _, steps = skills_stream(tmp_path / "b", "2,seed=7", [solver, "Answer: 1 + 7 + 13 + 13"])
    [kept] = [s for s in steps if s["kind"] == "remember"]
    assert solver in kept["output"]


@pytest.mark.parametrize(("protocol", "room"), [("code", 1024), ("expression", 512)])
def test_an_answer_has_room_for_a_program_under_the_code_protocol(
    tmp_path: Path, protocol: str, room: int
) -> None:
    """Under the code protocol an answer may run to 1,024 tokens (Dynamic Cheatsheet
    allows 2,048); the expression-only protocol keeps the usual 512."""
    model = schema_scripted(["Answer: 3 * 6 + 3 + 3"])
    env = Game24Env.from_spec(f"1,seed=7,protocol={protocol}")
    run(RunConfig(strategies=("single",), out=str(tmp_path / "r")), env=env, model=model)
    assert [b["max_tokens"] for b in model.bound] == [room]


@pytest.mark.parametrize("strategy", ["cheatsheet", "insights", "bank"])
def test_a_curator_is_shown_every_code_rounds_program_and_what_it_printed(
    tmp_path: Path, strategy: str
) -> None:
    """Dynamic Cheatsheet's curator reads the whole exchange, every round's code and its output
    (its `final_output`), with twice an answer's tokens: shown only the last reply ("Answer:
    ..."), a curator cannot keep a solver. The program is shown whole, past the 1,500
    characters an answer alone is cut to. A failed attempt first, then the solver's: every
    design's curator is asked about the solved one (ExpeL's contrasts it with the failure)."""
    notes = "".join(f"# step {i}: try each order and each operator\n" for i in range(50))
    solver = f"```python\n{notes}print('3 * 6 + 3 + 3')\n```"
    curator = json.dumps({"reason": "a solver", "operations": [], "items": []})
    replies = ["Answer: 3 + 3 + 3 + 6", solver, "Answer: 3 * 6 + 3 + 3", curator]
    model = schema_scripted(replies)
    config = RunConfig(
        strategies=(strategy,), out=str(tmp_path / "r"), code_rounds=1, order="stream"
    )
    [result] = run(config, env=Game24Env.from_spec("1,seed=7"), model=model)
    assert result.final_passed and result.attempts == 2 and len(model.prompts) == 4
    asked = "\n".join(str(m.content) for m in model.prompts[3])
    assert len(solver) > 2000 and solver in asked
    shown = asked.index(solver), asked.index("The program was run.\nIt printed:\n3 * 6 + 3 + 3")
    assert shown[0] < shown[1] < asked.rindex("Answer: 3 * 6 + 3 + 3")
    assert model.bound[3]["max_tokens"] == 2048


def test_proactive_gets_the_code_rounds_and_the_room_of_any_answer(tmp_path: Path) -> None:
    """Its prompt says the program will be run, so under the code protocol `proactive` answers
    as `single` does: its program runs, it sees what it printed, and each reply gets the code
    roles' 1,024 tokens."""
    printing = "<think>\n```python\nprint('3 * 6 + 3 + 3')\n```\n</think>"
    model = schema_scripted([printing, "<answer>Answer: 3 * 6 + 3 + 3</answer>"])
    config = RunConfig(strategies=("proactive",), out=str(tmp_path / "r"), code_rounds=1)
    [result] = run(config, env=Game24Env.from_spec("1,seed=7"), model=model)
    assert result.final_passed and result.llm_calls == 2
    assert "It printed:\n3 * 6 + 3 + 3" in "\n".join(str(m.content) for m in model.prompts[1])
    assert [b["max_tokens"] for b in model.bound] == [1024, 1024]


def test_a_final_answer_quoting_the_output_in_a_bare_fence_keeps_the_rounds_solver(
    tmp_path: Path,
) -> None:
    """Under the code protocol the model may quote what its program printed in a bare fence
    before its answer. That quote is not a program: the solver from the code round is the
    skill kept. And when the final reply holds a bare-fenced program that fails on its own, the
    round's solver is still found behind it and kept."""
    solver = "```python\nprint('3 * 6 + 3 + 3')\n```"
    quoted = "The program printed:\n```\n3 * 6 + 3 + 3\n```\nAnswer: 3 * 6 + 3 + 3"
    _, steps = skills_stream(tmp_path / "a", "1,seed=7", [solver, quoted], code_rounds=1)
    [kept] = [s for s in steps if s["kind"] == "remember"]
    assert "print('3 * 6 + 3 + 3')" in kept["output"]
    silent = "Checked with:\n```\nx = 3 * 6\nprint(x)\n```\nAnswer: 3 * 6 + 3 + 3"
    _, steps = skills_stream(tmp_path / "b", "1,seed=7", [solver, silent], code_rounds=1)
    assert [s["data"]["solved"] for s in steps if s["kind"] == "verify"] == [False, True]
    [kept] = [s for s in steps if s["kind"] == "remember"]
    assert "print('3 * 6 + 3 + 3')" in kept["output"] and "x = 3 * 6" not in kept["output"]
