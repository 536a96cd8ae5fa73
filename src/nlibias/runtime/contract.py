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

from nlibias.schema import LABELS, Prediction
from nlibias.schema.outputs import ModelOutputs

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
        return cls(predictions, ModelOutputs.of_predictions(predictions, kind), stats)

    @classmethod
    def of_probabilities(
        cls, model: str, ids: Sequence[str], probs: np.ndarray, stats: Mapping[str, Any] | None = None
    ) -> PredictorRun:
        """A classifier's run from its ``(samples x 3)`` probabilities."""
        best = probs.argmax(axis=1).tolist() if len(probs) else []
        rows = [
            Prediction(sample_id, model, LABELS[choice], (float(row[0]), float(row[1]), float(row[2])))
            for sample_id, choice, row in zip(ids, best, probs.tolist(), strict=True)
        ]
        return cls(rows, ModelOutputs("classifier", np.asarray(probs, dtype=np.float64)), stats or {})


@runtime_checkable
class Predictor(Protocol):
    """What the audit runs over a benchmark's samples (``name``: its model key)."""

    name: str
    kind: str

    def describe(self) -> Mapping[str, Any]: ...

    def predict(
        self, samples: BenchmarkSamples, cache: PredictionCache | None, *, progress: bool = True
    ) -> PredictorRun: ...
