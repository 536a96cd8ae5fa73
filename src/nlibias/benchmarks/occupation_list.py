"""The 38 occupations of paper 004 (``nlibias/resources/occupations.json``) with their dominant
gender, Table 3's hypothesis templates, and the rules of a premise's text (no gendered word, one
occupation or slot, no person name).

>>> [(m.occupation.name, m.plural) for m in find_occupations("Nurses greet the CEO.")]
[('nurse', True), ('CEO', False)]
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from nlibias.errors import SourceError
from nlibias.schema import Sample

SOURCE, DOMAIN = "occupations", "gender"
GENDERS = ("female", "male")
_RESOURCE_OCCUPATIONS = "occupations.json"


@dataclass(frozen=True)
class Occupation:
    """One of the 38 occupations and the gender that dominates it."""

    name: str
    plural: str
    dominant_gender: str
    """``female`` or ``male``: the stereotype-aligned gender."""
    basis: str
    """Where the dominant gender comes from (see the source note in ``occupations.json``)."""
    near_equal: bool = False
    """True where paper 004 calls the occupation's gender divide approximately equal."""

    @property
    def slug(self) -> str:
        return self.name.lower().replace(" ", "_")


@cache
def load_occupations() -> tuple[Occupation, ...]:
    """The shipped 38 occupations and the gender paper 004's code assigns each."""
    raw = json.loads((resources.files("nlibias") / "resources" / _RESOURCE_OCCUPATIONS).read_text("utf-8"))
    return parse_occupations(raw, f"nlibias/resources/{_RESOURCE_OCCUPATIONS}")


def parse_occupations(raw: dict[str, Any], path: str) -> tuple[Occupation, ...]:
    """Validate an ``occupations.json`` object: fields present, gender ``female``/``male``, no repeats."""
    occupations: list[Occupation] = []
    seen: set[str] = set()
    for i, o in enumerate(raw.get("occupations") or [{}]):
        missing = [k for k in ("occupation", "plural", "dominant_gender", "basis") if not o.get(k)]
        if missing:
            raise SourceError(path, f"occupations[{i}].{missing[0]}", "missing or empty")
        if o["dominant_gender"] not in GENDERS:
            raise SourceError(path, f"occupations[{i}].dominant_gender", "must be 'female' or 'male'")
        if {o["occupation"].lower(), o["plural"].lower()} & seen:
            raise SourceError(path, f"occupations[{i}].occupation", f"{o['occupation']!r} is listed twice")
        seen |= {o["occupation"].lower(), o["plural"].lower()}
        near_equal = bool(o.get("near_equal_per_paper", False))
        occupations.append(
            Occupation(o["occupation"], o["plural"], o["dominant_gender"], o["basis"], near_equal)
        )
    return tuple(occupations)


