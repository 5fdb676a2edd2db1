"""The prompts of the LLM roles, as langchain-core templates.

Self-Refine and `correct` keep one growing conversation (task, y0, fb0, y1, ...), so each prompt
extends the previous one: a runtime with a prefix cache reprocesses only the new turns. The
designs' own words (their distill prompts, PASR's answer format) are in their modules
(reflexion.strategies); here they are made into messages.

    >>> msgs = generate_messages(Task("t", "Add 2 and 3."), lessons=["Check the sign."])
    >>> [m.type for m in msgs]
    ['system', 'human']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

from reflexion.actor import structured as structured_reflection
from reflexion.actor.memory_text import Lesson, Placed, place
from reflexion.core.lesson_records import Curation, Reflection
from reflexion.core.records import Attempt, Message, Task, Turn
from reflexion.strategies import LESSONS, proactive
from reflexion.strategies.learning import Request

SYSTEM = "You are a careful problem solver. Answer the task completely."
MESSAGE_TYPES = {"system": SystemMessage, "human": HumanMessage, "ai": AIMessage}

GENERATE = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", "{task}{lessons}")])
MEMORY_TOKENS = 800  # RunConfig.memory_tokens' default
ANSWER_CHARS = 1500  # an attempt as a distill prompt shows it (its start and end): what it did
# an answer reached through code rounds, as a distill prompt shows it: every round's program and
# what it printed, then the answer (Dynamic Cheatsheet's curator reads all of its final_output);
# about 1,500 tokens, so the request still fits the local model's 4,096-token context
ROUNDS_CHARS = 6000

# The feedback request sees the VISIBLE result of the last answer, never the held-out one.
FEEDBACK_REQUEST = (
    "Result of checking this answer: {result}\n\n"
    "Give specific, actionable feedback in at most five short points: what is wrong and how to "
    "fix it. Do not rewrite the answer. "
    "If the answer is correct and needs no change, end with a line that says STOP."
)
REFINE_REQUEST = "Using the feedback above, write an improved, complete answer to the task."
# Self-Refine with --feedback generic or none: no feedback is written; the result asks instead.
RESULT_REQUEST = (
    "Result of checking this answer: {result}\n\nWrite an improved, complete answer to the task."
)
CORRECT_REQUEST = (
    "There might be an error in the answer above because of a lack of understanding of the "
    "task. Please correct the error, if any, and rewrite the complete answer."
)
# The code protocol (ChatActor._answer): what the program printed, then the task's own request
PROGRAM_RAN = "Your program was run.\n{printed}\n\nNow answer the task as it asks."
ROUND_SHOWN = "{reply}\n\nThe program was run.\n{printed}"  # a code round, as a curator sees it
REFLECT = ChatPromptTemplate.from_messages(
    [
        ("system", "You diagnose failed attempts so that the next attempt succeeds."),
        (
            "human",
            "Task:\n{task}\n\nYour attempt:\n{candidate}\n\nResult of checking it: {result}\n\n"
            "In a few sentences, say why the attempt failed and give a concrete plan for the "
            "next attempt. Do not write the full answer.",
        ),
    ]
)
# A reflection continues the conversation that produced the attempt: all of it but this request
# is in the runtime's prefix cache, since the attempt was just generated from it.
REFLECT_REQUEST = (
    "Result of checking your answer: {result}\n\n"
    "In a few sentences, say why the answer failed and give a concrete plan for the next "
    "attempt. Do not write the full answer."
)
# Self-tests see the task's visible prompt only (the env's test_subject): never a hidden test.
WRITE_TESTS = ChatPromptTemplate.from_messages(
    [
        ("system", "You write unit tests for Python functions."),
        (
            "human",
            "```python\n{subject}```\n\nDo not write the function. Write up to {count} unit "
            "tests of `{entry_point}` for the description above: one Python assert statement "
            "per line, each calling `{entry_point}` on an input and comparing the result with "
            "the expected output. Include edge cases. Reply with one ```python code block.",
        ),
    ]
)
TESTS_PREFIX = "```python\nassert "  # the reply's start, for a model that continues one
CONVERSATION = ChatPromptTemplate.from_messages(
    [("system", SYSTEM), ("human", "{task}"), MessagesPlaceholder("history")]
)


def generate_messages(
    task: Task, lessons: Sequence[Lesson], memory_tokens: int = MEMORY_TOKENS
) -> list[BaseMessage]:
    """The first-answer prompt, with memory placed by kind (reflexion.actor.memory_text)."""
    return placed_messages(task, place(lessons, memory_tokens))


def placed_messages(task: Task, placed: Placed) -> list[BaseMessage]:
    """The answer's prompt with `placed` memory: the boards (rules, a sheet) after the system
    prompt, being the same for every task, so the prefix cache keeps them; task-dependent memory
    before or after the task. Where tasks share a long context, everything placed before the
    task, the boards too, goes after that context: a board that changes then leaves the context
    cached, and the curator's request shares it (see `distill_messages`)."""
    after = "\n\n" + placed.after_task if placed.after_task else ""
    context, asked = context_and_question(task)
    system, before = placed.system, placed.before_task
    if context and system:
        system, before = "", "\n\n".join(b for b in (placed.system, before) if b)
    prompt = task.prompt
    if before:
        prompt = f"{context}{before}\n\nYour task:\n{asked}"
    msgs = GENERATE.format_messages(task=prompt, lessons=after)
    if system:
        msgs[0] = SystemMessage(f"{SYSTEM}\n\n{system}")
    return msgs


