"""The BBNLI scorer: samples + one model's predictions → that model's ``metrics.json`` entry
(intervals by whole pair, bias and test units drawn apart; docs/design.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nlibias.errors import DataError
from nlibias.metrics.bbnli import (
    UNANSWERED,
    EncodedSamples,
    SliceUnits,
    encode_samples,
    label_codes,
    measures_from_totals,
    measures_of_units,
    slice_units,
)
from nlibias.metrics.bootstrap import bootstrap_intervals
from nlibias.metrics.meta import PERCENT_MEASURES
from nlibias.metrics.metric_frame import MetricFrame, check_resampling
from nlibias.schema import Prediction, Sample
from nlibias.schema.columns import SampleColumns


def unit_intervals(
    units: SliceUnits, *, resamples: int, rng: np.random.Generator, confidence: float = 0.95
) -> dict[str, list[float] | None]:
    """Percentile interval of every percent measure over resampled units (None: undefined).

    >>> units = slice_units(encode_samples(["entailment"] * 4, gold=["neutral"] * 4,
    ...     stereotype=["pro", "anti"] * 2, pair_key=["a", "a", "b", "b"]))
    >>> unit_intervals(units, resamples=50, rng=np.random.default_rng(0))["cf_error"]
    [100.0, 100.0]
    """
    n_test = int(units.is_test_unit.sum())  # test units are the last rows
    return bootstrap_intervals(
        [np.asarray(units.matrix, dtype=float)],
        measures_from_totals,
        resamples=resamples,
        rng=rng,
        confidence=confidence,
        strata=(len(units.matrix) - n_test, n_test),
    )


def bbnli_frame(
    encoded: EncodedSamples,
    *,
    groups: Mapping[str, Sequence[Any]] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> MetricFrame:
    """BBNLI measures overall and per group (``groups``: one value per sample), with ``"ci"``."""
    check_resampling(bootstrap, confidence)

    def summarise(index: np.ndarray | None, rng: np.random.Generator) -> dict[str, Any]:
        units = slice_units(encoded, index)
        result = measures_of_units(units)
        intervals = unit_intervals(units, resamples=bootstrap, confidence=confidence, rng=rng)
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
    """Every BBNLI measure overall, by domain and by subtopic, with intervals (``bootstrap=0``: none)."""
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


def align_predictions(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> list[Prediction]:
    """One model's prediction for each sample, in sample order (every sample must have one)."""
    by_id = rows_by_sample(predictions)
    missing = [s.id for s in samples if s.id not in by_id]
    if missing:
        raise missing_predictions_error(len(missing), missing[0])
    return [by_id[s.id] for s in samples]


def rows_by_sample(predictions: Sequence[Prediction]) -> dict[str, Prediction]:
    """One model's rows by sample id; rows of several models are refused."""
    models = {p.model for p in predictions}
    if len(models) > 1:
        raise DataError(f"score one model at a time, got {sorted(models)}", field="model")
    return {p.sample_id: p for p in predictions}


def missing_predictions_error(n_missing: int, first_id: str) -> DataError:
    return DataError(
        f"{n_missing} samples have no prediction (first: {first_id!r})",
        sample=first_id,
        fix="predict every sample or pass only the samples you predicted",
    )


def score_bbnli_columns(
    columns: SampleColumns,
    predicted: np.ndarray,
    *,
    gold: np.ndarray | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """:func:`compute_bbnli_report` from columns and a label code per sample (-1: no answer)."""
    predicted = np.asarray(predicted, dtype=np.int64)
    if len(predicted) != len(columns):
        raise ValueError(f"{len(predicted)} predictions for {len(columns)} samples; pass one per sample")
    if len(predicted) and (predicted.min() < UNANSWERED or predicted.max() > 2):
        raise ValueError("predicted codes must be -1 (no answer), 0, 1 or 2")
    frame = bbnli_frame(
        EncodedSamples.of_columns(columns, predicted, gold),
        groups={"domain": columns.domain, "subtopic": columns.subtopic},
        bootstrap=bootstrap,
        seed=seed,
    )
    return frame.to_dict()


def score_bbnli(
    samples: Sequence[Sample], predictions: Sequence[Prediction], *, bootstrap: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """BBNLI measures overall, by domain and by subtopic (see :func:`score_bbnli_columns`)."""
    labels = label_codes([p.label for p in align_predictions(samples, predictions)])
    return score_bbnli_columns(SampleColumns.from_samples(samples), labels, bootstrap=bootstrap, seed=seed)


def score_bbnli_probabilities(
    columns: SampleColumns,
    probs: np.ndarray,
    *,
    model: str,
    bootstrap: int = 1000,
    seed: int = 0,
    labels: np.ndarray | None = None,
) -> dict[str, Any]:
    """A classifier's BBNLI measures from its most probable labels, or from ``labels`` when given
    (a code per sample, -1: no answer; ``probs`` may then be NaN)."""
    if labels is not None:
        return score_bbnli_columns(columns, labels, bootstrap=bootstrap, seed=seed)
    if len(probs) and np.isnan(probs).any():
        first = columns.ids[int(np.flatnonzero(np.isnan(probs).any(axis=1))[0])]
        raise DataError(
            f"model {model!r} has no probabilities for sample {first!r}", sample=first, model=model
        )
    predicted = probs.argmax(axis=1) if len(probs) else np.zeros(0, dtype=np.int64)
    return score_bbnli_columns(columns, predicted, bootstrap=bootstrap, seed=seed)
