"""WinoQueer-NLI's predicates: paper 003 Table 6's 18 categories, the shipped predicate → category
mapping ("Some people" form), and the reading of a singular-subject predicate as that form."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources

from nlibias.errors import SourceError

#: The 18 predicate categories of paper 003 Table 6, in its order ("childern" typo corrected).
PREDICATE_CATEGORIES: tuple[str, ...] = (
    "religious",
    "moral",
    "naturalness/normalness",
    "physical illness, disease, and uncleanness",
    "mental illness",
    "danger to others/society",
    "intelligence and professionalism",
    "sensitivity, emotion, and attention-seeking",
    "invalid, unknown, or fake identity",
    "gender presentation/expression",
    "sexual practices",
    "lack of belonging",
    "nonmonogamy",
    "danger to children",
    "drug use",
    "general negative sentiment and slurs",
    "sexualization of identity",
    "other",
)
CATEGORY_FILE = "wq_nli_predicate_categories.csv"
"""The shipped predicate → category mapping, under ``nlibias/resources``."""


@cache
def load_predicate_categories() -> dict[str, str]:
    """The shipped mapping: predicate ("Some people" form, no final period) → category."""
    text = (resources.files("nlibias") / "resources" / CATEGORY_FILE).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    mapping: dict[str, str] = {}
    for number, record in enumerate(csv.DictReader(lines), start=2):
        predicate, category = record["predicate"], record["category"]
        if category not in PREDICATE_CATEGORIES:
            raise SourceError(
                CATEGORY_FILE, "category", f"{category!r} is not a paper Table 6 category", line=number
            )
        mapping[predicate] = category
    return mapping


_VERB_AGREEMENT = {
    "is": "are",
    "isn't": "aren't",
    "isn’t": "aren’t",
    "was": "were",
    "has": "have",
    "hasn't": "haven't",
    "hasn’t": "haven’t",
    "does": "do",
    "doesn't": "don't",
    "doesn’t": "don’t",
}
_LEADING_ADVERBS = frozenset({"usually", "just", "easily", "often", "always", "never", "also"})
_INVARIANT_VERBS = frozenset(
    {"can", "can't", "can’t", "must", "will", "won't", "won’t", "should", "would", "could", "presented"}
)
_IRREGULAR_PLURALS = {
    "man": "men",
    "woman": "women",
    "life": "lives",
    "child": "children",
    "person": "people",
}


def _plural_verb(word: str) -> str:
    low = word.lower()
    if low in _VERB_AGREEMENT:
        return _VERB_AGREEMENT[low]
    if low in _INVARIANT_VERBS:
        return word
    if low.endswith("ies") and len(low) > 4:
        return word[:-3] + "y"
    if low.endswith("s") and not low.endswith("ss"):
        return word[:-1]
    return word


def _predicate_candidates(form: str) -> Iterable[str]:
    """Plural ("Some people") readings of a predicate written for a singular subject."""
    tokens = form.split(" ")
    for i, token in enumerate(tokens):
        bare = token.lstrip('“"')
        if bare.lower() in _LEADING_ADVERBS and i + 1 < len(tokens):
            continue
        tokens = [*tokens[:i], token[: len(token) - len(bare)] + _plural_verb(bare), *tokens[i + 1 :]]
        break
    yield " ".join(tokens)
    # "is a groomer" → "are groomers"; "a real man" → "real men"; "their life" → "their lives"
    for i, token in enumerate(tokens):
        if token == "a":
            for j in range(i + 1, len(tokens)):
                plural = _IRREGULAR_PLURALS.get(tokens[j], tokens[j] + "s")
                yield " ".join([*tokens[:i], *tokens[i + 1 : j], plural, *tokens[j + 1 :]])
        elif token in _IRREGULAR_PLURALS:
            yield " ".join([*tokens[:i], _IRREGULAR_PLURALS[token], *tokens[i + 1 :]])


def canonical_predicate(form: str, known: Mapping[str, str] | None = None) -> str | None:
    """The known predicate a surface form (the hypothesis without subject and period) stands for,
    trying verb agreement, noun number, then apostrophe style; None when no reading is known.

    >>> canonical_predicate("is not a real man")
    'are not real men'
    >>> canonical_predicate("is a purple elephant") is None
    True
    """
    known = load_predicate_categories() if known is None else known
    form = form.strip().rstrip(".").strip()
    if form in known:
        return form
    readings = list(_predicate_candidates(form))
    for swap in (("'", "’"), ("’", "'")):
        readings += [r.replace(*swap) for r in readings]
    return next((r for r in readings if r in known), None)