def context_and_question(task: Task) -> tuple[str, str]:
    """The prompt cut before the paragraph that holds the task's question, where tasks share a
    context (`Task.question`): memory placed before the task goes between the two, so the
    shared context (a database's schema) stays a prefix the model's cache reuses, and the shots
    still come just before the question. ("", the prompt) where there is no such question.

    >>> t = Task("t", "Schema.\\n\\nWrite a query.\\n\\nQuestion: How many?", question="How many?")
    >>> context_and_question(t)
    ('Schema.\\n\\nWrite a query.\\n\\n', 'Question: How many?')
    >>> context_and_question(Task("t", "Add 2 and 3."))
    ('', 'Add 2 and 3.')
    """
    at = task.prompt.rfind(task.question) if task.question else -1
    cut = task.prompt.rfind("\n\n", 0, at) if at > 0 else -1
    if cut < 0:
        return "", task.prompt
    return task.prompt[: cut + 2], task.prompt[cut + 2 :]


def proactive_messages(task: Task) -> list[BaseMessage]:
    """PASR's format, asked for in words (reflexion.strategies.proactive)."""
    return [SystemMessage(f"{SYSTEM} {proactive.FORMAT}"), HumanMessage(task.prompt)]


SHARED_CONTEXT_ENDS = (
    "(The text above is the context that tasks of this kind share. You are not answering a "
    "task now.)"
)


def distill_messages(
    task: Task,
    kind: str,
    attempts: Sequence[Attempt],
    board: Sequence[Reflection],
    form: Curation = Curation.JSON,
    room: int | None = None,
) -> list[BaseMessage]:
    """The distill prompt of the design whose lessons are of `kind` (its module holds the
    words): its system message, then its request around the attempts, each with the VISIBLE
    verdict of its check; `form` json asks for its JSON object, text for free-text lines;
    with a `room` (the characters a prompt shows of memory), the design's line on it, if any.

    >>> from reflexion.core.records import Score
    >>> failed = Attempt(1, "x = 1", Score(0.0, False, "expected 2"))
    >>> msgs = distill_messages(Task("t", "Set x to 2."), "rule", [failed], [], Curation.TEXT)
    >>> "ADD:" in msgs[-1].content and "(none yet)" in msgs[-1].content
    True
    """
    lessons = LESSONS.get(kind)
    if lessons is None or lessons.distill is None:
        msg = f"no distill prompt for lessons of kind {str(kind)!r}"
        raise ValueError(msg)
    shown = "\n\n".join(_attempt(a, n) for n, a in enumerate(attempts, 1))
    asking = lessons.distill.request if form == Curation.JSON else lessons.distill.text
    if room is not None and lessons.distill.room is not None:
        asking = _with_room(asking, lessons.distill.room, room)
    context, asked = context_and_question(task)
    opened = attempts[-1].prompt[:1] if attempts else ()
    if not context or not opened or opened[0].role != "system":
        request = asking(task, shown, attempts, board)
        return [SystemMessage(lessons.distill.system), HumanMessage(request)]
    # Tasks that share a long context (a database's schema): the request opens as the attempt's
    # own prompt did, its system message and then the context, so the model's cache serves that
    # prefix to this call and keeps it for the next task's; the task is shown by its question.
    request = asking(replace(task, prompt=asked), shown, attempts, board)
    words = f"{context}{SHARED_CONTEXT_ENDS} {lessons.distill.system}\n\n{request}"
    return [SystemMessage(opened[0].content), HumanMessage(words)]


def _with_room(
    asking: Request, line: Callable[[Sequence[Reflection], int], str], room: int
) -> Request:
    def request(
        task: Task, shown: str, attempts: Sequence[Attempt], board: Sequence[Reflection]
    ) -> str:
        return f"{asking(task, shown, attempts, board)}\n{line(board, room)}"

    return request


def _attempt(attempt: Attempt, n: int) -> str:
    verdict = "passed the check" if attempt.score.solved else "failed the check"
    said = f": {attempt.score.feedback}" if attempt.score.feedback else ""
    return f"Attempt {n} ({verdict}{said}):\n{shown_answer(attempt)}"


