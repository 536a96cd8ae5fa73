"""Predictions files: JSONL with ``id``, ``label``, optional ``model`` and ``probs``; a row's rules
are its kind's (:mod:`nlibias.schema.prediction_rows`), the reader adds known ids, one row per
sample and model."""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nlibias.errors import DataError, SourceError
from nlibias.io.atomic import PendingFile, json_line, write_lines
from nlibias.io.fingerprint import file_stamp
from nlibias.io.jsonl import iter_jsonl, iter_jsonl_offsets, read_jsonl_record
from nlibias.schema import LABEL_INDEX, LABELS, Prediction
from nlibias.schema.columns import ItemSequence
from nlibias.schema.outputs import NO_LABEL, ChainedRows, ProbabilityRows
from nlibias.schema.prediction_rows import RowRefused, check_row, row_kind

PREDICTIONS_JSONL = "predictions.jsonl"
_LINES_BLOCK = 4096  # samples whose lines are made from one conversion of their probabilities


def write_predictions(path: str | Path, predictions: Iterable[Prediction]) -> Path:
    """``predictions.jsonl``: one line per row (a classifier's straight from its arrays)."""
    path = Path(path)
    write_lines(path, prediction_lines(predictions))
    return path


def prediction_lines(predictions: Iterable[Prediction]) -> Iterator[str]:
    parts = predictions.parts if isinstance(predictions, ChainedRows) else [predictions]
    for part in parts:
        if isinstance(part, ProbabilityRows):
            yield from probability_lines(part)
        else:
            for prediction in part:
                yield json_line(prediction.to_dict())


def probability_lines(rows: ProbabilityRows) -> Iterator[str]:
    if not np.isfinite(rows.distinct_probs).all():
        raise ValueError(
            f"{rows.model} gave probabilities that are not finite numbers; they cannot be written"
        )
    quoted_model = json.dumps(rows.model, ensure_ascii=False)
    for start in range(0, len(rows.ids), _LINES_BLOCK):
        slots = rows.slot[start : start + _LINES_BLOCK]
        values = rows.distinct_probs[slots].tolist()  # Python floats: their repr is what json writes
        labels = [LABELS[k] for k in rows.best[slots].tolist()]
        for i, row, label in zip(range(start, start + len(slots)), values, labels, strict=True):
            yield probability_line(rows.ids[i], quoted_model, label, row)


def probability_line(sample_id: str, quoted_model: str, label: str, probs: Sequence[float]) -> str:
    """The line of a row with probabilities (``quoted_model``: the model as a JSON string).

    >>> prediction = Prediction('a"1', "m", "neutral", (0.25, 0.5, 0.25))
    >>> line = probability_line('a"1', json.dumps("m"), "neutral", [0.25, 0.5, 0.25])
    >>> line == json.dumps(prediction.to_dict(), ensure_ascii=False) + chr(10)
    True
    """
    entailment, neutral, contradiction = probs
    if not (_finite(entailment) and _finite(neutral) and _finite(contradiction)):  # repr would write nan
        field = f"probs.{LABELS[[_finite(p) for p in probs].index(False)]}"
        raise DataError(
            f"sample {sample_id!r}: {field} is not a finite number, which JSON cannot hold",
            sample=sample_id,
            field=field,
            fix="check the model's outputs (a NaN comes from damaged weights or an overflow)",
        )
    return (
        f'{{"id": {_quote(sample_id)}, "model": {quoted_model}, "label": "{label}", "probs": '
        f'{{"entailment": {entailment!r}, "neutral": {neutral!r}, "contradiction": {contradiction!r}}}}}\n'
    )


_finite = math.isfinite
_quote: Callable[[str], str] = json.encoder.encode_basestring  # as json.dumps(ensure_ascii=False)


def _check_row(path: Path, line: int, raw: Any) -> None:
    """Refuse a row that breaks a rule of its kind, naming the file, line and field."""
    try:
        check_row(raw)
    except RowRefused as refused:
        raise SourceError(path, refused.field, refused.reason, line=line, fix=refused.fix) from None


