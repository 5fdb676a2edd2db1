"""The designs that learn across tasks (exemplars, insights, cheatsheet, bank, proactive) against
a scripted fake chat model on the two keyword tasks, streamed k0 then k1: what each stores, what
the next task is shown, what a malformed reply does, and that the held-out signal stays out."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from conftest import SECRET, KeywordEnv, schema_scripted, scripted
from running import RunConfig, run

from envs.jsonl.env import JsonlEnv
from memory import ChromaMemory, HashEmbedder
from reflexion.cli import main
from reflexion.core.lesson_records import Reflection
from reflexion.core.records import Attempt, Score, Task
from reflexion.strategies import bank, cheatsheet
from reflexion.trial.board import undo_interrupted


def stream(tmp_path: Path, strategy: str, replies: list[str], episodes: int = 2, **more):
    model = scripted(replies)
    config = RunConfig(
        env="keywords",
        strategies=(strategy,),
        out=str(tmp_path / "run"),
        episodes=episodes,
        order="stream",
        # the free-text replies below (json: tests below), and the unit tests' embedder
        **({"curation": "text", "embedder": "hash-64"} | more),
    )
    results = {r.task_id: r for r in run(config, model=model, env=KeywordEnv())}
    prompts = ["\n".join(str(m.content) for m in p) for p in model.prompts]
    assert all(SECRET not in p for p in prompts)  # the held-out check never reaches a prompt
    return results, prompts, tmp_path / "run"


def ops(*operations: dict) -> str:
    """A curator's JSON reply (--curation json, the default)."""
    return json.dumps({"reason": "what the attempt shows", "operations": list(operations)})


def steps(folder: Path, kind: str) -> list[dict]:
    lines = (folder / "trace.jsonl").read_text().splitlines()
    return [s for s in map(json.loads, lines) if s["kind"] == kind]


def stored(folder: Path) -> list[Reflection]:
    with ChromaMemory.open(folder / "memory") as memory:
        return memory.reflections()


def test_exemplars_shows_a_solved_task_to_the_next(tmp_path: Path) -> None:
    results, prompts, folder = stream(tmp_path, "exemplars", ["apple river", "cloud stone"])
    assert results["k0"].final_passed is False and results["k1"].attempts == 1
    assert "Solved examples of similar tasks" not in prompts[0]  # nothing learned yet
    assert "Task:\nWrite one sentence using the words: apple, river." in prompts[1]
    assert "Solution:\napple river" in prompts[1] and prompts[1].endswith("cloud, stone.")
    [kept, _] = stored(folder)
    assert kept.kind == "exemplar" and kept.task_id == "k0"


def test_exemplars_stores_only_what_its_check_passed(tmp_path: Path) -> None:
    _, prompts, folder = stream(tmp_path, "exemplars", ["apple"] * 2 + ["cloud stone"])
    assert "Solved examples" not in prompts[2]
    assert [r.task_id for r in stored(folder)] == ["k1"]


def test_insights_adds_a_rule_from_a_failure_and_shows_it_in_the_system_prompt(
    tmp_path: Path,
) -> None:
    replies = ["apple", "apple river", "ADD: Use every listed word.\nthis line is chatter"]
    results, prompts, folder = stream(tmp_path, "insights", [*replies, "cloud stone"])
    assert results["k1"].final_passed is False and results["k1"].attempts == 1
    assert "Attempt 1 (failed the check: missing words: river)" in prompts[2]
    system = prompts[3].split("Write one sentence")[0]
    assert "Rules learned from earlier tasks" in system and "1. Use every listed word." in system
    [rule] = [r for r in stored(folder) if r.kind == "rule"]
    assert rule.votes == 2
    assert [s["output"] for s in steps(folder, "unparsed")] == ["this line is chatter"]
    assert "add" in steps(folder, "revise")[0]["output"]


def test_insights_drops_a_rule_voted_down_to_zero_and_keeps_its_history(tmp_path: Path) -> None:
    replies = ["apple", "apple river", "ADD: Use every listed word."]
    replies += ["cloud", "cloud stone", "DOWNVOTE 1\nDOWNVOTE 1\nEDIT 7: no such rule"]
    _, _, folder = stream(tmp_path, "insights", replies)
    assert [r for r in stored(folder) if r.kind == "rule"] == []  # 2 votes, down twice
    notes = [s["output"] for s in steps(folder, "revise")]
    assert notes[-1].endswith("0 votes, dropped") and "1 votes" in notes[-2]
    rid = steps(folder, "revise")[0]["data"]["id"]
    code = main(["memory", "history", str(folder), rid])
    assert code == 0


def test_cheatsheet_is_rewritten_and_a_reply_without_a_sheet_keeps_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replies = ["apple river", "<sheet>Use all the listed words.</sheet>", "cloud stone", "no tags"]
    _, prompts, folder = stream(tmp_path, "cheatsheet", replies)
    assert "Current cheatsheet:\n(empty)" in prompts[1]
    system = prompts[2].split("Write one sentence")[0]
    assert "Your cheatsheet" in system and "Use all the listed words." in system
    [sheet] = [r for r in stored(folder) if r.kind == "cheatsheet"]
    assert sheet.text == "Use all the listed words."
    assert [s["output"] for s in steps(folder, "unparsed")] == [
        "no <sheet>...</sheet> in the reply"
    ]
    capsys.readouterr()
    assert main(["memory", "list", str(folder), "--kind", "cheatsheet"]) == 0
    assert "Use all the listed words." in capsys.readouterr().out