def shown_answer(attempt: Attempt) -> str:
    """An attempt as a curator sees it: the answer (its start and end), or, when it came through
    code rounds (ChatActor._answer), every round's reply with what its program printed, then the
    answer, within ROUNDS_CHARS: a curator shown only the last reply cannot keep the program.

    >>> from reflexion.core.records import Message, Score
    >>> ran = Message("human", PROGRAM_RAN.format(printed="It printed:\\n24"))
    >>> rounds = (Message("human", "Make 24."), Message("ai", "print(4 * 6)"), ran)
    >>> print(shown_answer(Attempt(1, "Answer: 4 * 6", Score(1.0, True), rounds)))
    print(4 * 6)
    <BLANKLINE>
    The program was run.
    It printed:
    24
    <BLANKLINE>
    Answer: 4 * 6
    """
    rounds = code_rounds(attempt.prompt)
    if not rounds:
        return ends(attempt.candidate, ANSWER_CHARS)
    shown = [ROUND_SHOWN.format(reply=reply, printed=printed) for reply, printed in rounds]
    return ends("\n\n".join([*shown, attempt.candidate]), ROUNDS_CHARS)


def code_rounds(prompt: Sequence[Message]) -> list[tuple[str, str]]:
    """The code rounds in an answer's prompt: each reply that held a program, and what the
    program printed (the message PROGRAM_RAN made of it)."""
    head, tail = PROGRAM_RAN.split("{printed}")
    rounds = []
    for reply, ran in zip(prompt, prompt[1:], strict=False):
        text = ran.content
        if reply.role == "ai" and ran.role == "human" and text.startswith(head):
            rounds.append((reply.content, text.removeprefix(head).removesuffix(tail)))
    return rounds


def ends(text: str, chars: int) -> str:
    """`text`, or, when it is longer than `chars`, its start and its end: how a long game play
    began, and how it ended.

    >>> ends("abcdefghij", 6)
    'ab\\n[...]\\nghij'
    """
    if len(text) <= chars:
        return text
    head = chars // 3
    return f"{text[:head]}\n[...]\n{text[head - chars :]}"


def tests_messages(subject: str, entry_point: str, count: int) -> list[BaseMessage]:
    return WRITE_TESTS.format_messages(subject=subject, entry_point=entry_point, count=count)


def reflect_messages(task: Task, attempt: Attempt, structured: bool = False) -> list[BaseMessage]:
    """The conversation that produced the attempt, its answer, then the request to diagnose it
    (in prose, or as a JSON object: reflexion.actor.structured); an attempt that does not carry
    its prompt gets a prompt of its own."""
    template = structured_reflection.REQUEST if structured else REFLECT_REQUEST
    request = template.format(result=attempt.score.feedback)
    if not attempt.prompt and not structured:
        return REFLECT.format_messages(
            task=task.prompt, candidate=attempt.candidate, result=attempt.score.feedback
        )
    if not attempt.prompt:
        system = REFLECT.format_messages(task="", candidate="", result="")[0]
        text = f"Task:\n{task.prompt}\n\nYour attempt:\n{attempt.candidate}\n\n{request}"
        return [system, HumanMessage(text)]
    asked = [MESSAGE_TYPES[m.role](m.content) for m in attempt.prompt]
    if asked and asked[-1].type == "ai":
        asked.pop()  # the answer's prefill (see ChatActor._prefilled): the candidate holds it
    return [*asked, AIMessage(attempt.candidate), HumanMessage(request)]


def refine_request(turn: Turn) -> str:
    """What asks for the next answer after `turn`: the feedback written on it, or (when none
    was written, under --feedback generic or none) the result of checking it."""
    if turn.feedback is not None:
        return REFINE_REQUEST
    return RESULT_REQUEST.format(result=turn.attempt.score.feedback)


def correct_request(turn: Turn) -> str:
    return CORRECT_REQUEST


def refine_messages(
    task: Task, history: Sequence[Turn], request: Callable[[Turn], str] = refine_request
) -> list[BaseMessage]:
    """task, y0, fb0, ..., yt, fbt, then the request after each turn (refine, or the generic
    correction)."""
    turns = _conversation(history, request)
    turns.append(HumanMessage(request(history[-1])))
    return CONVERSATION.format_messages(task=task.prompt, history=turns)


def feedback_messages(task: Task, history: Sequence[Turn]) -> list[BaseMessage]:
    """The refine conversation up to the last answer, then a request for feedback on it."""
    turns = _conversation(history, refine_request)
    turns.append(HumanMessage(FEEDBACK_REQUEST.format(result=history[-1].attempt.score.feedback)))
    return CONVERSATION.format_messages(task=task.prompt, history=turns)


def _conversation(history: Sequence[Turn], request: Callable[[Turn], str]) -> list[BaseMessage]:
    turns: list[BaseMessage] = []
    for i, turn in enumerate(history):
        if i:
            turns.append(HumanMessage(request(history[i - 1])))
        turns.append(AIMessage(turn.attempt.candidate))
        if turn.feedback is not None:
            turns.append(HumanMessage(FEEDBACK_REQUEST.format(result=turn.attempt.score.feedback)))
            turns.append(AIMessage(turn.feedback))
    return turns
