"""The predictor contract: a predictor says its ``kind``; the benchmark picks the measures.

>>> import numpy as np
>>> from nlibias.schema.outputs import ModelOutputs
>>> class Always:
...     name, kind = "always-neutral", "classifier"
...     def describe(self): return {"model": "always neutral"}
...     def predict(self, samples, cache, *, progress=True):
...         probs = np.tile([0.0, 1.0, 0.0], (len(samples), 1))
...         return PredictorRun.of_probabilities(self.name, samples.columns.ids, probs)
>>> isinstance(Always(), Predictor)
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from nlibias.errors import DataError
from nlibias.schema import LABELS, Prediction
from nlibias.schema.outputs import ModelOutputs
from nlibias.schema.predictor_rows import check_predictor_rows

if TYPE_CHECKING:
    from nlibias.benchmarks.base import BenchmarkSamples
    from nlibias.runtime.cache import PredictionCache


@dataclass(frozen=True)
class PredictorRun:
    """What a predictor returns for a benchmark's samples."""

    predictions: Sequence[Prediction]
    """One row per sample, in sample order."""
    outputs: ModelOutputs
    """The same outputs as columns (what the measures read)."""
    stats: Mapping[str, Any]

    @classmethod
    def of_predictions(
        cls, predictions: Sequence[Prediction], kind: str, stats: Mapping[str, Any]
    ) -> PredictorRun:
        """A run from its rows (one per sample, in order); a row the outputs cannot be made of is
        refused by the rows' rules, naming the predictor, the sample and the field."""
        try:
            outputs = ModelOutputs.of_predictions(predictions, kind)
        except (AttributeError, KeyError, TypeError, ValueError):
            check_predictor_rows(predictions)  # raises, naming the row at fault
            raise
        return cls(predictions, outputs, stats)

    @classmethod
    def of_probabilities(
        cls, model: str, ids: Sequence[str], probs: np.ndarray, stats: Mapping[str, Any] | None = None
    ) -> PredictorRun:
        """A classifier's run from its ``(samples x 3)`` probabilities, one row per id.

        >>> PredictorRun.of_probabilities("m", ["a", "b"], np.array([[0.5, 0.5], [0.5, 0.5]]))
        Traceback (most recent call last):
        nlibias.errors.DataError: predictor 'm': field probs: an array of shape (2, 2), not (2, 3): one row per id, the probabilities of entailment, neutral, contradiction in that order
        """
        probs = _probability_array(model, ids, probs)
        best = probs.argmax(axis=1).tolist() if len(probs) else []
        rows = [
            Prediction(sample_id, model, LABELS[choice], (float(row[0]), float(row[1]), float(row[2])))
            for sample_id, choice, row in zip(ids, best, probs.tolist(), strict=True)
        ]
        return cls(rows, ModelOutputs("classifier", probs), {} if stats is None else stats)


def _probability_array(model: str, ids: Sequence[str], probs: Any) -> np.ndarray:
    """``probs`` as a ``(len(ids) x 3)`` float array, else the refusal naming ``model`` and probs."""
    try:
        array = np.asarray(probs, dtype=np.float64)
    except (TypeError, ValueError) as error:
        got = f"not an array of numbers ({error})"
    else:
        if array.size == 0 and not len(ids):
            return array.reshape(0, len(LABELS))
        if array.shape == (len(ids), len(LABELS)):
            return array
        got = f"an array of shape {array.shape}"
    raise DataError(
        f"predictor {model!r}: field probs: {got}, not ({len(ids)}, {len(LABELS)}): one row per id, "
        f"the probabilities of {', '.join(LABELS)} in that order",
        model=model,
        field="probs",
    )


@runtime_checkable
class Predictor(Protocol):
    """What the audit runs over a benchmark's samples (``name``: its model key)."""

    name: str
    kind: str

    def describe(self) -> Mapping[str, Any]: ...

    def predict(
        self, samples: BenchmarkSamples, cache: PredictionCache | None, *, progress: bool = True
    ) -> PredictorRun: ...
