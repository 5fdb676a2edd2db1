"""Question-answer scoring as in SQuAD: normalized exact match and token F1.

>>> normalize_answer("The  Eiffel Tower!")
'eiffel tower'
>>> exact_match("the eiffel tower", "Eiffel Tower."), round(token_f1("eiffel", "Eiffel Tower"), 2)
(True, 0.67)
>>> final_answer("Paris is the capital.\\nAnswer: Paris")
'Paris'
"""

from __future__ import annotations

import re
import string
from collections import Counter

ARTICLES = re.compile(r"\b(a|an|the)\b")
ANSWER_MARK = re.compile(r"answer\s*:", re.IGNORECASE)
PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lowercase, drop punctuation and the articles a/an/the, collapse whitespace (SQuAD)."""
    text = "".join(ch for ch in text.lower() if ch not in PUNCTUATION)
    return " ".join(ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, gold: str) -> bool:
    return normalize_answer(prediction) == normalize_answer(gold)


def token_f1(prediction: str, gold: str) -> float:
    """Harmonic mean of token precision and recall after normalization."""
    predicted, wanted = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not predicted or not wanted:
        return float(predicted == wanted)
    common = sum((Counter(predicted) & Counter(wanted)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def final_answer(text: str) -> str:
    """The model's answer: what follows the last "Answer:", else the last non-empty line."""
    marks = list(ANSWER_MARK.finditer(text))
    if marks:
        after = text[marks[-1].end() :].strip()
        return after.split("\n", 1)[0].strip() if after else ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
