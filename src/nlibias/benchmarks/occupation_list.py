"""The 38 occupations of the gender-occupation set (paper 004), each with its dominant gender, as
shipped in ``nlibias/resources/occupations.json``; Table 3's hypothesis templates.

>>> occupation_named("Nurse").plural
'nurses'
"""

from __future__ import annotations

import json
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
    """The shipped 38 occupations and the gender paper 004's code assigns each.

    >>> len(load_occupations()), occupation_named("nurse").dominant_gender, occupation_named("baker").dominant_gender
    (38, 'female', 'male')
    """
    raw = json.loads((resources.files("nlibias") / "resources" / _RESOURCE_OCCUPATIONS).read_text("utf-8"))
    return parse_occupations(raw, f"nlibias/resources/{_RESOURCE_OCCUPATIONS}")


def parse_occupations(raw: dict[str, Any], path: str) -> tuple[Occupation, ...]:
    """Validate an ``occupations.json`` object: fields present, gender ``female``/``male``, no repeats.

    >>> entry = {"occupation": "nurse", "plural": "nurses", "dominant_gender": "female", "basis": "x"}
    >>> [o.name for o in parse_occupations({"occupations": [entry]}, "occupations.json")]
    ['nurse']
    """
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
