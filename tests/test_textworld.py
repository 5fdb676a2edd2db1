"""`--env textworld:N`: two tiny games made offline, played through the rollout actor by a
scripted model (a win and a loss), by Self-Refine and Reflexion, and by the real small model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import CountingModel, scripted
from langchain_core.messages import AIMessage, BaseMessage
from running import RunConfig, run

from envs.textgames import TextWorldEnv
from reflexion.cli import main
from reflexion.core.records import Attempt, Score, Task, Turn
from reflexion.core.runfolder import RunFolder

SPEC = "2,rooms=2,objects=3,length=2,steps=5"
# the test's own direct use of textworld (walkthrough) meets jericho's note on generated games
pytestmark = pytest.mark.filterwarnings("ignore:Game .* is not fully supported")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def env(cache: Path, monkeypatch: pytest.MonkeyPatch) -> TextWorldEnv:
    monkeypatch.setenv("REFLEXION_CACHE", str(cache))
    return TextWorldEnv.from_spec(SPEC)


def walkthrough(env: TextWorldEnv, task_id: str) -> list[str]:
    """The game's winning commands, read here for the test only (no actor ever reads them)."""
    import textworld

    infos = textworld.EnvInfos(policy_commands=True)
    game = textworld.start(env._paths[task_id], infos)
    try:
        return list(game.reset()["policy_commands"])
    finally:
        game.close()


def play(env: TextWorldEnv, tmp_path: Path, replies: list[str], strategy: str, **kw: Any):
    model = scripted(replies)
    config = RunConfig(
        env="textworld",
        strategies=(strategy,),
        out=str(tmp_path / "run"),
        tasks=1,
        concurrency=1,
        embedder="hash-64",
        **kw,
    )
    [result] = run(config, model=model, env=env)
    return result, model, RunFolder(tmp_path / "run").steps()


def test_games_are_made_once_and_cached(env: TextWorldEnv, cache: Path) -> None:
    made = sorted(p.name for p in (cache / "textworld").glob("*.z8"))
    assert made == ["r2-o3-q2-s1000.z8", "r2-o3-q2-s1001.z8"]
    again = TextWorldEnv.from_spec(SPEC)  # from the cache: the same tasks
    assert [t.prompt for t in again.tasks()] == [t.prompt for t in env.tasks()]
    assert not list((cache / "textworld").glob(".making-*"))  # nothing half-made left


def test_a_scripted_player_that_follows_the_walkthrough_wins(
    env: TextWorldEnv, tmp_path: Path
) -> None:
    task = env.tasks()[0]
    wins = walkthrough(env, task.id)
    result, model, steps = play(env, tmp_path, [*wins, "never asked"], "single")
    assert result.final_passed and result.best_score == 1.0
    assert len(model.prompts) == len(wins)  # one call per action, none after the win
    assert result.llm_calls == 1  # a rollout is one call of several steps
    [scored] = [s for s in steps if s.kind == "score"]
    assert scored.output == f"Won in {len(wins)} actions."
    first = "\n".join(str(m.content) for m in model.prompts[0])
    assert "Commands:" in first and task.prompt.split("\n")[0] in first


def test_a_player_that_wanders_loses_and_reflexion_reflects_on_the_trajectory(
    env: TextWorldEnv, tmp_path: Path
) -> None:
    task = env.tasks()[0]
    wins = walkthrough(env, task.id)
    replies = ["look"] * 5 + ["LESSON: do what the task says, in order."] + wins
    result, model, steps = play(env, tmp_path, replies, "reflexion", episodes=2)
    assert result.final_passed and result.attempts == 2
    first = [s for s in steps if s.kind == "score"][0]
    assert first.output == "Not won after 5 actions; score 0 of 1."  # the step limit
    reflect = "\n".join(str(m.content) for m in model.prompts[5])
    assert "> look" in reflect and "Not won after 5 actions" in reflect
    second_game = "\n".join(str(m.content) for m in model.prompts[6])
    assert "LESSON: do what the task says" in second_game  # recalled at the next start


class ShortContext(CountingModel):
    """Refuses a prompt of more than `most` messages, as llama.cpp refuses one over its context."""

    most: int = 6
    refused: int = 0

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        if len(messages) > self.most:
            self.refused += 1
            msg = f"request ({len(messages)} messages) exceeds the available context size"
            raise ValueError(msg)
        return super()._generate(messages, *args, **kwargs)


