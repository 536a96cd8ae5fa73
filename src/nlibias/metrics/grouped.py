"""BBNLI measures overall and per group, with bootstrap CIs, as a :class:`~nlibias.metrics.metric_frame.MetricFrame`.

Confidence intervals are percentile bootstrap intervals. The resampling unit is a whole
counterfactual pair (an unpaired bias sample and a test sample are units of their own), drawn
with replacement within each slice, separately for bias-audit units and test units (so a resample
keeps the slice's number of bias units and of test units). Per slice the units' counts form a
``(units x counts)`` matrix ``C``; a ``(B x units)`` matrix ``W`` of how often each unit was drawn
gives all ``B`` resampled count vectors as ``W @ C`` in one product. A resample in which a measure
is undefined (e.g. no pair drawn) is left out of that measure's percentiles. Each slice's random
stream is seeded from ``(seed, slice name)``, so a slice's interval does not depend on which other
slices exist.

>>> report = compute_bbnli_report(
...     ["entailment", "neutral"], gold=["neutral"] * 2, stereotype=["pro", "anti"],
...     pair_key=["k", "k"], domain=["gender"] * 2, subtopic=["t"] * 2, ids=["a", "b"], bootstrap=0)
>>> report["by_subtopic"]["t"]["cf_pro"], report["overall"]["ci"]["cf_pro"]
(50.0, None)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nlibias.metrics.bbnli import (
    EncodedSamples,
    SliceUnits,
    encode_samples,
    measures_from_totals,
    measures_of_units,
    slice_units,
)
from nlibias.metrics.meta import PERCENT_MEASURES
from nlibias.metrics.metric_frame import MetricFrame, check_resampling
from nlibias.metrics.resampling import chunk_sizes, unit_draw_counts


def _resampled_totals(rows: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(resamples, columns)``: the column sums of ``rows`` in each resample of its rows."""
    return np.vstack(
        [unit_draw_counts(len(rows), size, rng) @ rows for size in chunk_sizes(resamples, len(rows))]
    )


def bootstrap_intervals(
    units: SliceUnits,
    *,
    resamples: int,
    confidence: float = 0.95,
    rng: np.random.Generator,
) -> dict[str, list[float] | None]:
    """Percentile interval ``[lo, hi]`` of every percent measure; ``None`` when never defined.

    >>> from nlibias.metrics.bbnli import encode_samples, slice_units
    >>> units = slice_units(encode_samples(["entailment"] * 4, gold=["neutral"] * 4,
    ...     stereotype=["pro", "anti"] * 2, pair_key=["a", "a", "b", "b"]))
    >>> bootstrap_intervals(units, resamples=50, rng=np.random.default_rng(0))["cf_error"]
    [100.0, 100.0]
    """
    if resamples <= 0:
        return dict.fromkeys(PERCENT_MEASURES)
    matrix = np.asarray(units.matrix, dtype=float)
    first_test = len(matrix) - int(units.is_test_unit.sum())  # test units are the last rows
    bias_rows, test_rows = matrix[:first_test], matrix[first_test:]  # views, not copies
    # Chunked so that memory stays flat for big runs (the same draws as one big draw).
    totals = _resampled_totals(bias_rows, resamples, rng)
    totals += _resampled_totals(test_rows, resamples, rng)
    tail = (1.0 - confidence) / 2.0 * 100.0
    intervals: dict[str, list[float] | None] = {}
    for name, values in measures_from_totals(totals).items():
        defined = values[~np.isnan(values)]
        if defined.size == 0:
            intervals[name] = None
            continue
        lo, hi = np.percentile(defined, [tail, 100.0 - tail])
        intervals[name] = [float(lo), float(hi)]
    return intervals


def bbnli_frame(
    encoded: EncodedSamples,
    *,
    groups: Mapping[str, Sequence[Any]] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> MetricFrame:
    """BBNLI measures overall and for every value of every grouping, as a :class:`MetricFrame`.

    ``encoded`` is :func:`~nlibias.metrics.bbnli.encode_samples`' output (or columns coded the same
    way); ``groups`` maps a grouping name to one group value per sample, e.g.
    ``{"domain": [...], "subtopic": [...]}``. Every slice dict is
    :func:`~nlibias.metrics.bbnli.bbnli_measures`' output plus ``"ci"``: ``{measure: [lo, hi] or None}``.

    >>> frame = bbnli_frame(encode_samples(["entailment", "neutral", "contradiction", "contradiction"],
    ...     gold=["neutral"] * 4, stereotype=["pro", "anti"] * 2, pair_key=["a", "a", "b", "b"]),
    ...     groups={"domain": ["race", "race", "gender", "gender"]}, bootstrap=0)
    >>> frame.by_group["domain"]["race"]["cf_pro"], frame.by_group["domain"]["gender"]["cf_error"]
    (50.0, 100.0)
    >>> frame.worst_group("cf_error", by="domain"), frame.difference("cf_pro", by="domain")
    (('gender', 100.0), 50.0)
    """
    check_resampling(bootstrap, confidence)

    def summarise(index: np.ndarray | None, rng: np.random.Generator) -> dict[str, Any]:
        units = slice_units(encoded, index)
        result = measures_of_units(units)
        intervals = bootstrap_intervals(units, resamples=bootstrap, confidence=confidence, rng=rng)
        result["ci"] = {m: None if result[m] is None else intervals[m] for m in PERCENT_MEASURES}
        return result

    return MetricFrame(summarise, n_units=len(encoded), groups=groups, seed=seed)


def compute_bbnli_report(
    predicted: Sequence[str | None],
    *,
    gold: Sequence[str],
    stereotype: Sequence[str | None],
    pair_key: Sequence[Any],
    domain: Sequence[str],
    subtopic: Sequence[str],
    ids: Sequence[Any],
    premise: Sequence[str] | None = None,
    hypothesis: Sequence[str] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Every BBNLI measure overall, per domain and per subtopic, with bootstrap CIs.

    Returns ``{"overall": M, "by_domain": {domain: M}, "by_subtopic": {subtopic: M}}`` (groups
    sorted by name), where each ``M`` is :func:`nlibias.metrics.bbnli.bbnli_measures`' output
    (``unpaired`` / ``unanswered`` list ``ids``) plus ``"ci": {measure: [lo, hi] or None}``.
    ``bootstrap=0`` disables the intervals (all ``None``). Plain Python values only.
    """
    encoded = encode_samples(
        predicted,
        gold=gold,
        stereotype=stereotype,
        pair_key=pair_key,
        premise=premise,
        hypothesis=hypothesis,
        ids=ids,
    )
    groups = {"domain": domain, "subtopic": subtopic}
    return bbnli_frame(
        encoded, groups=groups, bootstrap=bootstrap, seed=seed, confidence=confidence
    ).to_dict()