def test_bank_distills_items_from_a_failure_for_the_next_task(tmp_path: Path) -> None:
    item = "TITLE: All the words\nWHEN: a task lists words\nDO: use each one."
    _, prompts, folder = stream(tmp_path, "bank", ["apple", item, "cloud stone", "nothing"], 1)
    assert "failed the check. Consider why, and what would prevent" in prompts[1]  # a lesson
    assert "Do not embed specific names, queries, or literal string" in prompts[1]  # as theirs
    assert "Notes from the most similar earlier task" in prompts[2]
    assert "All the words. When: a task lists words. Do: use each one." in prompts[2]
    kinds = sorted(r.kind for r in stored(folder))
    assert kinds == ["item"]  # the second reply held no item: noted, nothing stored
    assert len(steps(folder, "unparsed")) == 1


def test_bank_scaled_runs_every_candidate_and_contrasts_them_in_one_curator_call(
    tmp_path: Path,
) -> None:
    item = "TITLE: All the words\nWHEN: a task lists words\nDO: use each one."
    replies = ["apple river", "apple", item, "cloud", "stone", "nothing"]
    results, prompts, folder = stream(tmp_path, "bank-scaled", replies, 2)
    # the first candidate passed, and the second still ran (bank stops at the first pass)
    assert results["k0"].attempts == 2 and results["k0"].best_score == 1.0
    assert results["k0"].best_episode == 1 and results["k0"].best_candidate == "apple river"
    curator = prompts[2]
    assert "Attempt 1 (passed the check" in curator and "Attempt 2 (failed the check" in curator
    assert "The 2 attempts above are tries at this same task, and 1 of them passed" in curator
    assert "Compare and contrast them" in curator
    assert "All the words. When: a task lists words. Do: use each one." in prompts[3]
    assert len(steps(folder, "distill")) == 2  # one curator call a task, not one an attempt
    [kept] = stored(folder)
    assert (kept.kind, kept.episode, kept.score) == ("item", 1, 1.0)  # kept with the pass
    assert "and none of them passed" in prompts[5]  # k1: two failures compared


def test_bank_scaled_words_its_comparison_for_none_some_and_all_passed() -> None:
    task = Task("t", "Write one sentence using the words: apple, river.")
    ok, bad = Score(1.0, True, "all words used"), Score(0.5, False, "missing words: river")

    def asked(*scores: Score) -> str:
        tried = [Attempt(n, "x", s) for n, s in enumerate(scores, 1)]
        return bank.asking(bank.JSON_REQUEST)(task, "", tried, [])

    assert "and none of them passed the check. Compare them: what they got wrong" in asked(bad, bad)
    assert "and 1 of them passed the check. Compare and contrast them" in asked(bad, ok)
    assert "all of them passed the check. Compare them: what they share" in asked(ok, ok, ok)
    assert "why the attempts passed or failed" in asked(ok, ok)
    one = asked(bad)  # one attempt: bank's own request, word for word
    assert "The attempt above failed the check" in one and "why the attempt passed" in one
    assert "attempts above" not in one


def test_bank_asks_in_reasoningbanks_words_for_up_to_three_items() -> None:
    """ReasoningBank's single-trajectory prompts (memory_instruction.py): at most 3 items, no
    repeats, concrete procedures (a failure's: recovery procedures), none of the task's names,
    queries or strings; they ban no code, and neither does this."""
    task = Task("t", "Write one sentence using the words: apple, river.")
    worked = [Attempt(1, "apple river", Score(1.0, True, "all words used"))]
    failed = [Attempt(1, "apple", Score(0.5, False, "missing words: river"))]
    for words in (bank.JSON_REQUEST, bank.REQUEST):
        success, failure = (bank.asking(words)(task, "", tried, []) for tried in (worked, failed))
        for asked in (success, failure):
            assert "Write at most 3 notes" in asked and "code" not in asked
            assert "You must not repeat similar or overlapping notes." in asked
            assert "Do not embed specific names, queries, or literal string contents" in asked
        assert "Prefer concrete, actionable procedures over abstract principles." in success
        assert "actionable recovery procedures over abstract principles." in failure
    three = [{"title": t, "when": "words are listed", "do": "use them"} for t in "ABC"]
    texts, bad = bank.json_items(json.dumps({"reason": "r", "items": three}))
    assert [t[0] for t in texts] == ["A", "B", "C"] and bad == 0
    assert bank.SCHEMA["properties"]["items"]["maxItems"] == 3


def test_bank_samples_its_extraction_at_temperature_one_and_other_curators_stay_greedy() -> None:
    """As ReasoningBank's induce_memory.py samples its items (temperature 1.0), with a seed of
    its own so a rerun asks the same; a rule's curator is still greedy."""
    import asyncio

    from reflexion.actor.chat import ChatActor
    from reflexion.core.lesson_records import Kind

    model = schema_scripted([items("A"), ops({"op": "add", "text": "Check."}), "TITLE: A"])
    task, failed = Task("k0", "Use apple."), Attempt(1, "pear", Score(0.0, False, "no apple"))
    asyncio.run(ChatActor(model, seed=2).distill(task, Kind.ITEM, [failed], []))
    asyncio.run(ChatActor(model, seed=2).distill(task, Kind.RULE, [failed], []))
    asyncio.run(ChatActor(model, seed=2, curation="text").distill(task, Kind.ITEM, [failed], []))
    item, rule, text = model.bound
    assert (item["temperature"], item["seed"]) == (1.0, 2000) and "json_schema" in item
    assert rule["temperature"] == 0.0 and "seed" not in rule
    assert (text["temperature"], text["seed"]) == (1.0, 2000) and "json_schema" not in text


def test_frozen_memory_recalls_but_stores_nothing(tmp_path: Path) -> None:
    _, _, folder = stream(tmp_path, "exemplars", ["apple river", "cloud stone"], frozen_memory=True)
    assert stored(folder) == []
    assert [s["data"].get("frozen") for s in steps(folder, "remember")] == [True, True]


