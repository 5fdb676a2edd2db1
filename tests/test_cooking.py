"""`--env cooking:N`: TextWorld's cooking games, made offline and cached, replayed for their score,
and played through the real CLI by a model that answers from its prompt; no prompt of such a run
shows a game's walkthrough (read here, from the game's metadata, by the tests only)."""

from __future__ import annotations

import importlib
import itertools
import json
from pathlib import Path

import pytest
from conftest import CountingModel
from langchain_core.messages import AIMessage

from envs.textgames import Cooking, TextWorldEnv, cooking_env
from reflexion.cli import main
from reflexion.core.errors import UsageError
from reflexion.core.runfolder import RunFolder

# the test's own direct use of textworld meets jericho's note on generated games
pytestmark = pytest.mark.filterwarnings("ignore:Game .* is not fully supported")
MADE: list[CountingModel] = []  # the models `looker` made, for the test to read their prompts


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def env(cache: Path, monkeypatch: pytest.MonkeyPatch) -> TextWorldEnv:
    monkeypatch.setenv("REFLEXION_CACHE", str(cache))
    return cooking_env("2")


def walkthrough(env: TextWorldEnv, task_id: str) -> list[str]:
    """The game's winning commands, from its metadata: for the tests only."""
    meta = json.loads(Path(env._paths[task_id]).with_suffix(".json").read_text())
    return list(meta["metadata"]["walkthrough"])


def trajectory(actions: list[str]) -> str:
    return "\n".join(f"> {action}\nThe game answers." for action in actions)


def looker() -> CountingModel:
    """A player that only ever looks around (so it never wins); it keeps every prompt."""
    usage = {"input_tokens": 10, "output_tokens": 1, "total_tokens": 11}
    model = CountingModel(messages=itertools.repeat(AIMessage("look", usage_metadata=usage)))
    MADE.append(model)
    return model


def test_two_games_are_two_tasks_of_one_family(env: TextWorldEnv) -> None:
    first, second = env.tasks()
    assert env.name == "cooking" and env.max_steps == 30
    assert (first.id, second.id) == ("cooking/r1-t1-g1-s1000", "cooking/r1-t1-g1-s1001")
    for task in (first, second):  # the same objective: the skills carry from game to game
        assert "cookbook" in task.prompt and "meal" in task.prompt
        assert task.prompt.endswith("You have at most 30 actions.")
    starts = []
    for task in (first, second):
        game = env.play(task)
        try:
            starts.append(game.reset())
        finally:
            game.close()
    assert starts[0].text != starts[1].text  # different seeds, different kitchens
    assert walkthrough(env, first.id)[-2:] == ["prepare meal", "eat meal"]


