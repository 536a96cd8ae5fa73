"""Gender-occupation measures S, ΔP and B (paper 004, section 3.2.2) from probabilities.

>>> binary_entailment((0.2, 0.6, 0.2))
0.5
>>> binary_predictions(np.array([[0.2, 0.7, 0.1], [0.1, 0.5, 0.4], [0.3, 0.4, 0.3]])).tolist()
[0, 2, 0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nlibias.errors import DataError
from nlibias.metrics.meta import OCCUPATION_MEASURES
from nlibias.metrics.pairing import ANTI, PRO, pair_codes, provenance_labels
from nlibias.metrics.probabilities import ProbabilityPairs, refuse_missing_probabilities
from nlibias.schema.columns import SampleColumns

MEASURE_KEYS: tuple[str, ...] = tuple(OCCUPATION_MEASURES)
GROUPINGS: tuple[str, ...] = ("dominant_gender", "occupation", "hypothesis_template", "eval_set")
#: The only provenance keys the occupation measures read (an audit loads no others).
PROVENANCE_KEYS: tuple[str, ...] = GROUPINGS


def binary_entailment(probs: Sequence[float]) -> float:
    """``P_e``: entailment probability with neutral dropped, ``p_e / (p_e + p_c)`` (NaN if both 0)."""
    return float(binary_entailments(np.asarray([probs], dtype=float))[0])


def binary_predictions(probs: np.ndarray) -> np.ndarray:
    """The binary prediction of each row: 0 where ``p_e >= p_c``, 2 where less, -1 where both are 0."""
    p_e, p_c = probs[:, 0], probs[:, 2]
    codes = np.where(p_c > p_e, 2, 0)
    with np.errstate(invalid="ignore"):
        defined = (p_e + p_c) > 0.0
    return np.where(defined, codes, -1)


#: The sample column a pair's missing provenance label falls back to (None: "unknown").
_LABEL_FALLBACKS: dict[str, str | None] = {
    "dominant_gender": "group",
    "occupation": "subtopic",
    "hypothesis_template": None,
    "eval_set": None,
}
_ROLES = ("female", "male")


def binary_entailments(probs: np.ndarray) -> np.ndarray:
    """:func:`binary_entailment` of each row of a ``(rows x 3)`` array.

    >>> binary_entailments(np.array([[0.2, 0.6, 0.2], [0.0, 1.0, 0.0]])).tolist()
    [0.5, nan]
    """
    p_e, p_c = probs[:, 0], probs[:, 2]
    total = p_e + p_c
    defined = total > 0.0
    return np.divide(p_e, total, out=np.full(len(total), np.nan), where=defined)


def _role_codes(columns: SampleColumns) -> np.ndarray:
    """0 for a ``female`` hypothesis, 1 for a ``male`` one, -1 for any other group (per sample)."""
    per_value = np.fromiter(
        (_ROLES.index(v) if v in _ROLES else -1 for v in columns.group.values),
        dtype=np.int64,
        count=len(columns.group.values),
    )
    return per_value[columns.group.codes]


def pair_value_columns(
    columns: SampleColumns, probs: np.ndarray, *, model: str, labels: np.ndarray | None = None
) -> tuple[np.ndarray, dict[str, Any], list[str]]:
    """``(pairs x 4)`` values in :data:`MEASURE_KEYS` order, each pair's group labels and the ids of
    samples without a twin; ``labels`` (-1: the most probable) are what S_3way compares."""
    probs = np.asarray(probs, dtype=float)
    refuse_missing_probabilities(columns, probs, model)
    paired = pair_codes(
        columns.pair_code,
        _role_codes(columns),
        roles=_ROLES,
        unit="occupation pair",
        pair_keys=columns.pair_keys,
        ids=columns.ids,
        members="hypotheses",
    )
    female, male = paired.first, paired.second
    stereo_f, stereo_m = columns.stereotype[female], columns.stereotype[male]
    proper = ((stereo_f == PRO) & (stereo_m == ANTI)) | ((stereo_f == ANTI) & (stereo_m == PRO))
    if not proper.all():
        first_bad = int(female[np.argmin(proper)])
        raise DataError(
            f"pair {columns.pair_keys[first_bad]!r} must have one pro (stereotype-aligned) and one anti hypothesis",
            sample=columns.ids[first_bad],
            field="stereotype",
        )
    most_probable = probs.argmax(axis=1)  # first maximum wins, as LABELS[int(np.argmax(row))]
    if labels is None:
        labels = most_probable
    labels = np.asarray(labels)
    if len(labels) != len(columns):
        raise ValueError(f"{len(labels)} labels for {len(columns)} samples; pass one per sample")
    labels = np.where(labels >= 0, labels, most_probable)  # no label given: the most probable one
    p_e = binary_entailments(probs)
    pe_f, pe_m = p_e[female], p_e[male]
    binary = binary_predictions(probs)
    female_aligned = stereo_f == PRO
    defined = ~(np.isnan(pe_f) | np.isnan(pe_m))
    values = np.empty((len(female), len(MEASURE_KEYS)), dtype=float)
    binary_defined = (binary[female] >= 0) & (binary[male] >= 0)
    values[:, 0] = np.where(binary_defined, binary[female] == binary[male], np.nan)
    values[:, 1] = np.where(defined, np.abs(pe_f - pe_m), np.nan)
    higher = np.where(female_aligned, pe_f > pe_m, pe_m > pe_f)
    values[:, 2] = np.where(defined, higher, np.nan)
    values[:, 3] = labels[female] == labels[male]
    aligned = np.where(female_aligned, female, male)
    groups = {
        key: provenance_labels(columns, key, fallback, aligned) for key, fallback in _LABEL_FALLBACKS.items()
    }
    return values, groups, columns.position_ids(paired.unpaired)


def _occupation_values(
    columns: SampleColumns, probs: np.ndarray, *, model: str, labels: np.ndarray | None = None
) -> tuple[np.ndarray, dict[str, Any], dict[str, Any]]:
    values, groups, unpaired = pair_value_columns(columns, probs, model=model, labels=labels)
    overall = {"unpaired": unpaired, "dominant_gender_by_occupation": dominant_gender_by_occupation(groups)}
    return values, groups, overall


def dominant_gender_by_occupation(groups: Mapping[str, Any]) -> dict[str, str]:
    """Each occupation's dominant gender (``female/male`` where its pairs disagree).

    >>> from nlibias.schema.columns import Categorical
    >>> dominant_gender_by_occupation({"occupation": Categorical.from_values(["tailor", "nurse", "tailor"]),
    ...     "dominant_gender": Categorical.from_values(["male", "female", "male"])})
    {'nurse': 'female', 'tailor': 'male'}
    """
    occupations, genders = groups["occupation"], groups["dominant_gender"]
    seen: dict[str, set[str]] = {}
    for occupation, gender in zip(occupations, genders, strict=True):
        seen.setdefault(str(occupation), set()).add(str(gender))
    return {name: "/".join(sorted(labels)) for name, labels in sorted(seen.items())}


OCCUPATION_PAIRS = ProbabilityPairs(
    MEASURE_KEYS, _occupation_values, frozenset({"S", "B", "S_3way"}), "n_pairs", PROVENANCE_KEYS
)
#: One model's S, ΔP, B and S_3way in percent, overall and by each of :data:`GROUPINGS`.
score_occupations = OCCUPATION_PAIRS.score
score_occupations_columns = OCCUPATION_PAIRS.score_columns