def test_proactive_scores_the_final_answer_and_records_the_draft(tmp_path: Path) -> None:
    reply = "<think>apple<refine>it needs river too</refine></think><answer>apple river</answer>"
    results, prompts, folder = stream(tmp_path, "proactive", [reply, "cloud stone"], 1)
    assert "<refine>" in prompts[0] and "<answer>" in prompts[0]
    assert results["k0"].best_candidate == "apple river" and results["k0"].best_score == 1.0
    [draft] = steps(folder, "draft")
    assert (draft["output"], draft["data"]["refines"], draft["data"]["solved"]) == (
        "apple",
        1,
        False,
    )
    assert [s["data"]["refines"] for s in steps(folder, "refined")] == [1, 0]


def test_a_resume_undoes_an_interrupted_trials_board_changes(tmp_path: Path) -> None:
    memory = ChromaMemory(tmp_path / "m", embedder=HashEmbedder(64))
    rule = Reflection(
        "r1",
        "Use every word.",
        "run",
        "insights",
        "keywords",
        "k0",
        0,
        2,
        1.0,
        1.0,
        kind="rule",
        votes=2,
    )
    memory.add([rule])
    upvoted = Reflection.from_dict(rule.to_dict() | {"votes": 3})
    added = Reflection.from_dict(rule.to_dict() | {"id": "r2", "text": "Another."})
    memory.revise(upvoted, "upvote")
    memory.add([added])
    cut = [
        {"kind": "revise", "strategy": "insights", "data": {"id": "r1", "before": rule.to_dict()}},
        {"kind": "revise", "strategy": "insights", "data": {"id": "r2", "before": None}},
    ]
    undo_interrupted(cut, memory)
    assert memory.reflections() == [rule]  # each vote counted once when the trial runs again
    memory.close()


def test_the_chroma_filter_asks_for_exactly_the_kinds_a_scope_names(tmp_path: Path) -> None:
    memory = ChromaMemory(tmp_path / "m", embedder=HashEmbedder(64))
    base = Reflection("r", "use every word", "old", "bank", "keywords", "k0", 0, 1, 0.0, 1.0)
    kinds = ("reflection", "exemplar", "item")
    memory.add([Reflection.from_dict(base.to_dict() | {"id": k, "kind": k}) for k in kinds])
    from reflexion.core.lesson_records import RecallScope

    def filtered(*asked: str) -> list[str]:  # the metadata filter alone, as a query sends it
        where = RecallScope("keywords", "k1", "new", "bank", 0, 1, "global", kinds=asked).where()
        found = memory._collection.get(where=where)["ids"]
        return sorted(found)

    assert filtered("reflection") == ["reflection"]
    assert filtered("reflection", "exemplar") == ["exemplar", "reflection"]
    assert filtered("item") == ["item"]
    assert len(memory.reflections()) == 3
    memory.close()


def test_a_rule_dropped_at_zero_stays_dropped_for_the_rest_of_the_reply(tmp_path: Path) -> None:
    replies = ["apple", "apple river", "ADD: Use every listed word."]
    replies += ["cloud", "cloud stone", "DOWNVOTE 1\nDOWNVOTE 1\nUPVOTE 1"]
    _, _, folder = stream(tmp_path, "insights", replies)
    assert [r for r in stored(folder) if r.kind == "rule"] == []


def test_a_parallel_run_shows_no_task_what_its_own_run_stored(tmp_path: Path) -> None:
    model = scripted(["apple river", "cloud", "cloud stone"])
    config = RunConfig(
        env="keywords",
        strategies=("exemplars",),
        out=str(tmp_path / "run"),
        episodes=2,
        embedder="hash-64",
        concurrency=1,
    )
    run(config, model=model, env=KeywordEnv())
    prompts = ["\n".join(str(m.content) for m in p) for p in model.prompts]
    assert not any("Solved examples" in p for p in prompts)  # no task is over in a parallel run


def test_inherited_rules_neither_fill_the_board_nor_change_and_credit_stays_frozen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared = tmp_path / "shared"
    old = ChromaMemory(shared, embedder=HashEmbedder(64))
    rules = [
        Reflection(
            f"old{n}",
            f"Old rule {n}.",
            "old-run",
            "insights",
            "keywords",
            "k9",
            0,
            1,
            1.0,
            1.0,
            kind="rule",
            votes=2,
        )
        for n in range(10)
    ]
    old.add(rules)
    old.close()
    replies = ["apple", "apple river", "ADD: Use every listed word.\nUPVOTE 1", "cloud stone"]
    _, prompts, folder = stream(tmp_path, "insights", replies, memory=str(shared))
    assert "1. Old rule" in prompts[0]  # inherited rules are shown
    with ChromaMemory.open(shared) as memory:
        lessons = {r.id: r for r in memory.reflections()}
        credit = memory.credits()
    assert all(lessons[r.id] == r for r in rules)  # another run's rules are not changed
    [mine] = [r for r in lessons.values() if r.run_id != "old-run" and r.kind == "rule"]
    assert mine.text == "Use every listed word." and mine.votes == 2
    capsys.readouterr()
    assert main(["memory", "history", str(folder), mine.id]) == 0
    assert "import" in capsys.readouterr().out  # the rule's first line in its history
    frozen = tmp_path / "frozen"
    before = {r.id: r for r in rules}
    model = scripted(["apple", "apple river"])
    config = RunConfig(
        env="keywords",
        strategies=("insights",),
        out=str(frozen),
        episodes=2,
        embedder="hash-64",
        order="stream",
        memory=str(shared),
        frozen_memory=True,
        tasks=1,
    )
    run(config, model=model, env=KeywordEnv())
    with ChromaMemory.open(shared) as memory:
        assert memory.credits() == credit  # no credit count changed either
        assert all(memory.get(i) == r for i, r in before.items())


