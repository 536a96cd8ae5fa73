"""Inter-annotator agreement: percent agreement, Cohen's and Fleiss' kappa (``None`` where chance
agreement is 1). ``ratings``: per item, the labels its raters gave.

>>> percent_agreement([["a", "a"], ["a", "b"]])
0.5
>>> round(cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"]), 3)
0.5
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from nlibias.metrics.agreement import cohen_kappa


def percent_agreement(ratings: Sequence[Sequence[str]]) -> float | None:
    """Fraction of items on which all raters gave the same label (None for no items)."""
    if not ratings:
        return None
    return sum(1 for item in ratings if len(set(item)) == 1) / len(ratings)


def mean_pairwise_agreement(ratings: Sequence[Sequence[str]]) -> float | None:
    """Fleiss' P̄: per item, the fraction of rater pairs that agree, averaged over items."""
    values = [
        sum(n * (n - 1) for n in Counter(item).values()) / (len(item) * (len(item) - 1))
        for item in ratings
        if len(item) >= 2
    ]
    return sum(values) / len(values) if values else None


def _count_matrix(ratings: Sequence[Sequence[str]], labels: Sequence[str]) -> list[list[int]]:
    sizes = {len(item) for item in ratings}
    if len(sizes) > 1:
        raise ValueError("Fleiss' kappa needs the same number of raters for every item")
    index = {label: j for j, label in enumerate(labels)}
    counts = [Counter(index[label] for label in item) for item in ratings]  # KeyError: a label not in labels
    return [[row[j] for j in range(len(labels))] for row in counts]


def fleiss_kappa(ratings: Sequence[Sequence[str]], labels: Sequence[str] | None = None) -> float | None:
    """Fleiss' kappa: ``(P̄ − P̄_e) / (1 − P̄_e)`` with ``P̄_e = Σ_j p_j²`` (same rater count per item)."""
    if not ratings:
        return None
    labels = list(labels) if labels is not None else sorted({x for item in ratings for x in item})
    matrix = _count_matrix(ratings, labels)
    m = len(ratings[0])
    if m < 2:
        return None
    n_items = len(matrix)
    p_j = [sum(row[j] for row in matrix) / (n_items * m) for j in range(len(labels))]
    p_bar = sum(sum(c * (c - 1) for c in row) / (m * (m - 1)) for row in matrix) / n_items
    p_e = sum(p * p for p in p_j)
    if p_e >= 1.0:
        return None
    return (p_bar - p_e) / (1.0 - p_e)


