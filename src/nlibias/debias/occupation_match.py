"""Which of the 38 occupations a premise mentions: ``words`` (whole words, singular and plural) or
``paper`` (paper 004's ``is_word_present``, to reproduce its selection); docs/debiasing.md,
"Selection".

>>> occupations_in("Two nurses, a CEO and a construction-worker.")
['nurse', 'CEO', 'construction worker']
>>> occupations_in("Two nurses, a CEO and a construction-worker.", rule="paper")
['CEO']
"""

from __future__ import annotations

import re
from functools import cache
from typing import Annotated

from annotated_types import Predicate

from nlibias.benchmarks.occupation_list import load_occupations
from nlibias.schema.declared import Allowed

MATCH_RULES = ("words", "paper")
MatchRule = Annotated[str, Predicate(MATCH_RULES.__contains__), Allowed(f"one of {str(MATCH_RULES)[1:-1]}")]
"""A match rule (declared: a function that takes one refuses another)."""


@cache
def _forms() -> dict[str, str]:
    """Lower-case form (singular or plural) → occupation name."""
    forms: dict[str, str] = {}
    for occupation in load_occupations():
        forms[occupation.name.lower()] = occupation.name
        forms[occupation.plural.lower()] = occupation.name
    return forms


@cache
def _pattern() -> re.Pattern[str]:
    forms = sorted(_forms(), key=lambda f: (-len(f), f))
    alternatives = "|".join(r"[\s-]+".join(re.escape(w) for w in form.split()) for form in forms)
    return re.compile(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])", re.IGNORECASE)


@cache
def _first_words() -> frozenset[str]:
    """The first word of every form: a premise without one of them names no occupation."""
    return frozenset(form.split()[0] for form in _forms())


_LETTERS = re.compile(r"[^\W\d_]+")


@cache
def _paper_tokens() -> dict[str, str]:
    tokens: dict[str, str] = {}
    for occupation in load_occupations():
        word = occupation.name.lower()
        tokens.setdefault(word, occupation.name)
        tokens.setdefault(word + "s", occupation.name)
    tokens["secretaries"] = "secretary"
    return tokens


def occupations_in(premise: str, *, rule: str = "words") -> list[str]:
    """The occupations ``premise`` mentions, each once, in order of first mention."""
    if rule == "paper":
        tokens = _paper_tokens()
        found = (tokens[t] for t in premise.lower().split(" ") if t in tokens)
    else:
        first_words = _first_words()
        if not any(w in first_words for w in _LETTERS.findall(premise.lower())):
            return []
        forms = _forms()
        found = (forms[re.sub(r"[\s-]+", " ", m.group(0).lower())] for m in _pattern().finditer(premise))
    return list(dict.fromkeys(found))