def test_a_strategy_of_your_own_keeps_and_recalls_a_kind_of_its_own(tmp_path: Path) -> None:
    """Lesson kinds are a type for the built-in designs, but a store holds plain strings: a
    strategy registered by a user may keep and recall a kind the package does not know."""
    from reflexion import Strategy

    async def notes(trial) -> None:
        recalled = await trial.recall(1, "note")
        call = await trial.ask(trial.actor.generate(trial.task, (), sample=0), 1)
        attempt = await trial.attempt(call, 1)
        await trial.keep("note", f"seen {len(recalled)} notes", attempt)

    mine = Strategy("notes", notes, "chroma", help="keeps a note per task")
    config = RunConfig(
        env="keywords",
        strategies=("notes",),
        out=str(tmp_path / "run"),
        episodes=1,
        embedder="hash-64",
        order="stream",
    )
    run(config, model=scripted(["apple", "cloud"]), env=KeywordEnv(), strategies=(mine,))
    kept = stored(tmp_path / "run")
    assert sorted((r.kind, r.text) for r in kept) == [
        ("note", "seen 0 notes"),
        ("note", "seen 1 notes"),
    ]
    recalls = steps(tmp_path / "run", "recall")
    assert [len(s["data"]["hits"]) for s in recalls] == [0, 1]
    assert all(s["data"]["kind"] == "note" for s in recalls)


def test_insights_asks_a_pair_to_compare_and_a_chunk_of_successes_to_critique() -> None:
    """ExpeL's two critiques: a failure against the success of the same task, and the successes
    of several tasks, each shown with its own task (not the asking task's prompt)."""
    from reflexion.core.records import Attempt, Score, Task
    from reflexion.strategies import insights

    task = Task("k0", "Use the word apple.")
    failed = Attempt(1, "pear", Score(0.0, False, "missing: apple"))
    solved = Attempt(2, "apple", Score(1.0, True, "all words used"))
    chunk = [Attempt(n, f"Task:\nt{n}\n\nSolution:\ns{n}", Score(1.0, True)) for n in (1, 2)]
    assert insights.RULES.distill is not None
    for request in (insights.RULES.distill.request, insights.RULES.distill.text):  # both forms
        pair = request(task, "(attempts)", [failed, solved], [])
        successes = request(task, "(successes)", chunk, [])
        assert "Compare the failed attempt with the one that succeeded" in pair
        assert "Task:\nUse the word apple.\n\n(attempts)" in pair
        assert "Look at the successful attempts at the tasks above" in successes
        assert "(successes)" in successes and "Compare" not in successes
        assert "Use the word apple." not in successes


def test_exemplars_put_the_most_similar_shot_last_nearest_the_task() -> None:
    """StreamBench's Self-StreamICL places the most similar shot last; recall gives them most
    similar first, and a bound on memory still drops the least similar."""
    from reflexion.actor.memory_text import place
    from reflexion.core.lesson_records import Kind, Reflection

    def shot(n: int) -> Reflection:
        text = f"Task:\nt{n}\n\nSolution:\ns{n}"
        return Reflection(
            f"e{n}", text, "r", "exemplars", "e", f"t{n}", 0, 1, 1.0, 0.0, kind=Kind.EXEMPLAR.value
        )

    block = place([shot(1), shot(2), shot(3)], tokens=1000).before_task
    assert block.index("s3") < block.index("s2") < block.index("s1")  # nearest (s1) last
    assert block.rstrip().endswith("s1")
    cut = place([shot(1), shot(2), shot(3)], tokens=12).before_task
    assert "s1" in cut and "s3" not in cut  # the bound drops the least similar


def test_a_curator_model_writes_the_rules_that_the_answering_model_uses(tmp_path: Path) -> None:
    """--curator-model (ExpeL, MemP): one model writes the memory for other tasks, another
    answers with it. The answering model never gets a distill prompt; its calls and the
    curator's count in the trial's cost alike."""
    answering = scripted(["apple", "apple river", "cloud stone"])
    curator = scripted([ops({"op": "add", "text": "Use every listed word."})])
    config = RunConfig(
        env="keywords",
        strategies=("insights",),
        out=str(tmp_path / "run"),
        episodes=2,
        embedder="hash-64",
        order="stream",
    )
    results = run(config, model=answering, curator=curator, env=KeywordEnv())
    asked = ["\n".join(str(m.content) for m in p) for p in answering.prompts]
    curated = ["\n".join(str(m.content) for m in p) for p in curator.prompts]
    assert len(curated) == 1 and "Change the rules" in curated[0]
    assert not any("Change the rules" in p for p in asked)
    assert "1. Use every listed word." in asked[-1]  # the curator's rule, shown to the answerer
    [rule] = [r for r in stored(tmp_path / "run") if r.kind == "rule"]
    assert rule.text == "Use every listed word."
    assert sum(r.llm_calls for r in results) == 4  # 3 answers and 1 curator call


def json_stream(tmp_path: Path, strategy: str, replies: list[str], episodes: int = 2):
    return stream(tmp_path, strategy, replies, episodes, curation="json")