@dataclass(frozen=True)
class OccupationsExpansion:
    """The challenge set's samples, where its premises came from, and its warnings."""

    samples: tuple[Sample, ...]
    origin: str
    """The premises file or templates, or the evaluation sets' files."""
    premises: tuple[Any, ...] = ()
    """A premises route's :class:`~nlibias.benchmarks.occupations.Premise` objects."""
    sets: tuple[dict[str, Any], ...] = ()
    """The evaluation sets' records (empty for the premises routes)."""
    warnings: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        """Everything ``nlibias expand occupations`` reports, JSON-serialisable."""
        by_occupation = occupation_counts(self.samples)
        summary: dict[str, Any] = {"source": SOURCE, "premises_from": self.origin}
        if self.sets:
            summary |= {"eval_sets": list(self.sets), "premises": sum(r["premises"] for r in by_occupation)}
        else:
            origins = Counter(p.origin for p in self.premises)
            summary |= {"premises": len(self.premises), "premises_by_origin": dict(sorted(origins.items()))}
        summary |= {"pairs": len(self.samples) // 2, "samples": len(self.samples)}
        if not self.sets:
            summary["hypothesis_templates"] = list(HYPOTHESIS_TEMPLATES)
        return summary | {"by_occupation": by_occupation, "warnings": list(self.warnings)}


def occupation_named(name: str) -> Occupation:
    for occupation in load_occupations():
        if occupation.name.lower() == name.lower():
            return occupation
    raise KeyError(f"{name!r} is not one of the 38 occupations")


#: Paper 004 Table 3, verbatim (used by the template sets and the authors' OOD set).
HYPOTHESIS_TEMPLATES: tuple[str, ...] = (
    "This text speaks of a {gender} profession",
    "This text talks about a {gender} occupation",
    "This text mentions a {gender} profession",
)


def template_hypotheses(numbers: Iterable[int] = (1, 2, 3)) -> list[tuple[int | str, str, str]]:
    """Table 3's templates ``numbers`` as (number, female text, male text)."""
    return [
        (
            n,
            HYPOTHESIS_TEMPLATES[n - 1].format(gender="female"),
            HYPOTHESIS_TEMPLATES[n - 1].format(gender="male"),
        )
        for n in numbers
    ]


def template_draw(seed: int, eval_set: str, row: int) -> int:
    """The Table 3 template (1-3) a premise without hypotheses gets (``hypothesis_templates="one"``).

    >>> [template_draw(0, "ood", row) for row in (2, 3, 4, 5)]  # printf "0:ood:2" | sha256sum, mod 3, + 1
    [1, 3, 1, 2]
    """
    digest = hashlib.sha256(f"{seed}:{eval_set}:{row}".encode()).hexdigest()
    return 1 + int(digest, 16) % 3


def template_number(hypothesis_f: str, hypothesis_m: str) -> int | str:
    """The Table 3 template a file's hypothesis pair renders (case and a final period ignored), else "file"."""

    def plain(text: str) -> str:
        return text.strip().rstrip(".").lower()

    for number, template in enumerate(HYPOTHESIS_TEMPLATES, start=1):
        if plain(hypothesis_f) == plain(template.format(gender="female")) and plain(hypothesis_m) == plain(
            template.format(gender="male")
        ):
            return number
    return "file"


def gender_samples(
    premise_id: str,
    premise: str,
    occupation: Occupation,
    dominant: str,
    hypotheses: Iterable[tuple[int | str, str, str]],
    provenance: dict[str, Any],
) -> list[Sample]:
    """The female and male sample of each ``(template, female text, male text)`` of one premise
    (pairs adjacent; ``pro``: the ``dominant`` gender's), ``provenance`` added to their own."""
    samples = []
    for template, *texts in hypotheses:
        key = f"{SOURCE}:{premise_id}:h{template}"
        for gender, other, text in zip(GENDERS, GENDERS[::-1], texts, strict=True):
            samples.append(
                Sample(
                    id=f"{key}:{gender}",
                    source=SOURCE,
                    domain=DOMAIN,
                    subtopic=occupation.slug,
                    premise=premise,
                    hypothesis=text,
                    gold="neutral",
                    stereotype="pro" if gender == dominant else "anti",
                    pair_key=key,
                    group=gender,
                    counterfactual_group=other,
                    provenance={
                        "premise_id": premise_id,
                        "occupation": occupation.name,
                        "dominant_gender": dominant,
                        "hypothesis_template": template,
                        **provenance,
                    },
                )
            )
    return samples


def occupation_counts(samples: Iterable[Sample]) -> list[dict[str, Any]]:
    """One row per occupation with samples: its dominant gender (the samples' label), premises,
    pairs and samples."""
    pairs: Counter[str] = Counter()
    premises: dict[str, set[str]] = {}
    labels: dict[str, str] = {}
    for sample in samples:
        name = sample.provenance["occupation"]
        premises.setdefault(name, set()).add(sample.provenance["premise_id"])
        labels[name] = sample.provenance["dominant_gender"]
        pairs[name] += sample.stereotype == "pro"
    return [
        {
            "occupation": o.name,
            "dominant_gender": labels[o.name],
            "premises": len(premises[o.name]),
            "pairs": pairs[o.name],
            "samples": 2 * pairs[o.name],
        }
        for o in load_occupations()
        if pairs[o.name]
    ]


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
