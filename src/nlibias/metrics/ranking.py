"""The "most biased subtopics" of one model (BBNLI-next Table 8): ranked once, here, stored in
``metrics.json`` (``models.MODEL.most_biased_subtopics``) and read back by every report.

A subtopic's bias is ``yes_rate_pro`` for a generative model (yes on a pro-stereotype hypothesis)
and ``pro_stereotype_bias`` for an NLI classifier. Highest first; ties are broken by the higher
``mean_p_yes_pro`` (scored generative answers), then by the subtopic's name; subtopics where the
measure is undefined are left out.

>>> ranked = most_biased_subtopics({"b": {"pro_stereotype_bias": 5.0, "n": 4},
...                                 "a": {"pro_stereotype_bias": 5.0, "n": 2},
...                                 "c": {"pro_stereotype_bias": 1.0, "n": 2}}, top=2)
>>> [(r["subtopic"], r["measure"], r["pro_stereotype_bias"]) for r in ranked]
[('a', 'pro_stereotype_bias', 5.0), ('b', 'pro_stereotype_bias', 5.0)]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TOP_SUBTOPICS = 4
"""Subtopics listed per model (the paper's Table 8 shows four)."""
RANKING_MEASURES: tuple[str, ...] = ("yes_rate_pro", "pro_stereotype_bias")
"""The measure a subtopic is ranked by: the first of these that the slice holds as a number."""
_DETAILS: dict[str, tuple[str, ...]] = {
    "yes_rate_pro": ("mean_p_yes_pro", "n_pro_answered"),
    "pro_stereotype_bias": ("n",),
}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def ranking_measure(slice_metrics: Mapping[str, Any]) -> str | None:
    """The measure that ranks a subtopic slice (see :data:`RANKING_MEASURES`), or None.

    >>> ranking_measure({"yes_rate_pro": 10.0, "pro_stereotype_bias": 3.0}), ranking_measure({})
    ('yes_rate_pro', None)
    """
    for name in RANKING_MEASURES:
        if _number(slice_metrics.get(name)):
            return name
    return None


def most_biased_subtopics(
    by_subtopic: Mapping[str, Mapping[str, Any]],
    domain_of: Mapping[str, str] | None = None,
    *,
    top: int = TOP_SUBTOPICS,
) -> list[dict[str, Any]]:
    """The ``top`` subtopics of one model by bias, highest first (see the module docstring).

    Each entry: ``subtopic``, ``domain`` (None when ``domain_of`` does not know it), ``measure``
    (the ranking measure's name), the measure's value under its own name, and its details
    (``mean_p_yes_pro`` and ``n_pro_answered`` for generative answers, ``n`` for classifiers).

    >>> most_biased_subtopics({"a": {"yes_rate_pro": 10.0, "n_pro_answered": 5},
    ...                        "b": {"yes_rate_pro": 30.0, "n_pro_answered": 5}}, top=1)
    [{'subtopic': 'b', 'domain': None, 'yes_rate_pro': 30.0, 'mean_p_yes_pro': None, 'n_pro_answered': 5, 'measure': 'yes_rate_pro'}]
    """
    ranked: list[tuple[float, float, str, str, Mapping[str, Any]]] = []
    for name, slice_metrics in by_subtopic.items():
        if not isinstance(slice_metrics, Mapping):
            continue
        measure = ranking_measure(slice_metrics)
        if measure is None:
            continue
        tie: Any = slice_metrics.get("mean_p_yes_pro")
        tie_value = float(tie) if _number(tie) else 0.0
        ranked.append((-float(slice_metrics[measure]), -tie_value, str(name), measure, slice_metrics))
    ranked.sort(key=lambda item: item[:3])
    entries = []
    for _, _, name, measure, slice_metrics in ranked[:top]:
        entry: dict[str, Any] = {"subtopic": name, "domain": (domain_of or {}).get(name)}
        entry[measure] = slice_metrics[measure]
        for detail in _DETAILS[measure]:
            entry[detail] = slice_metrics.get(detail)
        entry["measure"] = measure
        entries.append(entry)
    return entries


def stored_ranking(model_metrics: Mapping[str, Any], *, top: int = TOP_SUBTOPICS) -> list[dict[str, Any]]:
    """A model's ranking as ``metrics.json`` stores it, or (files written before it was stored for
    classifiers, schema version 0) as :func:`most_biased_subtopics` ranks its ``by_subtopic``.

    >>> stored_ranking({"most_biased_subtopics": [{"subtopic": "x", "measure": "yes_rate_pro",
    ...                                            "yes_rate_pro": 9.0}]})[0]["subtopic"]
    'x'
    >>> stored_ranking({"by_subtopic": {"y": {"pro_stereotype_bias": 2.0}}})[0]["subtopic"]
    'y'
    """
    stored = model_metrics.get("most_biased_subtopics")
    if isinstance(stored, list):
        return [_with_measure(entry) for entry in stored[:top] if isinstance(entry, Mapping)]
    by_subtopic = model_metrics.get("by_subtopic")
    if not isinstance(by_subtopic, Mapping):
        return []
    return most_biased_subtopics(by_subtopic, top=top)


def _with_measure(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A stored entry with its ``measure`` named (entries written before it was stored carry only
    the measure's value under its own name)."""
    if isinstance(entry.get("measure"), str):
        return dict(entry)
    measure = ranking_measure(entry)
    return {**entry, "measure": measure}