def test_insights_under_json_applies_operations_and_records_an_unparsed_reply(
    tmp_path: Path,
) -> None:
    """The default curation: a reason, then operations; a reply that holds no JSON object
    changes nothing and is said in the trace."""
    add = ops({"op": "add", "text": "Use every listed word."})
    replies = ["apple", "apple river", add, "cloud", "cloud stone", "I will not."]
    _, prompts, folder = json_stream(tmp_path, "insights", replies)
    assert 'Reply with a JSON object: "reason"' in prompts[2] and "ADD:" not in prompts[2]
    assert "1. Use every listed word." in prompts[3].split("Write one sentence")[0]
    [rule] = [r for r in stored(folder) if r.kind == "rule"]
    assert rule.text == "Use every listed word." and rule.votes == 2
    assert [s["output"] for s in steps(folder, "unparsed")] == [
        "no JSON object of operations in the reply"
    ]


def test_cheatsheet_under_json_is_edited_by_delta_operations_never_rewritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ACE's curation: bullets added, edited and removed by number; an operation naming a bullet
    that is not there is skipped and said, the others applied."""
    first = ops({"op": "add", "text": "List the words."}, {"op": "add", "text": "Use each."})
    second = ops(
        {"op": "edit", "bullet": 2, "text": "Use each word once."},
        {"op": "remove", "bullet": 1},
        {"op": "edit", "bullet": 7, "text": "not there"},
    )
    _, prompts, folder = json_stream(tmp_path, "cheatsheet", ["apple river", first, "x", second], 1)
    assert "Current cheatsheet:\n[1] List the words.\n[2] Use each." in prompts[3]
    assert "look through it for a strategy" in prompts[2]  # DC's usage instruction
    [sheet] = [r for r in stored(folder) if r.kind == "cheatsheet"]
    assert sheet.text == "[1] Use each word once."
    [skipped] = steps(folder, "skipped")  # the reply was read: skipped, not unparsed
    assert skipped["output"].startswith("skipped edit, no such bullet: {'op': 'edit', 'bullet': 7")
    assert steps(folder, "unparsed") == []
    assert main(["memory", "history", str(folder), sheet.id]) == 0
    assert main(["report", str(folder)]) == 0
    printed = capsys.readouterr().out  # 1 operation skipped, 0 replies unparsed
    assert re.search(r"cheatsheet: 1 added, 1 rewritten\s+1\s+0\s+1 of 2 \(1 in part\)\n", printed)


def test_a_cheatsheet_reply_that_would_empty_the_sheet_leaves_it_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The 1.5B model sent "add (a copy), edit 1, remove 1" to a one-bullet sheet ten times on
    the SQL stream: the sheet stays, and a `skipped` step says why, so the report counts the
    reply as one that changed nothing instead of losing it."""
    first = ops({"op": "add", "text": "List the words."})
    second = ops({"op": "edit", "bullet": 1, "text": "Use each."}, {"op": "remove", "bullet": 1})
    _, _, folder = json_stream(tmp_path, "cheatsheet", ["apple river", first, "x", second], 1)
    [sheet] = [r for r in stored(folder) if r.kind == "cheatsheet"]
    assert sheet.text == "[1] List the words."
    [skipped] = steps(folder, "skipped")
    assert skipped["output"].splitlines() == [
        "skipped edit, replaced by a later one: {'op': 'edit', 'bullet': 1, 'text': 'Use each.'}",
        "skipped the reply's edits: they would leave the sheet empty",
    ]
    assert main(["report", str(folder)]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"cheatsheet: 1 added\s+2\s+0\s+1 of 2 \(1 changed nothing\)\n", printed)


def test_a_cheatsheet_edit_that_copies_another_bullet_is_skipped(tmp_path: Path) -> None:
    """On the SQL stream 16 of 159 replies left a copy of a bullet on the sheet by an edit (19
    copies), and the sheet the last question saw held one bullet five times: an edit may not copy
    a bullet, as an add may not, while the reply's other operations still apply."""
    first = ops({"op": "add", "text": "List the words."}, {"op": "add", "text": "Use each."})
    second = ops(
        {"op": "edit", "bullet": 2, "text": "List the words."},
        {"op": "add", "text": "Keep it short."},
    )
    _, _, folder = json_stream(tmp_path, "cheatsheet", ["apple river", first, "x", second], 1)
    [sheet] = [r for r in stored(folder) if r.kind == "cheatsheet"]
    assert sheet.text == "[1] List the words.\n[2] Use each.\n[3] Keep it short."
    [skipped] = steps(folder, "skipped")
    assert skipped["output"].startswith("skipped edit, a bullet already there: {'op': 'edit'")


@pytest.mark.parametrize(
    ("operations", "sheet"),
    [
        ([("edit", 2, "A"), ("edit", 1, "X")], "X|A|C"),
        ([("edit", 2, "A"), ("remove", 1, "")], "A|C"),
        ([("edit", 1, "B"), ("edit", 2, "A")], "B|A|C"),  # a swap
        ([("edit", 1, "B"), ("edit", 2, "A"), ("edit", 3, "A")], "B|A|C"),
        ([("edit", 2, "C"), ("edit", 3, "C")], "A|B|C"),
        ([("edit", 1, "Z"), ("edit", 2, "Z")], "Z|B|C"),  # the lower number keeps its edit
        ([("edit", 1, "B"), ("edit", 2, "C")], "A|B|C"),  # undone in turn
        ([("add", 0, "A"), ("remove", 1, "")], "B|C|A"),
        ([("add", 0, "A"), ("edit", 1, "X")], "X|B|C|A"),
        ([("add", 0, "X"), ("edit", 1, "X")], "X|B|C"),
        ([("edit", 1, "B"), ("add", 0, "A")], "A|B|C"),
    ],
)
def test_a_cheatsheet_copy_is_judged_on_the_sheet_the_reply_leaves(
    operations: list[tuple[str, int, str]], sheet: str
) -> None:
    """Whatever the order of a reply's operations, the sheet is the same, and no operation
    leaves a copy of a bullet on it."""
    for order in itertools.permutations(operations):
        reply = ops(*({"op": op, "bullet": n, "text": text} for op, n, text in order))
        after = cheatsheet.updated("[1] A\n[2] B\n[3] C", reply)[0]
        assert list(cheatsheet.bullets(after)) == sheet.split("|"), order


