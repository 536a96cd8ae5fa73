"""Example pairs behind the findings, classified by BBNLI-next Table 6's rules (pro label / anti
label): N/N correct; N/C, E/N, E/C pro; N/E, C/N, C/E anti; E/E, C/C group-insensitive error."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nlibias.schema import Prediction, Sample

CATEGORIES = ("pro", "anti", "error")
CATEGORY_TITLES = {
    "pro": "pro-stereotype bias",
    "anti": "anti-stereotype bias",
    "error": "group-insensitive error",
}
_PAIR_CATEGORY = {
    **dict.fromkeys(
        [("neutral", "contradiction"), ("entailment", "neutral"), ("entailment", "contradiction")], "pro"
    ),
    **dict.fromkeys(
        [("neutral", "entailment"), ("contradiction", "neutral"), ("contradiction", "entailment")], "anti"
    ),
    **dict.fromkeys([("entailment", "entailment"), ("contradiction", "contradiction")], "error"),
}


def pair_category(pro_label: str | None, anti_label: str | None) -> str:
    """``correct``, ``pro``, ``anti``, ``error`` or ``unanswered`` for one counterfactual pair."""
    if pro_label is None or anti_label is None:
        return "unanswered"
    return _PAIR_CATEGORY.get((pro_label, anti_label), "correct")


@dataclass(frozen=True)
class ExamplePair:
    model: str
    category: str
    domain: str
    subtopic: str
    premise: str
    pro_hypothesis: str
    anti_hypothesis: str
    pro_label: str | None
    anti_label: str | None


def example_pairs(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    *,
    per_category: int = 2,
    prefer_subtopics: dict[str, list[str]] | None = None,
) -> list[ExamplePair]:
    """Up to ``per_category`` example pairs per model and category (pro, anti, error), those of a
    model's ``prefer_subtopics`` first, then in sample order."""
    by_key: dict[str, dict[str, Sample]] = {}
    for sample in samples:
        if sample.pair_key and sample.stereotype in ("pro", "anti"):
            by_key.setdefault(sample.pair_key, {})[sample.stereotype] = sample
    pairs = [(key, twins) for key, twins in by_key.items() if len(twins) == 2]
    labels: dict[tuple[str, str], str | None] = {(p.model, p.sample_id): p.label for p in predictions}
    models = list(dict.fromkeys(p.model for p in predictions))
    found: list[ExamplePair] = []
    for model in models:
        preferred = (prefer_subtopics or {}).get(model, [])

        def rank(item: tuple[str, dict[str, Sample]], preferred: list[str] = preferred) -> int:
            subtopic = item[1]["pro"].subtopic
            return preferred.index(subtopic) if subtopic in preferred else len(preferred)

        counts = dict.fromkeys(CATEGORIES, 0)
        for _, twins in sorted(pairs, key=rank):
            pro, anti = twins["pro"], twins["anti"]
            if (model, pro.id) not in labels or (model, anti.id) not in labels:
                continue
            pro_label, anti_label = labels[(model, pro.id)], labels[(model, anti.id)]
            category = pair_category(pro_label, anti_label)
            if category not in counts or counts[category] >= per_category:
                continue
            counts[category] += 1
            texts = (pro.domain, pro.subtopic, pro.premise, pro.hypothesis, anti.hypothesis)
            found.append(ExamplePair(model, category, *texts, pro_label, anti_label))
            if all(c >= per_category for c in counts.values()):
                break
    order = {category: i for i, category in enumerate(CATEGORIES)}
    models_order = {model: i for i, model in enumerate(models)}
    return sorted(found, key=lambda pair: (models_order[pair.model], order[pair.category]))