def test_a_play_longer_than_the_context_leaves_out_its_oldest_turns_and_goes_on(
    env: TextWorldEnv, tmp_path: Path
) -> None:
    usage = {"input_tokens": 10, "output_tokens": 3, "total_tokens": 13}
    model = ShortContext(messages=iter([AIMessage("look", usage_metadata=usage)] * 5), prompts=[])
    config = RunConfig(
        env="textworld", strategies=("single",), out=str(tmp_path / "run"), tasks=1,
        concurrency=1, embedder="hash-64",
    )  # fmt: skip
    [result] = run(config, model=model, env=env)
    steps = RunFolder(tmp_path / "run").steps()
    [scored] = [s for s in steps if s.kind == "score"]
    assert scored.output == "Not won after 5 actions; score 0 of 1."  # the step limit, not cut
    [played] = [s for s in steps if s.kind == "generate"]
    assert played.error is None and played.data["shortened"] == model.refused  # in the trace
    assert result.llm_calls == 1 and result.best_candidate.count("> look") == 5
    assert model.refused >= 1 and all(len(p) <= 6 for p in model.prompts)
    start = [m.content for m in model.prompts[0]]
    assert all([m.content for m in p[:2]] == start for p in model.prompts)  # goal and start kept


def test_self_refine_plays_again_from_the_start_with_the_feedback(
    env: TextWorldEnv, tmp_path: Path
) -> None:
    task = env.tasks()[0]
    wins = walkthrough(env, task.id)
    replies = ["look"] * 5 + ["Follow the task's steps."] + wins
    result, model, _ = play(env, tmp_path, replies, "self-refine", episodes=2)
    assert result.final_passed and result.attempts == 2
    refine = "\n".join(str(m.content) for m in model.prompts[6])
    assert "Play 1: look, look, look, look, look" in refine
    assert "Feedback: Follow the task's steps." in refine and "Play again from the start" in refine