def test_a_cheatsheet_edit_that_a_later_operation_replaces_is_said() -> None:
    """The 1.5B model sometimes edits a bullet and then edits or removes it again in one reply:
    a later edit or removal replaces the earlier edit, which is a skipped line, so the report
    does not count such a reply as taken in full; an edit after a removal is skipped, saying
    why."""
    edit = {"op": "edit", "bullet": 2, "text": "Y"}
    remove = {"op": "remove", "bullet": 2}
    for later, sheet in (({"op": "edit", "bullet": 2, "text": "Z"}, "A|Z|C"), (remove, "A|C")):
        after, skipped = cheatsheet.updated("[1] A\n[2] B\n[3] C", ops(edit, later))
        assert list(cheatsheet.bullets(after)) == sheet.split("|")
        assert skipped == [f"skipped edit, replaced by a later one: {edit}"]
    after, skipped = cheatsheet.updated("[1] A\n[2] B\n[3] C", ops(remove, edit))
    assert (after, skipped) == (
        "[1] A\n[2] C",
        [f"skipped edit, removed earlier in the reply: {edit}"],
    )


def test_a_cheatsheet_bullet_holding_a_program_stays_one_bullet() -> None:
    """A bullet may hold a short program, and a program's line may start like a bullet ("[0] * 3"):
    read back, the sheet still has the bullets the reply wrote, so bullet numbers stay right."""
    program = "counts = (\n[0] * 3\n)"
    after, skipped = cheatsheet.updated("[1] A", ops({"op": "add", "text": program}))
    assert skipped == [] and list(cheatsheet.bullets(after)) == ["A", "counts = (\n [0] * 3\n)"]
    again, _ = cheatsheet.updated(after, ops({"op": "edit", "bullet": 2, "text": "B"}))
    assert list(cheatsheet.bullets(again)) == ["A", "B"]


def test_a_cheatsheet_operation_beyond_the_limit_is_said() -> None:
    """A reply not held to the schema (a model without one) may send more than 3 operations:
    the first 3 apply, and each one beyond is a skipped line, not lost without a word."""
    four = [{"op": "add", "text": t} for t in "WXYZ"]
    after, skipped = cheatsheet.updated("[1] A", ops(*four))
    assert list(cheatsheet.bullets(after)) == ["A", "W", "X", "Y"]
    assert skipped == [f"skipped, beyond the 3 operations of a reply: {four[3]}"]


def test_an_insights_operation_beyond_the_limit_is_said(tmp_path: Path) -> None:
    """The same for `insights`: a free-text reply with five adds keeps four rules (ExpeL asks
    for at most 4 operations), and the fifth is in the trace as skipped, so the reply does not
    count as taken in full."""
    five = "\n".join(f"ADD: Rule {n}." for n in "ABCDE")
    _, _, folder = stream(tmp_path, "insights", ["apple", "apple river", five])
    assert sorted(r.text for r in stored(folder) if r.kind == "rule") == [
        "Rule A.",
        "Rule B.",
        "Rule C.",
        "Rule D.",
    ]
    assert steps(folder, "unparsed") == []  # the reply parsed; its fifth edit was skipped
    assert [s["output"] for s in steps(folder, "skipped")] == [
        "skipped, beyond the 4 operations of a reply: ADD: Rule E."
    ]


def test_bank_keys_items_by_question_and_does_not_store_a_near_copy(tmp_path: Path) -> None:
    """ReasoningBank's memory: items found by their task's question; a near-copy of an item kept
    for the same question is not stored (the trace names the one it copies), while the same note
    from another task is: a recall shows one task's items, so a note kept only under another
    task's question would be missing there."""
    note = {"title": "All the words", "when": "a task lists words", "do": "use each one"}
    again = note | {"do": "use each one, always"}
    reply = json.dumps({"reason": "a word was missing", "items": [note, again]})
    _, prompts, folder = json_stream(tmp_path, "bank", ["apple", reply, "cloud", reply], 1)
    assert "All the words. When: a task lists words. Do: use each one." in prompts[2]
    items = stored(folder)
    assert sorted(i.key for i in items) == [
        "Write one sentence using the words: apple, river.",
        "Write one sentence using the words: cloud, stone.",
    ]
    assert {i.text for i in items} == {"All the words. When: a task lists words. Do: use each one."}
    copies = [s for s in steps(folder, "remember") if s["data"].get("duplicate_of")]
    assert sorted(c["data"]["duplicate_of"] for c in copies) == sorted(i.id for i in items)


def test_exemplars_are_found_by_their_question(tmp_path: Path) -> None:
    _, _, folder = stream(tmp_path, "exemplars", ["apple river", "cloud stone"])
    assert [r.key for r in stored(folder)] == [
        "Write one sentence using the words: apple, river.",
        "Write one sentence using the words: cloud, stone.",
    ]


