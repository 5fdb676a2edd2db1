"""`skills`: verified programs kept as skills, in the line of Voyager's skill library and Buffer
of Thoughts' templates (its Game of 24 template is a brute-force program). No model writes this
memory: when a task is solved and its answer came with a Python program (in the answer, or in a
round of the code protocol, `--code-rounds`), the program is checked on its own by the task's
visible check (as Voyager keeps only code that its self-verification passed), and one that
passes is stored verbatim, with the task it solved and its provenance. A program that printed
nothing useful, behind an answer the model then wrote by itself, is not kept. A new task
recalls the k most similar skills, shown as code the model may call or adapt, under one
generic line on how to use them.

Every reuse is checked: each skill shown for an attempt gains a vote when the attempt passed its
visible check, and loses one when the task's last attempt failed with it shown (one vote a
task: when every failed attempt cost a vote, the retries of one hard task retired a skill). A
skill starts with 2 votes and retires at 0, with its history kept (`reflexion memory
history`), so a skill that keeps failing on other tasks stops being shown. Votes change only
under --order stream, as every board's do.

What differs from the papers: Voyager's skills are written for an embodied agent by GPT-4 and
described by the model before they are stored; here the program is kept as the model wrote it,
keyed by the task it solved, and nothing is asked of the model to store it.

    >>> program_of("Try:\\n```python\\nprint(6 * 4)\\n```\\nAnswer: 6 * 4")
    'print(6 * 4)'
    >>> skill_text("Make 24 from 4, 6.", "print(4 * 6)").splitlines()[-2]
    'print(4 * 6)'
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from reflexion.core.fences import PYTHON, fenced_blocks
from reflexion.core.protocols import Trial
from reflexion.core.records import Attempt, BoardEdit, Kind, Recalled
from reflexion.strategies.learning import Board, Design, Lessons, both

HEADER = (
    "Programs that solved similar tasks. If one fits, call it or adapt it in your own program "
    "instead of starting from nothing:"
)
# a skill survives one failed reuse, as an ExpeL rule survives one downvote; at 0 it retires
RULES = Board(new_votes=2, drops_at_zero=True)


def program_of(reply: str) -> str | None:
    """The reply's fenced Python blocks as one program, or None when it holds none. Blocks that
    name no language count only in a reply with no Python block, and only if they parse as
    Python: the code envs score an answer in a bare fence, so its program is a skill too (its
    check runs before it is kept), while a query in a bare fence is not a program. Fences are
    read as the checks read them (`reflexion.core.fences`): a block cut off at the token limit
    runs to the reply's end, so the program kept is the one the check ran.

    >>> program_of("```\\ndef double(x):\\n    return 2 * x\\n```")
    'def double(x):\\n    return 2 * x'
    """
    fences = [(block.label, block.code.strip("\n")) for block in fenced_blocks(reply)]
    python = [code for label, code in fences if label in PYTHON]
    blocks = python or [code for label, code in fences if not label and parses(code)]
    return "\n\n".join(blocks) if blocks else None


def parses(block: str) -> bool:
    """Whether a block is Python: a bare-fenced SQL query or prose is not a program."""
    try:
        ast.parse(block)
    except (SyntaxError, ValueError):
        return False
    return True


def solving_program(attempt: Attempt) -> str | None:
    """The program behind a solved answer: the answer's own, else the last one the model wrote
    in a round of the code protocol (its earlier replies, in the answer's prompt)."""
    replies = [m.content for m in attempt.prompt if m.role == "ai"] + [attempt.candidate]
    for reply in reversed(replies):
        found = program_of(reply)
        if found is not None:
            return found
    return None


def skill_text(prompt: str, program: str) -> str:
    return f"Task it solved:\n{prompt}\n\n{fenced(program)}"


def numbered(texts: Sequence[str]) -> str:
    return "\n\n".join(f"Skill {n}:\n{t}" for n, t in enumerate(texts, 1))


async def shown(trial: Trial, episode: int) -> list[Recalled]:
    return await trial.recall(episode, Kind.SKILL)


async def learn(trial: Trial, attempts: list[Attempt], episode: int) -> None:
    solved = attempts[-1]
    program = solving_program(solved) if solved.score.solved else None
    if program is None:
        return
    # subtle: under the code protocol a solved answer may be the model's own text after a
    # program that printed nothing; such a program must not become a skill, so the program is
    # checked on its own, as the answer would be (Game of 24: the expression it prints)
    if not (await trial.verify(fenced(program), solved.episode)).solved:
        why = "not kept as a skill: the program does not pass the check on its own"
        trial.note(solved.episode, "skipped", why, {"kind": Kind.SKILL})
        return
    await trial.keep(Kind.SKILL, skill_text(trial.task.lookup, program), solved)


def fenced(program: str) -> str:
    return f"```python\n{program}\n```"


async def reused(trial: Trial, shown: list[Recalled], attempt: Attempt) -> None:
    """Each skill shown for `attempt` gains a vote if it passed its check, and loses one if the
    task's last attempt failed with it: one vote a task, so a skill is not retired by the
    retries of one hard task."""
    lessons = [r.reflection for r in shown if r.reflection.kind == Kind.SKILL]
    last = attempt.episode >= trial.budget
    if not lessons or not (attempt.score.solved or last):
        return
    op = "upvote" if attempt.score.solved else "downvote"
    edits = [BoardEdit(op, lesson.id) for lesson in lessons]
    await trial.revise(Kind.SKILL, edits, attempt.episode, among=lessons)


SKILLS = Lessons(Kind.SKILL, HEADER, place="before_task", body=numbered, board=RULES)
DESIGN = Design(SKILLS, shown, learn, reused)
run, with_reflexion = both(DESIGN)
