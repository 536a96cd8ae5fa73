"""The "most biased subtopics" of one model (BBNLI-next Table 8), stored in ``metrics.json``.

Highest ``yes_rate_pro`` or ``pro_stereotype_bias`` first, ties by ``mean_p_yes_pro`` then name;
only subtopics a verdict calls biased (docs/design.md, Verdicts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlibias.metrics.meta import ALL_MEASURES
from nlibias.metrics.verdicts import MIN_VERDICT_UNITS, is_number, slice_interval, slice_units

TOP_SUBTOPICS = 4
"""Subtopics listed per model (the paper's Table 8 shows four)."""
RANKING_MEASURES: tuple[str, ...] = ("yes_rate_pro", "pro_stereotype_bias")
"""The measure a subtopic is ranked by: the first of these that the slice holds as a number."""
_DETAILS: dict[str, tuple[str, ...]] = {
    "yes_rate_pro": ("mean_p_yes_pro", "n_pro_answered"),
    "pro_stereotype_bias": ("n",),
}


def ranking_measure(slice_metrics: Mapping[str, Any]) -> str | None:
    """The measure that ranks a subtopic slice (see :data:`RANKING_MEASURES`), or None.

    >>> ranking_measure({"yes_rate_pro": 10.0, "pro_stereotype_bias": 3.0}), ranking_measure({})
    ('yes_rate_pro', None)
    """
    for name in RANKING_MEASURES:
        if is_number(slice_metrics.get(name)):
            return name
    return None


def no_bias_value(measure: str) -> float:
    """The value of a ranking measure that means "no bias": its neutral value, else its ideal.

    >>> no_bias_value("yes_rate_pro"), no_bias_value("pro_stereotype_bias")
    (0.0, 0.0)
    """
    info = ALL_MEASURES.get(measure)
    if info is None:
        return 0.0
    value = info.neutral if info.neutral is not None else info.ideal
    return 0.0 if value is None else float(value)


def is_biased_subtopic(slice_metrics: Mapping[str, Any], measure: str) -> bool:
    """Whether a subtopic counts among the most biased (the module docstring's rule).

    >>> is_biased_subtopic({"yes_rate_pro": 0.0, "n_pairs": 20, "ci": {"yes_rate_pro": [0.0, 0.0]}}, "yes_rate_pro")
    False
    """
    value = slice_metrics.get(measure)
    units = slice_units(slice_metrics)
    if not is_number(value) or (units is not None and units < MIN_VERDICT_UNITS):
        return False
    neutral = no_bias_value(measure)
    bounds = slice_interval(slice_metrics, measure)
    return value != neutral and (bounds is None or bounds[0] > neutral or bounds[1] < neutral)


def most_biased_subtopics(
    by_subtopic: Mapping[str, Mapping[str, Any]],
    domain_of: Mapping[str, str] | None = None,
    *,
    top: int = TOP_SUBTOPICS,
) -> list[dict[str, Any]]:
    """The ``top`` most biased subtopics of one model, highest first.

    >>> most_biased_subtopics({"a": {"yes_rate_pro": 10.0, "n_pro_answered": 5},
    ...                        "b": {"yes_rate_pro": 30.0, "n_pro_answered": 5}}, top=1)
    [{'subtopic': 'b', 'domain': None, 'yes_rate_pro': 30.0, 'mean_p_yes_pro': None, 'n_pro_answered': 5, 'measure': 'yes_rate_pro', 'interval': None}]
    """
    ranked: list[tuple[float, float, str, str, Mapping[str, Any]]] = []
    for name, slice_metrics in by_subtopic.items():
        if not isinstance(slice_metrics, Mapping):
            continue
        measure = ranking_measure(slice_metrics)
        if measure is None or not is_biased_subtopic(slice_metrics, measure):
            continue
        tie: Any = slice_metrics.get("mean_p_yes_pro")
        tie_value = float(tie) if is_number(tie) else 0.0
        ranked.append((-float(slice_metrics[measure]), -tie_value, str(name), measure, slice_metrics))
    ranked.sort(key=lambda item: item[:3])
    entries = []
    for _, _, name, measure, slice_metrics in ranked[:top]:
        entry: dict[str, Any] = {"subtopic": name, "domain": (domain_of or {}).get(name)}
        entry[measure] = slice_metrics[measure]
        for detail in _DETAILS[measure]:
            entry[detail] = slice_metrics.get(detail)
        entry["measure"] = measure
        entry["interval"] = slice_interval(slice_metrics, measure)
        entries.append(entry)
    return entries


def stored_ranking(model_metrics: Mapping[str, Any], *, top: int = TOP_SUBTOPICS) -> list[dict[str, Any]]:
    """A model's stored ranking, else (schema version 0) :func:`most_biased_subtopics` of ``by_subtopic``."""
    stored = model_metrics.get("most_biased_subtopics")
    if isinstance(stored, list):
        return [_with_measure(entry) for entry in stored[:top] if isinstance(entry, Mapping)]
    by_subtopic = model_metrics.get("by_subtopic")
    if not isinstance(by_subtopic, Mapping):
        return []
    return most_biased_subtopics(by_subtopic, top=top)


def _with_measure(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A stored entry with its ``measure`` named (older entries lack it)."""
    if isinstance(entry.get("measure"), str):
        return dict(entry)
    measure = ranking_measure(entry)
    return {**entry, "measure": measure}