def test_a_curator_is_held_to_its_schema_where_the_runtime_allows() -> None:
    """The local model gets the design's JSON schema (llama.cpp's grammar); the schema allows
    only operations the board can take (no edit of an empty list); answers stay free."""
    import asyncio

    from reflexion.actor.chat import ChatActor
    from reflexion.core.lesson_records import Kind
    from reflexion.core.records import Attempt, Score, Task

    model = schema_scripted([ops({"op": "add", "text": "Check."}), "answer"])
    actor = ChatActor(model)
    task, failed = Task("k0", "Use apple."), Attempt(1, "pear", Score(0.0, False, "no apple"))
    asyncio.run(actor.distill(task, Kind.RULE, [failed], []))
    asyncio.run(actor.generate(task, (), sample=0))
    schema = model.bound[0]["json_schema"]
    assert list(schema["properties"]) == ["reason", "operations"]  # the reason first
    assert schema["properties"]["operations"]["items"]["properties"]["op"] == {"const": "add"}
    assert "json_schema" not in model.bound[1]  # the answer is not constrained


class ThreeTaskEnv(KeywordEnv):
    """The keyword tasks and a third whose question is nearest the first's."""

    def __init__(self) -> None:
        super().__init__()
        third = "Write one sentence using the words: apple, river, lake."
        self._tasks.append(Task("k2", third, {"words": ["apple", "river", "lake"]}))


def items(*titles: str) -> str:
    """A bank curator's JSON reply with one note per title."""
    notes = [{"title": t, "when": "words are listed", "do": f"{t} every time"} for t in titles]
    return json.dumps({"reason": "a word was missing", "items": notes})


def third_prompt(tmp_path: Path, replies: list[str], **more) -> str:
    """Run bank over the three tasks; the prompt of the third task's answer."""
    model = scripted(replies)
    config = RunConfig(
        env="keywords",
        strategies=("bank",),
        out=str(tmp_path / "run"),
        episodes=1,
        order="stream",
        **({"embedder": "hash-64"} | more),
    )
    run(config, model=model, env=ThreeTaskEnv())
    return "\n".join(str(m.content) for m in model.prompts[4])


def test_bank_shows_the_items_of_the_one_most_similar_earlier_task(tmp_path: Path) -> None:
    """ReasoningBank recalls all the items of the one nearest earlier task: the third task, asked
    like the first, sees both of the first task's items and none of the newer second task's."""
    replies = ["apple", items("Count words", "Read slowly"), "cloud", items("Rhyme"), "apple"]
    last = third_prompt(tmp_path, [*replies, items("Spare")])
    assert "Notes from the most similar earlier task" in last
    assert "Count words. When" in last and "Read slowly. When" in last
    assert "Rhyme" not in last  # the second task's item, newer but less similar
    recalls = steps(tmp_path / "run", "recall")
    assert [h["task_id"] for h in recalls[-1]["data"]["hits"]] == ["k0", "k0"]


def test_bank_over_a_window_memory_shows_the_newest_tasks_items(tmp_path: Path) -> None:
    """A window memory ranks nothing by similarity: bank then shows the newest earlier task's
    items (the second task's), not the first's, however similar its question."""
    replies = ["apple", items("Count words"), "cloud", items("Rhyme"), "apple", "{}"]
    last = third_prompt(tmp_path, replies, memory_backend="window")
    assert "Rhyme. When" in last and "Count words" not in last


def solved_after_a_failure(first: str, second: str) -> list[str]:
    """Both keyword tasks fail and then pass; `first` and `second` are the curator's replies
    to the two comparisons."""
    return ["apple", "apple river", first, "cloud", "cloud stone", second]


def test_insights_does_not_add_a_near_copy_of_a_rule_on_its_list(tmp_path: Path) -> None:
    """The 1.5B curator re-adds its rule in new words; a near-copy (by the store's embedding
    model) is skipped and said, while a different rule in the same reply is added."""
    first = ops({"op": "add", "text": "Use every word in the list."})
    again = ops(
        {"op": "add", "text": "Always use every word in the list."},  # 0.93 by hash-64
        {"op": "add", "text": "Check the spelling of each word before you answer."},
    )
    _, _, folder = json_stream(tmp_path, "insights", solved_after_a_failure(first, again))
    rules = sorted(r.text for r in stored(folder) if r.kind == "rule")
    assert rules == [
        "Check the spelling of each word before you answer.",
        "Use every word in the list.",
    ]
    [_, second] = [s["output"] for s in steps(folder, "revised")]
    assert second.startswith("skipped add: a near-copy of ") and "(0.93)" in second
    assert second.splitlines()[1].startswith("add ")


def test_insights_takes_an_edit_that_restates_another_rule_as_an_upvote_of_it(
    tmp_path: Path,
) -> None:
    """As ExpeL turns such an EDIT into an AGREE: an edit that rewrites rule 2 into a near-copy
    of rule 1 upvotes rule 1 and leaves rule 2 as it was, so the list never holds one rule in
    two wordings (on the SQL stream, edits made 7 of 9 rules one sentence)."""
    first = ops(
        {"op": "add", "text": "Use every word in the list."},
        {"op": "add", "text": "Check the spelling of each word before you answer."},
    )
    again = ops({"op": "edit", "rule": 2, "text": "Always use every word in the list."})
    _, _, folder = json_stream(tmp_path, "insights", solved_after_a_failure(first, again))
    rules = {r.text: r.votes for r in stored(folder) if r.kind == "rule"}
    assert rules == {
        "Use every word in the list.": 3,
        "Check the spelling of each word before you answer.": 2,
    }
    [_, second] = [s["output"] for s in steps(folder, "revised")]
    assert second.startswith("upvote ") and "(restated by an edit of " in second
    assert second.endswith(", 0.93)")  # the rule's history says why it gained the vote
    assert main(["report", str(folder)]) == 0  # and the report counts it apart
    writes = json.loads((folder / "comparison.json").read_text())["memory"]["writes"]
    assert writes[0]["kinds"] == {
        "exemplar": {"kept": 2},  # the successes, waiting for a chunk to critique
        "rule": {"added": 2, "upvoted (restated by an edit)": 1},
    }