def per_label_agreement(ratings: Sequence[Sequence[str]], labels: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per label: how often raters used it, specific agreement ``Σ_i n_ij (n_ij − 1) / Σ_i n_ij (m − 1)``
    and Fleiss' (1971) per-category kappa ``1 − Σ_i n_ij (m − n_ij) / (N m (m − 1) p_j (1 − p_j))``."""
    out: dict[str, dict[str, Any]] = {}
    if not ratings:
        return {label: {"ratings": 0, "specific_agreement": None, "kappa": None} for label in labels}
    matrix = _count_matrix(ratings, labels)
    m, n_items = len(ratings[0]), len(matrix)
    for j, label in enumerate(labels):
        column = [row[j] for row in matrix]
        uses = sum(column)
        specific = sum(c * (c - 1) for c in column) / (uses * (m - 1)) if uses and m > 1 else None
        p = uses / (n_items * m)
        kappa = (
            1.0 - sum(c * (m - c) for c in column) / (n_items * m * (m - 1) * p * (1 - p))
            if 0 < p < 1 and m > 1
            else None
        )
        out[label] = {"ratings": uses, "specific_agreement": specific, "kappa": kappa}
    return out


@dataclass(frozen=True)
class AgreementReport:
    """Agreement of one round among a set of annotators."""

    round: str
    annotators: list[str]
    items: int
    """Items every one of ``annotators`` answered (kappa's items)."""
    percent: float | None
    """Percent of those items on which all annotators agree."""
    kappa: float | None
    kappa_kind: str | None
    """``cohen`` (two annotators), ``fleiss`` (more), None (fewer than two)."""
    mean_pairwise: float | None = None
    per_label: dict[str, dict[str, Any]] = field(default_factory=dict)
    by_subtopic: dict[str, dict[str, Any]] = field(default_factory=dict)
    pairwise: list[dict[str, Any]] = field(default_factory=list)
    """Every annotator pair: shared items, percent agreement and Cohen's kappa."""


def _kappa(ratings: Sequence[Sequence[str]], labels: Sequence[str]) -> tuple[float | None, str | None]:
    if not ratings or len(ratings[0]) < 2:
        return None, None
    if len(ratings[0]) == 2:
        return cohen_kappa([r[0] for r in ratings], [r[1] for r in ratings]), "cohen"
    return fleiss_kappa(ratings, labels), "fleiss"


def _pct(value: float | None) -> float | None:
    return None if value is None else 100.0 * value


def agreement_report(
    answers: Mapping[str, Mapping[str, str]],
    *,
    round_name: str,
    labels: Sequence[str],
    subtopic_of: Mapping[str, str] | None = None,
    annotators: Sequence[str] | None = None,
) -> AgreementReport:
    """Agreement over ``answers`` (item → annotator → label) among ``annotators`` (default: all), on
    the items every annotator answered (``pairwise``: the items both of a pair answered)."""
    who = sorted(annotators) if annotators is not None else sorted({a for v in answers.values() for a in v})
    complete = {item: [by[a] for a in who] for item, by in answers.items() if all(a in by for a in who)}
    ratings = list(complete.values())
    kappa, kind = _kappa(ratings, labels)
    grouped: dict[str, list[list[str]]] = {}
    for item, values in complete.items():
        if subtopic_of is not None:
            grouped.setdefault(subtopic_of.get(item, "?"), []).append(values)
    by_subtopic = {
        name: {
            "items": len(group),
            "percent": _pct(percent_agreement(group)),
            "kappa": _kappa(group, labels)[0],
        }
        for name, group in sorted(grouped.items())
    }
    pairwise = []
    for a, b in combinations(who, 2):
        shared = [(by[a], by[b]) for by in answers.values() if a in by and b in by]
        kappa_ab = cohen_kappa([p[0] for p in shared], [p[1] for p in shared]) if shared else None
        percent = _pct(percent_agreement([list(p) for p in shared]))
        pairwise.append(
            {"annotators": [a, b], "items": len(shared), "percent": percent, "cohen_kappa": kappa_ab}
        )
    return AgreementReport(
        round=round_name,
        annotators=list(who),
        items=len(ratings),
        percent=_pct(percent_agreement(ratings)) if len(who) >= 2 else None,
        kappa=kappa,
        kappa_kind=kind,
        mean_pairwise=_pct(mean_pairwise_agreement(ratings)) if len(who) >= 2 else None,
        per_label=per_label_agreement(ratings, labels) if len(who) >= 2 else {},
        by_subtopic=by_subtopic if len(who) >= 2 else {},
        pairwise=pairwise,
    )


def precision_recall(
    predicted: Sequence[str], reference: Sequence[str], labels: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Per label, a judge's ``predicted`` labels against the humans' ``reference``: precision, recall
    and support (None where a denominator is 0).

    >>> precision_recall(["a", "a", "b"], ["a", "b", "b"], ["a", "b"])["a"]
    {'precision': 0.5, 'recall': 1.0, 'predicted': 2, 'support': 1}
    """
    if len(predicted) != len(reference):
        raise ValueError("the judge and the humans must label the same items")
    out: dict[str, dict[str, Any]] = {}
    for label in labels:
        hits = sum(1 for p, r in zip(predicted, reference, strict=True) if p == r == label)
        said = sum(1 for p in predicted if p == label)
        support = sum(1 for r in reference if r == label)
        out[label] = {
            "precision": hits / said if said else None,
            "recall": hits / support if support else None,
            "predicted": said,
            "support": support,
        }
    return out


def majority_label(labels: Sequence[str]) -> str | None:
    """The label more than half of ``labels`` give (one label: itself); None on a tie or no majority.

    >>> majority_label(["a", "a", "b"]), majority_label(["a", "b"]), majority_label(["b"])
    ('a', None, 'b')
    """
    if not labels:
        return None
    label, count = Counter(labels).most_common(1)[0]
    return label if 2 * count > len(labels) else None


def judge_agreement(
    judge: Mapping[str, str | None], reference: Mapping[str, str], labels: Sequence[str]
) -> dict[str, Any]:
    """A judge's labels against the humans' reference labels on the items both have: items, percent
    agreement, Cohen's kappa, precision and recall per label.

    >>> judge_agreement({"1": "a", "2": "b"}, {"1": "a", "2": "b", "3": "a"}, ["a", "b"])["kappa"]
    1.0
    """
    shared = [item for item in reference if judge.get(item) is not None]
    predicted = [str(judge[item]) for item in shared]
    human = [reference[item] for item in shared]
    return {
        "items": len(shared),
        "percent": _pct(percent_agreement([[p, h] for p, h in zip(predicted, human, strict=True)])),
        "kappa": cohen_kappa(predicted, human) if shared else None,
        "per_label": precision_recall(predicted, human, labels),
    }