def _row_prediction(raw: dict[str, Any], default_model: str, models: dict[str, str]) -> Prediction:
    """The prediction of a checked row (one string object per model name across the file)."""
    model, label, probs = raw.get("model", default_model), raw["label"], raw.get("probs")
    return Prediction(
        sample_id=raw["id"],
        model=models.setdefault(model, model),
        label=None if label is None else LABELS[LABEL_INDEX[label]],
        probs=None if probs is None else _vector(probs),
        extra={k: v for k, v in raw.items() if k not in _ROW_FIELDS},
    )


def _vector(probs: Mapping[str, Any]) -> tuple[float, float, float]:
    return float(probs[LABELS[0]]), float(probs[LABELS[1]]), float(probs[LABELS[2]])


_ROW_FIELDS = frozenset(("id", "label", "model", "probs"))


def predictions_file(path: str | Path) -> Path:
    """The predictions file of ``path``: itself, or a run directory's ``predictions.jsonl``."""
    path = Path(path)
    return path / PREDICTIONS_JSONL if path.is_dir() else path


def _resolve(path: str | Path) -> Path:
    path = predictions_file(path)
    if not path.exists():
        raise SourceError(path, None, "file does not exist")
    return path


def _unknown_id(path: Path, sample_id: str, line: int) -> SourceError:
    return SourceError(
        path,
        "id",
        f"unknown sample id {sample_id!r}",
        line=line,
        fix="predictions must refer to ids of the samples they are scored with",
    )


def _duplicate_row(path: Path, sample_id: str, model: str, first_line: int, line: int) -> SourceError:
    return SourceError(
        path,
        "id",
        f"duplicate row for id {sample_id!r} and model {model!r} (first on line {first_line})",
        line=line,
    )


def read_predictions(
    path: str | Path, *, known_ids: Collection[str] | None = None, default_model: str | None = None
) -> list[Prediction]:
    """Read and check a predictions file (ids in ``known_ids``, one row per id and model); a row
    without ``model`` gets ``default_model`` (default: the file's stem)."""
    path = _resolve(path)
    default = default_model or path.stem
    seen: dict[tuple[str, str], int] = {}
    predictions: list[Prediction] = []
    models: dict[str, str] = {}
    for line_number, raw in iter_jsonl(path):
        _check_row(path, line_number, raw)
        prediction = _row_prediction(raw, default, models)
        if known_ids is not None and prediction.sample_id not in known_ids:
            raise _unknown_id(path, prediction.sample_id, line_number)
        key = (prediction.sample_id, prediction.model)
        if key in seen:
            raise _duplicate_row(path, key[0], key[1], seen[key], line_number)
        seen[key] = line_number
        predictions.append(prediction)
    if not predictions:
        raise SourceError(path, None, "no predictions in the file")
    return predictions


@dataclass(frozen=True, eq=False)
class ModelRows:
    """One model's rows aligned with the samples: each row's file line (0: none), label code
    (:data:`NO_LABEL`: none) and probabilities (NaN: none)."""

    line: np.ndarray
    label: np.ndarray
    probs: np.ndarray

    @classmethod
    def empty(cls, n_samples: int) -> ModelRows:
        return cls(
            line=np.zeros(n_samples, dtype=np.int32),
            label=np.full(n_samples, NO_LABEL, dtype=np.int8),
            probs=np.full((n_samples, 3), np.nan),
        )

    def predicted(self) -> np.ndarray:
        return self.line > 0


@dataclass(frozen=True, eq=False)
class PredictionArrays:
    """A predictions file read into arrays: each model's rows and kind, and the file's rows
    (read again on demand)."""

    models: Mapping[str, ModelRows]
    rows: PredictionsFile
    kinds: Mapping[str, str]


