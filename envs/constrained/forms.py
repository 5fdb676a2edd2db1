"""The forms a concept may take in a sentence: a noun's singular and plural, a verb's -s, past,
past participle and -ing forms, made by English spelling rules plus the irregular ones listed
in `words`. Matching a text against these sets is the lemmatization the coverage check needs,
with no model or downloaded data.

    >>> sorted(forms("run"))
    ['ran', 'run', 'running', 'runs']
    >>> sorted(forms("leaf"))
    ['leaf', 'leafs', 'leaves']
"""

from __future__ import annotations

import re
from functools import cache

from envs.constrained.words import IRREGULAR_PAST, IRREGULAR_PLURAL, NOUNS, VERBS

VOWELS = set("aeiou")
WORD = re.compile(r"[a-z]+")


@cache
def forms(concept: str) -> frozenset[str]:
    """Every form of `concept` counted as a use of it (a word may be both a noun and a verb)."""
    out = {concept}
    if concept in NOUNS:
        out |= {IRREGULAR_PLURAL.get(concept, _plural(concept)), _plural(concept)}
    if concept in VERBS:
        out |= {_third_person(concept), _ing(concept)}
        out |= set(IRREGULAR_PAST.get(concept, (_past(concept),) * 2))
    return frozenset(out)


def used(concepts: list[str], text: str) -> list[str]:
    """The concepts that appear in `text` in one of their forms, in the order given.

    >>> used(["dog", "run", "lake"], "The dogs ran along the shore.")
    ['dog', 'run']
    """
    words = set(WORD.findall(text.lower()))
    return [c for c in concepts if forms(c) & words]


def _plural(noun: str) -> str:
    if noun.endswith(("s", "sh", "ch", "x", "z")):
        return noun + "es"
    if noun.endswith("y") and noun[-2] not in VOWELS:
        return noun[:-1] + "ies"
    return noun + "s"


def _third_person(verb: str) -> str:
    return _plural(verb)  # the same spelling rules: watches, flies, runs


def _past(verb: str) -> str:
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2] not in VOWELS:
        return verb[:-1] + "ied"
    return _doubled(verb) + "ed"


def _ing(verb: str) -> str:
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    return _doubled(verb) + "ing"


def _doubled(verb: str) -> str:
    """stop -> stopp (for stopped, stopping): one short vowel before one final consonant."""
    if verb in ("open",):  # stressed on the first syllable: opened, opening
        return verb
    short = len(verb) <= 4 and verb[-1] not in VOWELS | {"w", "x", "y"}
    if short and verb[-2] in VOWELS and verb[-3:-2] not in VOWELS:
        return verb + verb[-1]
    return verb
