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
found by the question of the task it solved (`Task.lookup`), and nothing is asked of the model
to store it.

    >>> program_of("Try:\\n```python\\nprint(6 * 4)\\n```\\nAnswer: 6 * 4")
    'print(6 * 4)'
    >>> skill_text("Make 24 from 4, 6.", "print(4 * 6)").splitlines()[-2]
    'print(4 * 6)'
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from reflexion.core.fences import PYTHON, fenced_blocks
from reflexion.core.lesson_records import Board, BoardEdit, EditOp, Kind, Recalled
from reflexion.core.protocols import Trial
from reflexion.core.records import Attempt
from reflexion.strategies.learning import Design, Lessons, both

HEADER = (
    "Programs that solved similar tasks. If one fits, call it or adapt it in your own program "
    "instead of starting from nothing:"
)
# a skill survives one failed reuse, as an ExpeL rule survives one downvote; at 0 it retires
RULES = Board(new_votes=2, drops_at_zero=True)


def program_of(reply: str) -> str | None:
    """The reply's fenced Python blocks as one program, or None when it holds none. Blocks that
    name no language count only in a reply with no Python block, and only if they are a program
    (`is_program`): the code envs score an answer in a bare fence, so its program is a skill too
    (its check runs before it is kept), while a query, prose, or the number a program printed,
    quoted in a bare fence, is not a program. Fences are read as the checks read them
    (`reflexion.core.fences`): a block cut off at the token limit runs to the reply's end.

    >>> program_of("```\\ndef double(x):\\n    return 2 * x\\n```")
    'def double(x):\\n    return 2 * x'
    >>> program_of("It printed:\\n```\\n3 * 6 + 3 + 3\\n```") is None
    True
    """
    fences = _fences(reply)
    python = [code for label, code in fences if label in PYTHON]
    blocks = python or [code for label, code in fences if not label and is_program(code)]
    return "\n\n".join(blocks) if blocks else None


def every_program(reply: str) -> str | None:
    """All the reply's program blocks, Python and bare, as one program: a bare block may define
    what a ```python block then calls, as the code envs' check reads it."""
    blocks = [code for label, code in _fences(reply) if label in PYTHON or is_program(code)]
    return "\n\n".join(blocks) if blocks else None


def _fences(reply: str) -> list[tuple[str, str]]:
    return [(block.label, block.code.strip("\n")) for block in fenced_blocks(reply)]


def is_program(block: str) -> bool:
    """Whether a bare-fenced block is a program: it parses as Python and does something (a
    definition, an import, an assignment, a call). A lone expression such as `3 * 6 + 3 + 3`
    or `24` parses too, but it is an answer or an output quoted, not code to keep."""
    try:
        tree = ast.parse(block)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # ValueError: a null byte
        return False
    return any(not isinstance(s, ast.Expr) or isinstance(s.value, ast.Call) for s in tree.body)


def solving_programs(attempt: Attempt) -> list[str]:
    """The programs that may be behind a solved answer, the likeliest first: the answer's own,
    then those the model wrote in earlier rounds of the code protocol (its earlier replies, in
    the answer's prompt), each once."""
    replies = [m.content for m in attempt.prompt if m.role == "ai"] + [attempt.candidate]
    found = [read(reply) for reply in reversed(replies) for read in (program_of, every_program)]
    return list(dict.fromkeys(p for p in found if p is not None))


def skill_text(prompt: str, program: str) -> str:
    return f"Task it solved:\n{prompt}\n\n{fenced(program)}"


def numbered(texts: Sequence[str]) -> str:
    return "\n\n".join(f"Skill {n}:\n{t}" for n, t in enumerate(texts, 1))


async def shown(trial: Trial, episode: int) -> list[Recalled]:
    return await trial.recall(episode, Kind.SKILL)


async def learn(trial: Trial, attempts: list[Attempt], episode: int) -> None:
    solved = attempts[-1]
    programs = solving_programs(solved) if solved.score.solved else []
    # subtle: under the code protocol a solved answer may be the model's own text after a
    # program that printed nothing; such a program must not become a skill, so each program is
    # checked on its own, as the answer would be (Game of 24: the expression it prints), and
    # the first that passes is kept (a final answer can quote a block that is not the solver)
    for program in programs:
        if (await trial.verify(fenced(program), solved.episode)).solved:
            text = skill_text(trial.task.lookup, program)
            await trial.keep(Kind.SKILL, text, solved, key=trial.task.lookup, rules=RULES)
            return
    if programs:
        n = len(programs)
        which = "the program does not pass" if n == 1 else f"none of its {n} programs passes"
        why = f"not kept as a skill: {which} the check on its own"
        trial.note(solved.episode, "skipped", why, {"kind": Kind.SKILL})


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
    op = EditOp.UPVOTE if attempt.score.solved else EditOp.DOWNVOTE
    edits = [BoardEdit(op, lesson.id) for lesson in lessons]
    await trial.revise(Kind.SKILL, edits, attempt.episode, among=lessons, rules=RULES)


SKILLS = Lessons(Kind.SKILL, HEADER, place="before_task", body=numbered, board=RULES)
DESIGN = Design(SKILLS, shown, learn, reused)
run, with_reflexion = both(DESIGN)