@pytest.mark.slow
def test_insights_takes_a_rule_restated_with_a_final_period_as_an_upvote(tmp_path: Path) -> None:
    """On the SQL stream the list kept one rule twice, once with a final period: the real
    embedding model scores the two 0.84, under the near-copy bound. The same words (case,
    spacing and a final stop aside) restate a rule, whatever the embedder says."""
    rule = "Replace the categories table with the product_categories table"
    other = "Check the spelling of each word before you answer."
    first = ops({"op": "add", "text": rule}, {"op": "add", "text": other})
    again = ops({"op": "edit", "rule": 2, "text": f"{rule}."})
    replies = solved_after_a_failure(first, again)
    *_, folder = stream(
        tmp_path, "insights", replies, 2, curation="json", embedder="all-MiniLM-L6-v2"
    )
    rules = {r.text: r.votes for r in stored(folder) if r.kind == "rule"}
    assert rules == {rule: 3, other: 2}
    [_, second] = [s["output"] for s in steps(folder, "revised")]
    assert second.startswith("upvote ") and second.endswith(", 1.00)")


def test_exemplars_show_at_most_16_shots_as_self_streamicl_does(tmp_path: Path) -> None:
    """StreamBench's Self-StreamICL recalls up to 16 earlier solved questions: after 18 solved
    tasks the 19th prompt shows 16 of them, however much room memory has."""
    path = tmp_path / "qa.jsonl"
    rows = [{"id": f"q{n:02}", "question": f"What is item {n}?", "answer": "x"} for n in range(19)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    replies = [f"Answer: solution{n:02}" for n in range(19)]
    model = scripted(replies)
    config = RunConfig(
        strategies=("exemplars",),
        out=str(tmp_path / "run"),
        episodes=1,
        embedder="hash-64",
        order="stream",
        memory_tokens=100_000,
    )
    run(config, model=model, env=JsonlEnv(str(path)))
    last = "\n".join(str(m.content) for m in model.prompts[-1])
    shown = [n for n in range(18) if f"solution{n:02}" in last]
    assert len(stored(tmp_path / "run")) == 19 and len(shown) == 16


def test_a_long_cheatsheet_leaves_room_for_the_tasks_own_reflection(tmp_path: Path) -> None:
    """`reflexion+cheatsheet`: each kind of memory has its own share of --memory-tokens, so a
    sheet that fills the bound alone is cut beside the task's reflection, and the reflection is
    shown whole (a sheet over the bound took all the room, and the retry was shown nothing new)."""
    tip = "Write every listed word exactly as it is spelled in the task, then check the list."
    plan = "I left out stone. Plan: use stone."
    replies = ["apple river", ops({"op": "add", "text": tip}), "cloud", plan, "cloud stone"]
    replies.append(ops({"op": "remove", "bullet": 1}))
    _, prompts, _ = stream(
        tmp_path, "reflexion+cheatsheet", replies, curation="json", memory_tokens=25
    )
    assert f"[1] {tip}" in prompts[2]  # alone, the sheet is shown whole
    assert plan in prompts[4] and f"[1] {tip[:40]}" in prompts[4]


@pytest.mark.parametrize("curation", ["json", "text"])
def test_the_cheatsheet_never_grows_past_what_a_prompt_shows_of_it(
    tmp_path: Path, curation: str
) -> None:
    """A prompt shows --memory-tokens of the sheet (here 25: 100 characters), and new bullets go
    at the end: a sheet written past that would have its newest bullets cut from every prompt,
    unseen. The curator is told the room, and an add (or rewrite) that would pass it is not
    made, and said."""
    first = "List the words of the task in the order they are given there."
    second = "Then write one sentence that holds every one of those words."
    if curation == "json":
        replies = [ops({"op": "add", "text": first}), ops({"op": "add", "text": second})]
    else:
        replies = [f"<sheet>[1] {first}</sheet>", f"<sheet>[1] {first}\n[2] {second}</sheet>"]
    replies = ["apple river", replies[0], "cloud stone", replies[1]]
    _, prompts, folder = stream(
        tmp_path, "cheatsheet", replies, 1, curation=curation, memory_tokens=25
    )
    assert (
        "Every prompt shows at most 100 characters of the cheatsheet, and it holds 0" in prompts[1]
    )
    assert "at most 100 characters of the cheatsheet, and it holds 65 now" in prompts[3]
    [sheet] = [r for r in stored(folder) if r.kind == "cheatsheet"]
    assert sheet.text == f"[1] {first}" and f"[1] {first}" in prompts[2]
    said = steps(folder, "skipped" if curation == "json" else "unparsed")
    assert [s["output"].split(":")[0] for s in said] == [
        "skipped add, the sheet would pass the 100 characters a prompt shows"
        if curation == "json"
        else "the rewrite holds 130 characters, over the 100 a prompt shows"
    ]


def test_a_cheatsheet_edit_past_the_room_is_undone_and_a_removal_makes_room_for_an_add() -> None:
    sheet = "[1] Use each word.\n[2] Check the list."  # 38 characters, of a room of 40
    longer = {"op": "edit", "bullet": 1, "text": "Use each listed word once."}
    after, skipped = cheatsheet.updated(sheet, ops(longer), room=40)
    assert after == sheet and skipped == [
        "skipped edit, the sheet would pass the 40 characters a prompt shows: " + str(longer)
    ]
    freed = ops({"op": "remove", "bullet": 2}, {"op": "add", "text": "Read it twice."})
    assert cheatsheet.updated(sheet, freed, room=40) == (
        "[1] Use each word.\n[2] Read it twice.",
        [],
    )