def test_games_are_made_once_and_reused(
    env: TextWorldEnv, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = sorted(p.name for p in (cache / "cooking").iterdir())  # and nothing half-made
    assert made == [f"r1-t1-g1-s{s}.{x}" for s in (1000, 1001) for x in ("json", "z8")]
    stamps = {p: p.stat().st_mtime_ns for p in (cache / "cooking").iterdir()}

    def no_making(self: Cooking, seed: int, path: Path) -> None:
        raise AssertionError(f"game {seed} was made again")

    monkeypatch.setattr(Cooking, "make", no_making)
    again = cooking_env("2,steps=12")  # the step limit is not part of the game: the same files
    assert [t.id for t in again.tasks()] == [t.id for t in env.tasks()] and again.max_steps == 12
    assert {p: p.stat().st_mtime_ns for p in (cache / "cooking").iterdir()} == stamps
    assert Cooking(recipe=2, take=2).slug() == "r2-t2-g1"  # other knobs, other files
    assert Cooking(go=6, skills=frozenset({"open", "cut"})).slug() == "r1-t1-g6-cut-open"


def test_the_walkthrough_wins_and_a_wrong_trajectory_does_not(env: TextWorldEnv) -> None:
    for task in env.tasks():
        wins = walkthrough(env, task.id)
        won = env.score(task, trajectory(wins))
        assert won.solved and won.value == 1.0 and won.feedback == f"Won in {len(wins)} actions."
        assert env.evaluate(task, trajectory(wins)) == won  # nothing is held out
        lost = env.score(task, trajectory(["look", "inventory", *wins[:-1]]))
        assert not lost.solved and lost.value < 1.0  # all but eating the meal
        assert env.evaluate(task, trajectory(["look"])) == env.score(task, trajectory(["look"]))
        assert not env.score(task, trajectory(["look"])).solved


def test_the_step_limit_cuts_the_replay(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFLEXION_CACHE", str(cache))
    short = cooking_env("1,steps=3")
    task = short.tasks()[0]
    score = short.score(task, trajectory(walkthrough(short, task.id)))
    assert not score.solved and score.feedback.startswith("Not won after 3 actions")


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("0", "cooking:N needs N between 1 and 200, got '0'"),
        ("201", "cooking:N needs N between 1 and 200"),
        ("2,go=2", "cooking knobs are recipe=1..5, take=0..5 (at most recipe), go=1|6|9|12"),
        ("2,recipe=6", "got 'recipe=6'"),
        ("2,cook=2", "got 'cook=2'"),
        ("2,fry=1", "got 'fry=1'"),
        ("2,recipe", "got 'recipe'"),
        ("2,take=3", "cooking: take=3 is more than recipe=1"),
    ],
)
def test_bad_specs_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arg: str, message: str
) -> None:
    argv = ["run", "--env", f"cooking:{arg}", "--strategy", "single"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_game_tw_cooking_cannot_make_is_one_line_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textworld.challenges.tw_cooking import cooking

    def broken(settings: dict[str, object], options: object) -> None:
        raise ValueError("Cooking games can only have {1, 6, 9, 12} rooms.")

    monkeypatch.setattr(cooking, "make", broken)
    monkeypatch.setenv("REFLEXION_CACHE", str(tmp_path / "cache"))
    with pytest.raises(UsageError, match=r"^cannot make a cooking game r1-t1-g6 \(seed 1000\)"):
        cooking_env("1,go=6")
    assert not list((tmp_path / "cache" / "cooking").iterdir())  # nothing half-made kept


def compare(out: Path, model: str, strategies: str, episodes: int) -> int:
    argv = ["compare", "--env", "cooking:1", "--strategies", strategies, "--model", model]
    argv += ["--episodes", str(episodes), "--embedder", "hash-64", "--no-progress"]
    return main([*argv, "--out", str(out)])


def test_a_compare_run_plays_a_game_and_writes_its_results(
    env: TextWorldEnv, tmp_path: Path
) -> None:
    assert compare(tmp_path / "run", "python:prompt_model:PromptModel", "single", 1) == 0
    [result] = RunFolder(tmp_path / "run").results()
    assert result.task_id == "cooking/r1-t1-g1-s1000" and result.strategy == "single"
    [played] = [s for s in RunFolder(tmp_path / "run").steps() if s.kind == "generate"]
    actions = [x[2:] for x in played.output.splitlines() if x.startswith("> ")]
    assert 1 <= len(actions) <= 30  # every one an admitted command, replayed for the score
    assert (tmp_path / "run" / "comparison.json").exists()


def test_no_prompt_of_a_run_shows_the_walkthrough(env: TextWorldEnv, tmp_path: Path) -> None:
    # subtle: the CLI imports `looker` by module name: its list, whatever pytest's import mode
    made = importlib.import_module("test_cooking").MADE
    made.clear()
    model = "python:test_cooking:looker"
    assert compare(tmp_path / "run", model, "single,self-refine,reflexion", 2) == 0
    [looked] = made
    prompts = ["\n".join(str(m.content) for m in p) for p in looked.prompts]
    assert len(prompts) > 30  # the plays, self-refine's feedback and replay, the reflection:
    assert any("diagnose failed attempts" in p for p in prompts)
    assert any("Play again from the start" in p for p in prompts)
    wins = walkthrough(env, env.tasks()[0].id)
    assert shows(wins, trajectory(wins)) and shows(wins, ", ".join(wins))  # it finds a leak
    assert not [p for p in prompts if shows(wins, p)]


def shows(wins: list[str], prompt: str) -> bool:
    """Whether `prompt` shows the walkthrough: its last steps, which a player who only looks
    never reaches (the game admits them once an ingredient is held), or the word itself."""
    text = prompt.lower()
    return "walkthrough" in text or any(step in text for step in wins[-2:])
