"""A predictor of the user's own (``nlibias.audit(predictors=...)``): its rows and arrays held to
the rules of :mod:`nlibias.schema.prediction_rows`, a fault named by predictor, sample and field."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from nlibias.errors import DataError
from nlibias.schema import LABELS, Prediction
from nlibias.schema.outputs import ModelOutputs, ProbabilityRows
from nlibias.schema.prediction_rows import RowRefused, check_row


def check_prediction(row: Any) -> None:
    """Refuse (:class:`RowRefused`) a predictor's row that is not a
    :class:`~nlibias.schema.Prediction` keeping its kind's rules (:func:`check_row`).

    >>> check_prediction(Prediction("a", "m", "neutral", (0.5, 0.5)))
    Traceback (most recent call last):
    nlibias.schema.prediction_rows.RowRefused: probs: (0.5, 0.5) is not 3 probabilities (entailment, neutral, contradiction)
    """
    if not isinstance(row, Prediction):
        raise RowRefused(None, f"a {type(row).__name__}, not a Prediction", _PREDICTION_FIX)
    probs = row.probs
    if probs is not None and (not hasattr(probs, "__len__") or len(probs) != len(LABELS)):
        reason = f"{probs!r} is not 3 probabilities ({', '.join(LABELS)})"
        raise RowRefused("probs", reason, "give all three, or None for a label alone")
    if not isinstance(row.extra, Mapping):
        raise RowRefused("extra", f"{row.extra!r} is not a mapping", "give the backend's fields as a dict")
    check_row(row.to_dict())


_PREDICTION_FIX = "build each row with nlibias.Prediction(sample_id, model, label, probs)"


def check_predictor_rows(rows: Sequence[Any]) -> None:
    """Refuse the first of a predictor's ``rows`` that breaks a rule (:func:`check_prediction`),
    naming the predictor (its model name), the sample and the field."""
    names = [row.model for row in rows if isinstance(row, Prediction)][:1]
    for i, row in enumerate(rows):
        try:
            check_prediction(row)
        except RowRefused as refused:
            name = row.model if isinstance(row, Prediction) else names[0] if names else None
            sample = row.sample_id if isinstance(row, Prediction) else None
            who = f"predictor {name!r}, " if name is not None else "a predictor's "
            where = f"sample {sample!r}" if sample is not None else f"row {i + 1}"
            field = f"field {refused.field}: " if refused.field else ""
            raise DataError(
                f"{who}{where}: {field}{refused.reason}",
                sample=sample,
                model=name,
                field=refused.field,
                fix=refused.fix,
            ) from None


class _Fault(NamedTuple):
    """What is wrong with a predictor's run, after ``predictor NAME``."""

    reason: str
    fix: str | None = None
    sample: str | None = None
    field: str | None = None


def check_predictor_run(name: Any, kind: str, run: Any, ids: Sequence[str]) -> None:
    """Refuse what a predictor object's ``predict()`` returned unless it is a
    :class:`~nlibias.runtime.contract.PredictorRun` of valid rows, one per sample in order under the
    predictor's name, with outputs that hold the rows' probabilities (a classifier's rows checked
    once per distinct vector)."""
    fault = _run_fault(name, kind, run, ids)
    if fault is not None:
        raise DataError(
            f"predictor {name!r}{fault.reason}",
            sample=fault.sample,
            model=name,
            field=fault.field,
            fix=fault.fix,
        )


def _run_fault(name: Any, kind: str, run: Any, ids: Sequence[str]) -> _Fault | None:
    if not hasattr(run, "predictions") or not isinstance(getattr(run, "outputs", None), ModelOutputs):
        return _Fault(
            f": predict() returned {type(run).__name__}, not a PredictorRun",
            "return PredictorRun.of_probabilities(...) or PredictorRun.of_predictions(...)",
        )
    rows, outputs = run.predictions, run.outputs
    if len(rows) != len(ids) or len(outputs) != len(ids):
        return _Fault(
            f" returned {len(rows)} rows and {len(outputs)} outputs for {len(ids)} samples; a predictor "
            "answers every sample, in order"
        )
    if isinstance(rows, ProbabilityRows):
        checked: Sequence[int] = _distinct_rows(rows)
        row_ids: Sequence[str | None] = rows.ids
        models = [rows.model]
        row_probs = rows.distinct_probs[rows.slot] if len(rows.ids) else np.zeros((0, 3))
    else:
        checked = range(len(rows))
        row_ids = [row.sample_id if isinstance(row, Prediction) else None for row in rows]
        models = [row.model for row in rows if isinstance(row, Prediction)]
        row_probs = np.array([_probs_of(row) for row in rows], dtype=np.float64).reshape(len(rows), 3)
    for i, (row_id, sample_id) in enumerate(zip(row_ids, ids, strict=True)):
        if row_id != sample_id:
            what = (
                f"a row for sample {row_id!r}"
                if row_id is not None
                else f"{type(rows[i]).__name__}, not a Prediction,"
            )
            return _Fault(
                f" returned {what} in the place of sample {sample_id!r} (row {i + 1})",
                "return one row per sample, in the samples' order (samples.columns.ids)",
                sample_id,
            )
    wrong = [m for m in models if m != name]
    if wrong:
        return _Fault(
            f" returned rows under the model name {wrong[0]!r}",
            "name each row with the predictor's name (its key in metrics.json)",
        )
    stats = getattr(run, "stats", None)
    if not isinstance(stats, Mapping):
        return _Fault(
            f" returned stats {stats!r}, a {type(stats).__name__}, not a mapping",
            "return stats as a dict (name → number), or leave them out",
            field="stats",
        )
    for i in checked:
        try:
            check_prediction(rows[i])
        except RowRefused as refused:
            where = f"field {refused.field}: " if refused.field else ""
            return _Fault(f", sample {ids[i]!r}: {where}{refused.reason}", refused.fix, ids[i], refused.field)
    return _outputs_fault(kind, outputs, row_probs, ids)


def _probs_of(row: Prediction) -> tuple[float, float, float]:
    return row.probs if row.probs is not None else (math.nan, math.nan, math.nan)


def _distinct_rows(rows: ProbabilityRows) -> list[int]:
    """The first sample of each distinct probability vector a classifier's rows are made from."""
    if not len(rows.ids):
        return []
    _, first = np.unique(np.asarray(rows.slot), return_index=True)
    return sorted(int(i) for i in first)


def _outputs_fault(
    kind: str, outputs: ModelOutputs, row_probs: np.ndarray, ids: Sequence[str]
) -> _Fault | None:
    """Outputs (what the measures read) that are not the rows (what is written)."""
    if outputs.kind != kind:
        return _Fault(
            f" is of kind {kind!r} but its outputs say {outputs.kind!r}",
            "build the outputs with the predictor's kind",
        )
    probs = np.asarray(outputs.probs, dtype=np.float64)
    same = np.isclose(probs, row_probs, rtol=0.0, atol=1e-6) | (np.isnan(probs) & np.isnan(row_probs))
    differ = np.flatnonzero(~same.all(axis=1)) if probs.shape == row_probs.shape else np.arange(len(ids))
    if not len(differ):
        return None
    at = int(differ[0])
    return _Fault(
        f", sample {ids[at]!r}: its outputs' probabilities {probs[at].tolist()} are not its row's "
        f"{row_probs[at].tolist()}",
        "build the run with PredictorRun.of_probabilities or of_predictions (outputs made from the rows)",
        ids[at],
    )
