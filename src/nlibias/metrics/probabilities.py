"""The one scorer of the probability-pair benchmarks (WQ-NLI, occupations): each declares its
per-pair values as a :class:`ProbabilityPairs`; the frame, intervals and sample alignment are shared."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlibias.errors import DataError
from nlibias.metrics.bbnli_scorer import align_predictions
from nlibias.metrics.metric_frame import units_frame
from nlibias.schema import LABEL_INDEX, Prediction, Sample
from nlibias.schema.columns import SampleColumns


def aligned_probabilities(
    samples: Sequence[Sample], predictions: Sequence[Prediction]
) -> tuple[np.ndarray, str]:
    """``(samples x 3)`` probabilities in sample order (NaN: none) and the model."""
    return probability_rows(align_predictions(samples, predictions))


def probability_rows(aligned: Sequence[Prediction]) -> tuple[np.ndarray, str]:
    """:func:`aligned_probabilities` of predictions already in sample order (one model)."""
    rows = [(math.nan,) * 3 if p.probs is None else p.probs for p in aligned]
    model = aligned[0].model if aligned else ""
    return np.array(rows, dtype=float).reshape(len(aligned), 3), model


def prediction_label_codes(predictions: Sequence[Prediction]) -> np.ndarray:
    """Each prediction's label code (:data:`~nlibias.schema.LABELS` order, other text above 2; -1: none).

    >>> prediction_label_codes([Prediction("a", "m", "neutral"), Prediction("b", "m", None)]).tolist()
    [1, -1]
    """
    codes = dict(LABEL_INDEX)
    return np.fromiter(
        (-1 if p.label is None else codes.setdefault(p.label, len(codes)) for p in predictions),
        dtype=np.int64,
        count=len(predictions),
    )


PairValues = Callable[..., tuple[np.ndarray, Mapping[str, Any], dict[str, Any]]]
"""``(columns, probs, *, model, labels)`` → ``(pairs x measures)`` values, each pair's group labels
and what the overall slice adds (its unpaired samples and the like)."""


@dataclass(frozen=True)
class ProbabilityPairs:
    """A probability-pair benchmark's measures: its per-pair values, averaged in percent with
    intervals by resampling pairs."""

    keys: tuple[str, ...]
    values: PairValues
    count_measures: frozenset[str]
    """The measures whose numerator is also reported as a count."""
    n_key: str
    """The name of a slice's unit count (``n_rows``, ``n_pairs``)."""
    provenance_keys: tuple[str, ...]
    """The only provenance keys the values read (an audit loads no others)."""

    def score_columns(
        self,
        columns: SampleColumns,
        probs: np.ndarray,
        *,
        model: str,
        bootstrap: int = 1000,
        seed: int = 0,
        confidence: float = 0.95,
        labels: np.ndarray | None = None,
    ) -> dict[str, Any]:
        """The measures from sample columns and a ``(samples x 3)`` probability array (``labels``:
        a label code per sample, -1 the most probable; read where a measure compares labels)."""
        values, groups, overall = self.values(columns, probs, model=model, labels=labels)
        frame = units_frame(
            values,
            self.keys,
            groups=groups,
            count_measures=self.count_measures,
            bootstrap=bootstrap,
            seed=seed,
            n_key=self.n_key,
            confidence=confidence,
        )
        frame.overall |= overall
        return frame.to_dict()

    def score(
        self,
        samples: Sequence[Sample],
        predictions: Sequence[Prediction],
        *,
        bootstrap: int = 1000,
        seed: int = 0,
        confidence: float = 0.95,
    ) -> dict[str, Any]:
        """:meth:`score_columns` of samples and one model's predictions."""
        aligned = align_predictions(samples, predictions)
        probs, model = probability_rows(aligned)
        columns = SampleColumns.from_samples(samples, provenance_keys=self.provenance_keys)
        labels = prediction_label_codes(aligned)
        return self.score_columns(
            columns, probs, model=model, labels=labels, bootstrap=bootstrap, seed=seed, confidence=confidence
        )


def refuse_missing_probabilities(columns: SampleColumns, probs: np.ndarray, model: str) -> None:
    if probs.shape != (len(columns), 3):
        raise ValueError(f"probs has shape {probs.shape}; pass one row of 3 probabilities per sample")
    without = np.flatnonzero(np.isnan(probs).all(axis=1))
    if len(without):
        raise _no_probabilities_error(model, len(without), len(columns), columns.ids[int(without[0])])


def _no_probabilities_error(model: str, n_without: int, n_samples: int, first_id: str) -> DataError:
    return DataError(
        f"model {model!r} gave no probabilities for {n_without} of {n_samples} samples "
        f"(first: {first_id!r}); the WQ-NLI measures M1-M8 and the occupation measures S, ΔP and B "
        f"are computed from p(entailment), p(neutral), p(contradiction). Audit with an NLI "
        f"classifier backend (or a predictions file with probabilities), not with labels only",
        sample=first_id,
        model=model,
        field="probs",
    )