@pytest.mark.parametrize(
    ("arg", "message"),
    [("0", "textworld:N needs N between 1 and 200"), ("2,rooms=x", "textworld knobs are")],
)
def test_bad_arguments_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arg: str, message: str
) -> None:
    argv = ["run", "--env", f"textworld:{arg}", "--strategy", "single"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_the_small_model_plays_a_game(env: TextWorldEnv, tmp_path: Path) -> None:
    from reflexion.models.registry import load_model

    config = RunConfig(
        env="textworld",
        strategies=("single",),
        out=str(tmp_path / "run"),
        tasks=1,
        model="smollm2-135m",
    )
    [result] = run(config, model=load_model("smollm2-135m", "none"), env=env)
    steps = RunFolder(tmp_path / "run").steps()
    [played] = [s for s in steps if s.kind == "generate"]
    actions = [x[2:] for x in played.output.splitlines() if x.startswith("> ")]
    assert 1 <= len(actions) <= 5 and result.output_tokens > 0
    game = env.play(env.tasks()[0])
    try:
        assert actions[0] in game.reset().actions  # every action is one the game admits
    finally:
        game.close()


def test_knobs_textworld_cannot_build_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REFLEXION_CACHE", str(tmp_path / "cache"))
    argv = ["run", "--env", "textworld:1,rooms=1,objects=1,length=100", "--strategy", "single"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "cannot make a textworld game with rooms=1, objects=1, length=100" in err
    assert len(err.strip().splitlines()) == 1
    assert not list((tmp_path / "cache" / "textworld").glob("*"))  # nothing half-made kept


def test_the_cheatsheet_learns_from_one_game_and_the_next_game_plays_with_it(
    env: TextWorldEnv, tmp_path: Path
) -> None:
    """A design that learns across tasks, on games: the first game's trajectory goes to the
    distill prompt, and the bullet it adds is in the system message of every step of the next.
    (`insights` writes rules from successes only, as ExpeL does: a lost game teaches it none.)"""
    add = '{"reason": "I looked only.", "operations": [{"op": "add", "text": "Read the goal."}]}'
    keep = '{"reason": "It held.", "operations": []}'
    replies = ["look"] * 5 + [add] + ["look"] * 5 + [keep]
    model = scripted(replies)
    config = RunConfig(
        env="textworld",
        strategies=("cheatsheet",),
        out=str(tmp_path / "run"),
        episodes=1,
        order="stream",
        embedder="hash-64",
    )
    results = run(config, model=model, env=env)
    assert [r.attempts for r in results] == [1, 1]
    distill = "\n".join(str(m.content) for m in model.prompts[5])
    assert "> look" in distill and "failed the check: Not won after 5 actions" in distill
    first, second = model.prompts[0], model.prompts[6]
    assert "Read the goal." not in str(first[0].content)
    assert "[1] Read the goal." in str(second[0].content)  # the system message
    steps = RunFolder(tmp_path / "run").steps()
    assert [s.data.get("memory_tokens", 0) > 0 for s in steps if s.kind == "generate"] == [
        False,
        True,
    ]


def test_best_of_n_on_a_game_samples_its_later_plays(env: TextWorldEnv, tmp_path: Path) -> None:
    """resample's second play is a sample (at --temperature, its own seed), not the greedy play
    again from the run's cache."""
    result, model, steps = play(env, tmp_path, ["look"] * 10, "resample", episodes=2)
    assert result.attempts == 2 and len(model.prompts) == 10  # both plays asked the model
    plays = [s for s in steps if s.kind == "generate"]
    assert [s.data.get("sample", 0) for s in plays] == [0, 1]
    assert not plays[1].data["reused"]


def test_self_refine_sampled_on_a_game_samples_its_feedback_and_its_second_play(
    env: TextWorldEnv, tmp_path: Path
) -> None:
    """The refined play is a sample (each of its steps at --temperature), not the greedy play
    again from the run's cache, and so is the feedback on the first play."""
    replies = ["look"] * 5 + ["Go east first."] + ["look"] * 5
    result, model, steps = play(env, tmp_path, replies, "self-refine-sampled", episodes=2)
    assert result.attempts == 2 and len(model.prompts) == 11  # both plays and the feedback
    [feedback] = [s for s in steps if s.kind == "feedback"]
    [refined] = [s for s in steps if s.kind == "refine"]
    assert (feedback.data.get("sample"), refined.data.get("sample")) == (102, 2)
    assert not refined.data["reused"] and not feedback.data["reused"]


def test_a_long_play_shows_the_distill_prompt_its_start_and_its_end() -> None:
    from reflexion.actor.prompts import ANSWER_CHARS, distill_messages

    moves = "\n".join(f"> go north\nYou are in room {n}." for n in range(200))
    play = Attempt(1, f"You wake up.\n{moves}\n> eat meal\nYou won!", Score(1.0, True, "Won."))
    shown = distill_messages(Task("g", "Cook and eat the meal."), "item", [play], [])[-1].content
    assert "You wake up." in shown and shown.count("[...]") == 1 and "You won!" in shown
    assert len(shown) < ANSWER_CHARS + 1000  # bounded: the middle is left out


def long_play(n: int, start: str, end: str) -> Attempt:
    """A lost play of 500 moves, far longer than a prompt may show."""
    moves = "\n".join(f"> look\nYou are in the kitchen, {k}." for k in range(500))
    return Attempt(n, f"{start}\n{moves}\n> eat meal\n{end}", Score(0.0, False, "Lost."))


def test_a_reflection_on_a_long_play_sees_its_start_and_its_end(env: TextWorldEnv) -> None:
    import asyncio

    from reflexion.actor.chat import ChatActor
    from reflexion.actor.rollout import PLAY_CHARS, RolloutActor

    play = long_play(1, "You wake up.", "You lost.")
    model = scripted(["Read the cookbook first."])
    call = asyncio.run(RolloutActor(ChatActor(model), env).reflect(Task("g", "Cook."), play))
    assert call.output == "Read the cookbook first." and not call.error
    shown = "\n".join(str(m.content) for m in model.prompts[0])
    assert "You wake up." in shown and "You lost." in shown and shown.count("[...]") == 1
    assert len(shown) < PLAY_CHARS + 2000 < len(play.candidate)  # the middle is left out


def test_self_refine_feedback_on_long_plays_sees_each_play_s_ends_within_the_bound(
    env: TextWorldEnv,
) -> None:
    import asyncio

    from reflexion.actor.chat import ChatActor
    from reflexion.actor.rollout import PLAY_CHARS, RolloutActor

    plays = [long_play(n, f"Play {n} starts.", f"Play {n} lost.") for n in (1, 2)]
    history = [Turn(plays[0], "Find the knife first."), Turn(plays[1])]
    model = scripted(["Slice the carrot before you cook it."])
    call = asyncio.run(RolloutActor(ChatActor(model), env).feedback(Task("g", "Cook."), history))
    assert call.output == "Slice the carrot before you cook it." and not call.error
    shown = "\n".join(str(m.content) for m in model.prompts[0])
    for n in (1, 2):  # every play keeps its start and its end; the earlier feedback stays
        assert f"Play {n} starts." in shown and f"Play {n} lost." in shown
    assert "Find the knife first." in shown and shown.count("[...]") == 2
    assert len(shown) < PLAY_CHARS + 2000 < 2 * len(history[0].attempt.candidate)
