"""Code extraction from model answers of every shape; no usable code is a CodeExtractionError."""

from __future__ import annotations

from typing import Any

import pytest

from envs.code_tasks.extract import CodeExtractionError, extract_code

PROMPT = '''from typing import List


def is_even(n: int) -> bool:
    """ Helper the prompt defines. """
    return n % 2 == 0


def count_even(numbers: List[int]) -> int:
    """ Count the even numbers.
    >>> count_even([1, 2, 4])
    2
    """
'''
SOLUTION = (
    "def count_even(numbers: List[int]) -> int:\n    return sum(is_even(n) for n in numbers)\n"
)


def run(code: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(code, "extracted", "exec"), namespace)  # trusted test code, our own strings
    return namespace["count_even"]([1, 2, 4, 6])


def test_fenced_block_gets_the_prompt_imports_and_helpers() -> None:
    code = extract_code(f"Here you go:\n```python\n{SOLUTION}```\nDone.", "count_even", PROMPT)
    assert code.startswith("from typing import List")
    assert "def is_even" in code and run(code) == 3


def test_the_block_that_defines_the_function_wins_over_a_usage_example() -> None:
    answer = f"```python\n{SOLUTION}```\nUsage:\n```python\nprint(count_even([2]))\n```"
    assert "sum(is_even" in extract_code(answer, "count_even", PROMPT)


def test_of_two_blocks_defining_the_function_the_last_wins() -> None:
    first = "def count_even(numbers):\n    return 0\n"
    answer = f"```python\n{first}```\nBetter:\n```py\n{SOLUTION}```"
    assert run(extract_code(answer, "count_even", PROMPT)) == 3


def test_blocks_in_other_languages_are_ignored() -> None:
    answer = f"```bash\npython solve.py\n```\n```python\n{SOLUTION}```"
    assert "python solve.py" not in extract_code(answer, "count_even", PROMPT)


def test_bare_code() -> None:
    assert run(extract_code(SOLUTION, "count_even", PROMPT)) == 3


def test_code_with_prose_around_it_and_no_fence() -> None:
    answer = f"Sure! Here is the function.\n\n{SOLUTION}\nIt counts the even numbers."
    assert run(extract_code(answer, "count_even", PROMPT)) == 3


def test_a_body_without_its_signature_gets_the_prompt() -> None:
    code = extract_code("    return sum(1 for n in numbers if n % 2 == 0)\n", "count_even", PROMPT)
    assert code.startswith(PROMPT.rstrip("\n")) and run(code) == 3


def test_an_unindented_body_in_a_fence_gets_the_prompt() -> None:
    answer = "```python\nreturn len([n for n in numbers if is_even(n)])\n```"
    assert run(extract_code(answer, "count_even", PROMPT)) == 3


def test_an_answer_that_repeats_the_prompt() -> None:
    answer = PROMPT + "    return sum(is_even(n) for n in numbers)\n"
    assert run(extract_code(answer, "count_even", PROMPT)) == 3


def test_an_answer_cut_off_inside_its_fence() -> None:
    answer = f"```python\n{SOLUTION}"  # the token limit ended it before the closing fence
    assert run(extract_code(answer, "count_even", PROMPT)) == 3


def test_the_codes_own_helper_is_kept_instead_of_the_prompts() -> None:
    own = "def is_even(n):\n    return n % 2 == 1  # its own (odd) idea\n\n" + SOLUTION
    code = extract_code(own, "count_even", PROMPT)
    assert code.count("def is_even") == 1 and run(code) == 1


def test_top_level_demo_code_is_dropped() -> None:
    demo = "print(count_even([2]))\nassert count_even([2]) == 5  # its own wrong test\n"
    loop = "for case in [[1], [2]]:\n    print(count_even(case))\nwhile True:\n    input()\n"
    setup = "import sys\nsys.setrecursionlimit(5000)\nEVENS = []\n"
    setup += "for i in range(3):\n    EVENS.append(2 * i)\n"  # set-up code stays
    answer = f"```python\n{setup}{SOLUTION}\n{demo}{loop}```"
    code = extract_code(answer, "count_even", PROMPT)
    assert "print" not in code and "assert" not in code and "input" not in code
    assert setup in code and run(code) == 3


def test_future_import_stays_first() -> None:
    answer = "from __future__ import annotations\n\n" + SOLUTION
    code = extract_code(answer, "count_even", PROMPT)
    assert code.startswith("from __future__ import annotations\n") and run(code) == 3


def test_a_prompt_in_prose_adds_nothing() -> None:
    code = extract_code("def f(x):\n    return x\n", "f", "Write f(x) that returns x.")
    assert code == "def f(x):\n    return x\n"


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "the answer is empty"),
        ("   \n\n", "the answer is empty"),
        ("I am not sure how to solve this.", "no Python code in the answer parses"),
        ("```python\ndef count_even(numbers:\n```", "no Python code in the answer parses"),
        ("def other(x):\n    return x\n", "does not define `count_even`"),
        ("```python\nclass count_even_helper:\n    pass\n```\n", "does not define `count_even`"),
    ],
)
def test_no_usable_code_is_an_error_with_a_reason(answer: str, reason: str) -> None:
    with pytest.raises(CodeExtractionError, match=reason):
        extract_code(answer, "count_even", "def count_even(numbers):\n    '''Count.'''\n")


def test_the_error_is_a_value_error() -> None:
    assert issubclass(CodeExtractionError, ValueError)


def test_backticks_in_prose_open_no_block() -> None:
    """A reply that names a fence in its prose before its code: the prose's backticks open no
    block, so the code that follows is read, not the prose between them."""
    reply = f"I put the code in a ```python block, as asked:\n```python\n{SOLUTION}```"
    assert run(extract_code(reply, "count_even", PROMPT)) == 3
