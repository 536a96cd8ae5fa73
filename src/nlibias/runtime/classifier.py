"""An NLI classifier as an audit predictor: each distinct pair computed once, through the cache."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from nlibias.errors import DataError
from nlibias.models.base import NLIClassifier, Pair
from nlibias.runtime.cache import is_probability_row
from nlibias.runtime.contract import PredictorRun
from nlibias.runtime.loop import ComputedBatch, cached_outputs, run_stats
from nlibias.runtime.progress import progress_bar
from nlibias.schema.columns import SampleColumns
from nlibias.schema.declared import PositiveInt, declared
from nlibias.schema.outputs import ModelOutputs, ProbabilityRows

if TYPE_CHECKING:
    from nlibias.benchmarks.base import BenchmarkSamples
    from nlibias.runtime.cache import PredictionCache


@dataclass(frozen=True)
class PairProbabilities:
    """Probabilities for every input pair, in input order, and what it took to get them."""

    probs: np.ndarray
    """Shape ``(len(pairs), 3)``."""
    unique_pairs: int
    cached_pairs: int
    computed_pairs: int
    real_tokens: int
    padded_tokens: int
    seconds: float
    cache_rejected: int = 0
    truncated_pairs: int = 0

    def stats(self) -> dict[str, Any]:
        counts = (self.unique_pairs, self.cached_pairs, self.computed_pairs, self.real_tokens)
        stats = run_stats(*counts, self.padded_tokens, self.cache_rejected, self.seconds)
        return {**stats, "truncated_pairs": self.truncated_pairs}


def predict_pairs(
    classifier: NLIClassifier,
    pairs: Sequence[Pair],
    cache: PredictionCache | None = None,
    *,
    progress: bool = True,
    bar: Any = None,
) -> PairProbabilities:
    """Probabilities for ``pairs`` (distinct pairs computed once); ``bar``: a bar to advance.

    >>> from nlibias.models.fake import FakeNLIClassifier
    >>> run = predict_pairs(FakeNLIClassifier(), [("P", "H"), ("P", "H")], progress=False)
    >>> run.probs.shape, run.unique_pairs
    ((2, 3), 1)
    """
    started = time.perf_counter()
    unique: dict[Pair, int] = {}
    positions = np.fromiter((unique.setdefault(pair, len(unique)) for pair in pairs), dtype=np.int64)

    def compute(todo: list[tuple[str, ...]]) -> Iterator[ComputedBatch]:
        for batch in classifier.predict_batches([(p, h) for p, h in todo]):
            truncated = int(getattr(batch, "truncated", 0))
            if not np.isfinite(batch.probs).all():
                raise DataError(
                    f"{classifier.name} gives probabilities that are not numbers (NaN or infinity) for "
                    f"{int((~np.isfinite(batch.probs)).any(axis=1).sum())} of {len(batch.indices)} pairs",
                    model=classifier.name,
                    fix="its weights hold NaN or overflow (a fine-tune that diverged?): use another checkpoint",
                )
            # plain lists: row views would keep every batch's array alive
            rows = batch.probs.tolist()
            yield ComputedBatch(batch.indices, rows, batch.real_tokens, batch.padded_tokens, truncated)

    run = cached_outputs(
        classifier.name,
        list(unique),
        classifier.identity(),
        compute,
        cache,
        to_json=lambda row: [float(x) for x in row],
        from_json=lambda row: row,
        valid=is_probability_row,
        progress=progress,
        bar=bar,
    )
    unique_probs = np.array(run.outputs, dtype=np.float64).reshape(len(unique), 3)
    if np.isnan(unique_probs).any():
        raise RuntimeError(f"{classifier.name}: the backend returned no output for some pairs")
    return PairProbabilities(
        probs=unique_probs[positions] if len(positions) else np.zeros((0, 3)),
        unique_pairs=len(unique),
        cached_pairs=run.cached,
        computed_pairs=run.computed,
        real_tokens=run.real_tokens,
        padded_tokens=run.padded_tokens,
        seconds=time.perf_counter() - started,
        cache_rejected=run.rejected,
        truncated_pairs=run.truncated,
    )


DEFAULT_CHUNK_PAIRS = 8192  # distinct pairs per classifier call
_COUNTS = tuple(f.name for f in fields(PairProbabilities) if f.name not in ("probs", "seconds"))


@dataclass(frozen=True, eq=False)
class DistinctPairs:
    """Which samples carry the first occurrence of each distinct (premise, hypothesis).

    >>> d = DistinctPairs(first_at=np.array([0, 2]), slot=np.array([0, 0, 1]))
    >>> d.spread(np.array([[1.0, 0, 0], [0, 1.0, 0]])).tolist()
    [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """

    first_at: np.ndarray
    """The position of each distinct pair's first sample, in order."""
    slot: np.ndarray
    """``(samples,)``: each sample's distinct pair."""

    @classmethod
    def of(cls, columns: SampleColumns) -> DistinctPairs:
        _, first_at, inverse = np.unique(columns.text_code, return_index=True, return_inverse=True)
        order = np.argsort(first_at, kind="stable")
        rank = np.empty(len(first_at), dtype=np.int64)
        rank[order] = np.arange(len(first_at))
        slot = rank.astype(np.int32) if len(rank) < 2**31 else rank  # 4 bytes a sample
        return cls(first_at=first_at[order], slot=slot[inverse.ravel()])

    def __len__(self) -> int:
        return len(self.first_at)

    def spread(self, distinct_probs: np.ndarray) -> np.ndarray:
        return distinct_probs[self.slot]


class ClassifierPredictor:
    """An :class:`~nlibias.models.base.NLIClassifier` as a predictor (kind ``classifier``)."""

    kind = "classifier"

    @declared
    def __init__(self, classifier: NLIClassifier, *, chunk_pairs: PositiveInt = DEFAULT_CHUNK_PAIRS) -> None:
        self.classifier = classifier
        self.name = classifier.name
        self.chunk_pairs = chunk_pairs

    def close(self) -> None:
        close = getattr(self.classifier, "close", None)
        if callable(close):
            close()

    def describe(self) -> Mapping[str, Any]:
        describe = getattr(self.classifier, "describe", None)
        return dict(describe()) if callable(describe) else dict(self.classifier.identity())

    def predict(
        self, samples: BenchmarkSamples, cache: PredictionCache | None, *, progress: bool = True
    ) -> PredictorRun:
        columns = samples.columns
        distinct = DistinctPairs.of(columns)
        probs = np.full((len(distinct), 3), np.nan)
        totals = dict.fromkeys(_COUNTS, 0)
        seconds = 0.0
        with progress_bar(len(distinct), unit="pair", desc=self.name, enabled=progress) as bar:
            for start in range(0, len(distinct), self.chunk_pairs):
                at = distinct.first_at[start : start + self.chunk_pairs].tolist()
                pairs = [(columns.premise[i], columns.hypothesis[i]) for i in at]
                run = predict_pairs(self.classifier, pairs, cache, progress=False, bar=bar)
                probs[start : start + len(at)] = run.probs
                for name in totals:
                    totals[name] += getattr(run, name)
                seconds += run.seconds
        stats = PairProbabilities(probs=probs, seconds=seconds, **totals).stats()
        rows = ProbabilityRows(self.name, columns.ids, distinct.slot, probs)
        return PredictorRun(rows, ModelOutputs("classifier", distinct.spread(probs)), stats)
