"""``metrics.json`` as a tidy table, a row per (model, slicing, slice, measure), and the predictions
joined with their samples (:func:`samples_frame`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from nlibias.errors import DataError
from nlibias.metrics.metric_frame import FRAME_COLUMNS, grouped_rows
from nlibias.schema import LABELS, Sample

if TYPE_CHECKING:
    import pandas as pd

    from nlibias.schema import Prediction

COLUMNS = ("model", *FRAME_COLUMNS)


def metric_rows(metrics: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The rows of :func:`metrics_frame`, as dicts (no pandas needed)."""
    for model, model_metrics in metrics["models"].items():
        for row in grouped_rows(model_metrics):
            yield {"model": model, **row}


def metrics_frame(metrics: Mapping[str, Any]) -> pd.DataFrame:
    """:func:`metric_rows` as a pandas DataFrame with the columns :data:`COLUMNS`."""
    import pandas as pd

    return pd.DataFrame(list(metric_rows(metrics)), columns=list(COLUMNS))


SAMPLE_FIELDS = tuple(f.name for f in fields(Sample) if f.name not in ("id", "provenance"))


def prediction_row(prediction: Prediction) -> dict[str, Any]:
    """One prediction as a flat row: probabilities as ``p_<label>``, nested fields as ``field.key``."""
    probs = prediction.probs if prediction.probs is not None else (None, None, None)
    row: dict[str, Any] = {
        "id": prediction.sample_id,
        "model": prediction.model,
        "kind": prediction.kind,
        "label": prediction.label,
        **{f"p_{label}": p for label, p in zip(LABELS, probs, strict=True)},
    }
    for key, value in prediction.extra.items():
        if key in row:
            continue
        if isinstance(value, Mapping):
            row.update({f"{key}.{inner}": v for inner, v in value.items()})
        else:
            row[key] = value
    return row


def samples_frame(predictions: Iterable[Prediction], samples: Iterable[Sample]) -> pd.DataFrame:
    """A :func:`prediction_row` per prediction joined with its sample's fields (a prediction
    without its sample is refused)."""
    import pandas as pd

    by_id = {s.id: s for s in samples}
    rows = []
    for prediction in predictions:
        sample = by_id.get(prediction.sample_id)
        if sample is None:
            raise DataError(
                f"prediction of model {prediction.model!r} for sample id {prediction.sample_id!r}, "
                "which the samples do not hold: pass the samples the run audited"
            )
        row = prediction_row(prediction)
        row.update({name: getattr(sample, name) for name in SAMPLE_FIELDS})
        rows.append(row)
    frame = pd.DataFrame(rows)
    first = ["id", "model", *SAMPLE_FIELDS, "kind", "label"]
    if frame.empty:
        return pd.DataFrame(columns=first)
    return frame[first + [c for c in frame.columns if c not in first]]
