"""Predictions files: JSONL with ``id``, ``label``, optional ``model`` and optional ``probs``.

``label`` is ``entailment`` / ``neutral`` / ``contradiction`` (or ``null`` for an answer that
could not be parsed); ``probs`` is ``{"entailment": p, "neutral": p, "contradiction": p}`` and
must sum to 1.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from nlibias.errors import SourceError
from nlibias.io.atomic import write_jsonl
from nlibias.io.jsonl import iter_jsonl
from nlibias.schema import LABEL_INDEX, LABELS, Prediction

PREDICTIONS_JSONL = "predictions.jsonl"
PROBABILITY_TOLERANCE = 1e-3


def write_predictions(path: str | Path, predictions: Iterable[Prediction]) -> Path:
    path = Path(path)
    write_jsonl(path, (p.to_dict() for p in predictions))  # a generator: one row in memory at a time
    return path


def _parse_line(path: Path, line: int, raw: Any, default_model: str, models: dict[str, str]) -> Prediction:
    def fail(field: str | None, reason: str, fix: str | None = None) -> SourceError:
        return SourceError(path, field, reason, line=line, fix=fix)

    if not isinstance(raw, dict):
        raise fail(None, "expected a JSON object with id and label")
    if not isinstance(raw.get("id"), str) or not raw["id"]:
        raise fail("id", "missing or not a string")
    label = raw.get("label", ...)
    if label is ...:
        raise fail("label", "missing", fix=f"use one of {', '.join(LABELS)} (or null for no answer)")
    if label is not None and label not in LABELS:
        raise fail("label", f"unknown label {label!r}", fix=f"use one of {', '.join(LABELS)}")
    model = raw.get("model", default_model)
    if not isinstance(model, str) or not model:
        raise fail("model", "must be a non-empty string")
    probs = raw.get("probs")
    vector: tuple[float, float, float] | None = None
    if probs is not None:
        if not isinstance(probs, dict) or set(probs) != set(LABELS):
            raise fail("probs", "expected an object with exactly entailment, neutral, contradiction")
        values = [probs[name] for name in LABELS]
        if not all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
            for v in values
        ):
            raise fail("probs", "probabilities must be finite non-negative numbers")
        total = float(sum(values))
        if abs(total - 1.0) > PROBABILITY_TOLERANCE:
            raise fail(
                "probs",
                f"probabilities sum to {total:.6f}, not 1",
                fix=f"normalise them (tolerance {PROBABILITY_TOLERANCE})",
            )
        vector = (float(values[0]), float(values[1]), float(values[2]))
    extra = {k: v for k, v in raw.items() if k not in ("id", "label", "model", "probs")}
    # One string object per model and label across the file (json makes one per line).
    return Prediction(
        sample_id=raw["id"],
        model=models.setdefault(model, model),
        label=None if label is None else LABELS[LABEL_INDEX[label]],
        probs=vector,
        extra=extra,
    )


def read_predictions(
    path: str | Path, *, known_ids: Collection[str] | None = None, default_model: str | None = None
) -> list[Prediction]:
    """Read and validate a predictions JSONL file.

    Refuses (with the line number) ids not in ``known_ids``, duplicate (id, model) rows, unknown
    labels and probabilities that do not sum to 1. Rows without ``model`` get ``default_model``
    (the file's stem by default).
    """
    path = Path(path)
    if path.is_dir():
        path = path / PREDICTIONS_JSONL
    if not path.exists():
        raise SourceError(path, None, "file does not exist")
    default = default_model or path.stem
    seen: dict[tuple[str, str], int] = {}
    predictions: list[Prediction] = []
    models: dict[str, str] = {}
    for line_number, raw in iter_jsonl(path):
        prediction = _parse_line(path, line_number, raw, default, models)
        if known_ids is not None and prediction.sample_id not in known_ids:
            raise SourceError(
                path,
                "id",
                f"unknown sample id {prediction.sample_id!r}",
                line=line_number,
                fix="predictions must refer to ids of the samples given with --samples",
            )
        key = (prediction.sample_id, prediction.model)
        if key in seen:
            raise SourceError(
                path,
                "id",
                f"duplicate row for id {key[0]!r} and model {key[1]!r} (first on line {seen[key]})",
                line=line_number,
            )
        seen[key] = line_number
        predictions.append(prediction)
    if not predictions:
        raise SourceError(path, None, "no predictions in the file")
    return predictions
