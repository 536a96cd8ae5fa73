"""Which of the 38 occupations a premise mentions: the ``words`` rule (default) and the ``paper`` rule.

``words``: each occupation's singular and plural ("salespeople", "secretaries"), any case, as
whole words, so punctuation, a possessive or a hyphen may touch it ("nurse.", "nurse's",
"CEO,"), and the two words of "construction worker" may be split by spaces or a hyphen.

``paper``: paper 004's code (``is_word_present``): the lower-cased premise split on single
spaces, a token equal to the occupation or the occupation + "s" ("secretaries" listed apart). It
misses "nurse." and every two-word occupation; it is here to reproduce the paper's selection.

>>> occupations_in("Two nurses, a CEO and a construction-worker.")
['nurse', 'CEO', 'construction worker']
>>> occupations_in("Two nurses, a CEO and a construction-worker.", rule="paper")
['CEO']
"""

from __future__ import annotations

import re
from functools import cache

from nlibias.benchmarks.occupation_list import load_occupations
from nlibias.errors import ConfigError

MATCH_RULES = ("words", "paper")


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
    if rule == "words":
        first_words = _first_words()
        if not any(w in first_words for w in _LETTERS.findall(premise.lower())):
            return []
        forms = _forms()
        found = (forms[re.sub(r"[\s-]+", " ", m.group(0).lower())] for m in _pattern().finditer(premise))
    elif rule == "paper":
        tokens = _paper_tokens()
        found = (tokens[t] for t in premise.lower().split(" ") if t in tokens)
    else:
        raise ConfigError(f"{{match}} is {rule!r}; use one of {', '.join(MATCH_RULES)}", parameter="match")
    return list(dict.fromkeys(found))
