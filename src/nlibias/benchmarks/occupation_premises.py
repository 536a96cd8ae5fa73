"""The rules of an occupation premise's text, below every route that reads one: no gendered word,
at most one occupation slot or mention, no unknown placeholder, a warning for a long premise or a
possible person name; and where a text names occupations.

>>> [(m.occupation.name, m.plural) for m in find_occupations("Nurses greet the CEO.")]
[('nurse', True), ('CEO', False)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from nlibias.benchmarks.occupation_list import Occupation, load_occupations

SLOTS = ("{occupation}", "{occupations}")
#: The paper keeps premises short ("max. 10 words"); longer ones get a warning.
MAX_WORDS = 10

#: Words that mark gender; a premise containing one is rejected (paper: "man", "woman", "male", ...).
GENDERED_WORDS: frozenset[str] = frozenset(
    """man men woman women male males female females boy boys girl girls he she him her his hers
    himself herself mr mrs ms miss sir madam maam lady ladies gentleman gentlemen guy guys gal gals
    mother mothers father fathers mom moms mum mums dad dads mommy daddy son sons daughter daughters
    brother brothers sister sisters husband husbands wife wives boyfriend girlfriend fiance fiancee
    uncle uncles aunt aunts nephew nephews niece nieces king kings queen queens prince princes
    princess princesses grandmother grandfather grandma grandpa granny bride brides groom grooms
    actress actresses waitress waitresses stewardess hostess heroine widow widower spokesman
    spokeswoman chairman chairwoman businessman businessmen businesswoman businesswomen policeman
    policemen policewoman fireman firemen salesman salesmen saleswoman sportsman sportswoman
    masculine feminine manly womanly boyish girlish lad lads lass lasses""".split()  # noqa: SIM905
)
#: Capitalised words that may open a sentence without being a name.
SENTENCE_OPENERS: frozenset[str] = frozenset(
    """a an the this that these those some every each all both many most several few no one two
    three four five our your their its my we you they it i there here today yesterday tomorrow
    tonight now then later soon after before during when while as once if because although though
    since until at in on by for from with without near inside outside behind under over across
    through into onto along around after every each another other such what which who how why
    where yes not never always usually often sometimes suddenly finally again also still only just
    even however meanwhile afterwards earlier recently last next first second third lots plenty
    somebody someone everyone everybody nobody anyone people""".split()  # noqa: SIM905
)

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_LETTERS = re.compile(r"[A-Za-z]+")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


@cache
def _mention_pattern() -> tuple[re.Pattern[str], dict[str, tuple[Occupation, bool]]]:
    forms: dict[str, tuple[Occupation, bool]] = {}
    for occupation in load_occupations():
        forms[occupation.name.lower()] = (occupation, False)
        forms[occupation.plural.lower()] = (occupation, True)
    alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE), forms


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    occupation: Occupation
    plural: bool


def find_occupations(text: str) -> list[Mention]:
    """Every occupation named in ``text`` (singular or plural, any case).

    >>> [(m.occupation.name, m.plural) for m in find_occupations("Janitors greet the CEO.")]
    [('janitor', True), ('CEO', False)]
    """
    pattern, forms = _mention_pattern()
    return [Mention(m.start(), m.end(), *forms[m.group(0).lower()]) for m in pattern.finditer(text)]


def check_premise(text: str) -> list[tuple[str, str | None]]:
    """Problems of one premise or premise template, as ``(reason, offending word)``; empty if fine.

    >>> check_premise("The nurse thanked her colleague.")
    [("contains the gendered word 'her'", 'her')]
    >>> check_premise("The nurse met Alice.")[0][0]
    "'Alice' is capitalised inside the sentence: it may be a person name"
    """
    problems: list[tuple[str, str | None]] = []
    unknown = [p for p in _PLACEHOLDER.findall(text) if p not in SLOTS]
    if unknown:
        problems.append(
            (
                f"unknown placeholder {unknown[0]}; the only slots are {{occupation}} and {{occupations}}",
                unknown[0],
            )
        )
    has_slot = any(slot in text for slot in SLOTS)
    slots = sum(text.count(slot) for slot in SLOTS)
    if slots > 1:
        problems.append((f"has {slots} occupation slots; a premise names one occupation once", None))
    bare = _PLACEHOLDER.sub("OCCUPATION", text)
    for word in _LETTERS.findall(bare):
        if word.lower() in GENDERED_WORDS:
            problems.append((f"contains the gendered word {word!r}", word))
    _name_problems(bare, problems)
    named = {m.occupation.name for m in find_occupations(bare)}
    if has_slot and named:
        problems.append(
            (
                f"has an {{occupation}} slot and also names the occupation {sorted(named)[0]!r}",
                sorted(named)[0],
            )
        )
    elif not has_slot and not named:
        problems.append(("names none of the 38 occupations and has no {occupation} slot", None))
    elif len(named) > 1:
        problems.append((f"names more than one occupation ({', '.join(sorted(named))})", sorted(named)[1]))
    return problems


def _name_problems(text: str, problems: list[tuple[str, str | None]]) -> None:
    occupation_forms = _mention_pattern()[1]
    sentence_start = True
    for match in re.finditer(r"[A-Za-z][A-Za-z'’-]*|[.!?](?=\s|$)", text):
        token = match.group(0)
        if token in ".!?":
            sentence_start = True
            continue
        starts = sentence_start
        sentence_start = False
        if not token[0].isupper() or token.isupper():  # lowercase, "I", an acronym or an initial
            continue
        base = re.split(r"['’]", token)[0].lower()
        if base in occupation_forms:
            continue
        if starts and base in SENTENCE_OPENERS:
            continue
        where = (
            "at the start of a sentence and is not a common opening word" if starts else "inside the sentence"
        )
        problems.append((f"{token!r} is capitalised {where}: it may be a person name", token))
