"""The BBNLI scorer: samples + one model's predictions → that model's ``metrics.json`` entry.

The measures run over columns (:class:`nlibias.schema.columns.SampleColumns` and integer label codes):
:func:`score_bbnli_columns` is what a streamed audit calls; :func:`score_bbnli` turns samples and
:class:`~nlibias.schema.Prediction` objects into columns first, so both give the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nlibias.errors import DataError
from nlibias.metrics.bbnli import UNANSWERED, EncodedSamples, label_codes
from nlibias.metrics.grouped import bbnli_frame
from nlibias.schema import Prediction, Sample
from nlibias.schema.columns import SampleColumns


def align_predictions(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> list[Prediction]:
    """One model's prediction for each sample, in sample order (every sample must have one)."""
    by_id = {p.sample_id: p for p in predictions}
    models = {p.model for p in predictions}
    if len(models) > 1:
        raise DataError(f"score one model at a time, got {sorted(models)}", field="model")
    missing = [s.id for s in samples if s.id not in by_id]
    if missing:
        raise missing_predictions_error(len(missing), missing[0])
    return [by_id[s.id] for s in samples]


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
    """BBNLI measures overall, by domain and by subtopic from columns and label codes.

    ``predicted`` holds one code per sample (0 entailment, 1 neutral, 2 contradiction, -1 no
    answer); ``gold`` overrides the samples' gold codes. The output is
    :func:`nlibias.metrics.grouped.compute_bbnli_report`'s.

    >>> from nlibias.schema import Sample
    >>> pair = [Sample(id=s, source="bbnli", domain="d", subtopic="t", premise="P.",
    ...                hypothesis=f"{s} H.", gold="neutral", stereotype=s, pair_key="k")
    ...         for s in ("pro", "anti")]
    >>> report = score_bbnli_columns(SampleColumns.from_samples(pair), np.array([0, 1]), bootstrap=0)
    >>> report["overall"]["cf_pro"], report["by_domain"]["d"]["n_pairs"]
    (50.0, 1)
    """
    predicted = np.asarray(predicted, dtype=np.int64)
    if len(predicted) != len(columns):
        raise ValueError(f"{len(predicted)} predictions for {len(columns)} samples; pass one per sample")
    if len(predicted) and (predicted.min() < UNANSWERED or predicted.max() > 2):
        raise ValueError("predicted codes must be -1 (no answer), 0, 1 or 2")
    encoded = EncodedSamples(
        predicted=predicted,
        gold=columns.gold if gold is None else np.asarray(gold, dtype=np.int64),
        stereotype=columns.stereotype,
        pair_code=columns.pair_code,
        pair_keys=columns.pair_keys,
        text_code=columns.text_code,
        ids=columns.ids,
    )
    frame = bbnli_frame(
        encoded,
        groups={"domain": columns.domain, "subtopic": columns.subtopic},
        bootstrap=bootstrap,
        seed=seed,
    )
    return frame.to_dict()


def bbnli_report(
    samples: Sequence[Sample],
    labels: Sequence[str | None],
    *,
    gold: Sequence[str] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """:func:`score_bbnli_columns` over samples; ``gold`` overrides the samples' gold labels."""
    gold_codes = None if gold is None else label_codes(gold, field="gold", allow_none=False)
    return score_bbnli_columns(
        SampleColumns.from_samples(samples),
        label_codes(labels),
        gold=gold_codes,
        bootstrap=bootstrap,
        seed=seed,
    )


def score_bbnli(
    samples: Sequence[Sample], predictions: Sequence[Prediction], *, bootstrap: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """BBNLI measures overall, by domain and by subtopic (see :func:`score_bbnli_columns`)."""
    labels = [p.label for p in align_predictions(samples, predictions)]
    return bbnli_report(samples, labels, bootstrap=bootstrap, seed=seed)


def score_bbnli_probabilities(
    columns: SampleColumns,
    probs: np.ndarray,
    *,
    model: str,
    bootstrap: int = 1000,
    seed: int = 0,
    labels: np.ndarray | None = None,
) -> dict[str, Any]:
    """A classifier's BBNLI measures from its ``(samples x 3)`` probabilities: the predicted
    label is the most probable one, as :class:`nlibias.runtime.predict.ClassifierPredictor` reports it.
    ``labels`` (a code per sample, -1: no answer), as a predictions file gives them, are used
    instead when given (the BBNLI measures read labels only; ``probs`` may then be NaN)."""
    if labels is not None:
        return score_bbnli_columns(columns, labels, bootstrap=bootstrap, seed=seed)
    if len(probs) and np.isnan(probs).any():
        first = columns.ids[int(np.flatnonzero(np.isnan(probs).any(axis=1))[0])]
        raise DataError(
            f"model {model!r} has no probabilities for sample {first!r}", sample=first, model=model
        )
    predicted = probs.argmax(axis=1) if len(probs) else np.zeros(0, dtype=np.int64)
    return score_bbnli_columns(columns, predicted, bootstrap=bootstrap, seed=seed)