def read_prediction_arrays(
    path: str | Path,
    *,
    position_of: Callable[[str], int],
    n_samples: int,
    default_model: str | None = None,
    copy_to: PendingFile | None = None,
) -> PredictionArrays:
    """:func:`read_predictions` into arrays (``position_of(id)``: the sample's position, -1 for
    none), keeping each row's offset. ``copy_to``: each row also written there, in the same pass.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "p.jsonl"
    >>> _ = path.write_text('{"id": "b", "label": "neutral", "model": "m"}\\n'
    ...                     '{"id": "a", "label": null, "model": "m"}\\n')
    >>> arrays = read_prediction_arrays(path, position_of=lambda i: "ab".find(i), n_samples=2)
    >>> rows = arrays.models["m"]
    >>> rows.line.tolist(), rows.label.tolist(), arrays.rows[0].sample_id, len(arrays.rows)
    ([2, 1], [-1, 1], 'b', 2)
    """
    path = _resolve(path)
    default = default_model or path.stem
    models: dict[str, ModelRows] = {}
    kinds: dict[str, str] = {}
    offsets = array("q")
    stamp = file_stamp(path)
    copy = None if copy_to is None else _RowCopy(copy_to, default)
    for line_number, offset, raw in iter_jsonl_offsets(path):
        _check_row(path, line_number, raw)
        sample_id, model, label, probs = raw["id"], raw.get("model", default), raw["label"], raw.get("probs")
        position = position_of(sample_id)
        if position < 0:
            raise _unknown_id(path, sample_id, line_number)
        rows = models.get(model)
        if rows is None:
            rows = models[model] = ModelRows.empty(n_samples)
            kinds[model] = row_kind(raw)
        if rows.line[position]:
            raise _duplicate_row(path, sample_id, model, int(rows.line[position]), line_number)
        rows.line[position] = line_number
        if label is not None:
            rows.label[position] = LABEL_INDEX[label]
        if probs is not None:
            rows.probs[position] = _vector(probs)
        offsets.append(offset if copy is None else copy.write(raw))
    if not offsets:
        raise SourceError(path, None, "no predictions in the file")
    row_offsets = np.frombuffer(offsets, dtype=np.int64)
    checked = PredictionsFile(path, row_offsets, default, stamp)
    checked.check_unchanged()
    if copy is not None:  # rescoring in place replaces this file
        checked = PredictionsFile(copy.path, row_offsets, default, None)
    return PredictionArrays(models=models, rows=checked, kinds=kinds)


class _RowCopy:
    def __init__(self, pending: PendingFile, default_model: str) -> None:
        self.path, self._write, self._default = pending.path, pending.handle.write, default_model
        self._names: dict[str, str] = {}
        self._offset = 0

    def write(self, raw: dict[str, Any]) -> int:
        record = raw if _written_as_is(raw) else _row_prediction(raw, self._default, self._names).to_dict()
        data = json_line(record).encode("utf-8")
        start = self._offset
        self._offset += self._write(data)
        return start


_WRITTEN_ORDER = ["id", "model", "label"]
_WRITTEN_PROBS = list(LABELS)


def _written_as_is(raw: dict[str, Any]) -> bool:
    """Whether a checked row is already as :func:`write_predictions` writes it."""
    keys = list(raw)
    if keys[:3] != _WRITTEN_ORDER:
        return False
    if "probs" not in raw:
        return True
    probs = raw["probs"]
    return (
        keys[3] == "probs"
        and type(probs) is dict
        and list(probs) == _WRITTEN_PROBS
        and all(type(v) is float for v in probs.values())
    )


class PredictionsFile(ItemSequence[Prediction]):
    """The rows of a checked predictions file, parsed again when asked for; a file changed since
    it was checked is refused."""

    __slots__ = ("_default", "_offsets", "_path", "_stamp")

    def __init__(
        self, path: Path, offsets: np.ndarray, default_model: str, stamp: tuple[int, int] | None
    ) -> None:
        self._path, self._offsets, self._default = path, offsets, default_model
        self._stamp = stamp  # None: a copy being written, stamped when first read

    def __len__(self) -> int:
        return len(self._offsets)

    def check_unchanged(self) -> None:
        if self._stamp is None:
            if not self._path.exists():
                raise SourceError(self._path, None, "the copy of the predictions was not written")
            self._stamp = file_stamp(self._path)
        if file_stamp(self._path) != self._stamp:
            raise SourceError(self._path, None, "the file changed after it was checked", fix="score it again")

    def _item(self, i: int) -> Prediction:
        self.check_unchanged()
        raw = read_jsonl_record(self._path, int(self._offsets[i]))
        return _row_prediction(raw, self._default, {})

    def __iter__(self) -> Iterator[Prediction]:
        self.check_unchanged()
        names: dict[str, str] = {}
        for _, _, raw in iter_jsonl_offsets(self._path):
            yield _row_prediction(raw, self._default, names)
