"""Run an NLI classifier over pairs through the prediction cache.

Pairs are deduplicated, looked up in the cache in bulk, and only the missing ones go to the
model; each computed batch is committed before the next starts.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlibias.backends.base import NLIClassifier, Pair, PredictorRun
from nlibias.cache import PredictionCache, cache_key, identity_fingerprint
from nlibias.schema import LABELS, Prediction, Sample


@dataclass(frozen=True)
class PredictionRun:
    """Probabilities for every input pair, in input order, and what it took to get them."""

    probs: np.ndarray
    """Shape ``(len(pairs), 3)``: entailment, neutral, contradiction."""
    unique_pairs: int
    cached_pairs: int
    computed_pairs: int
    real_tokens: int
    padded_tokens: int
    seconds: float

    @property
    def padding_efficiency(self) -> float:
        return self.real_tokens / self.padded_tokens if self.padded_tokens else 1.0

    @property
    def pairs_per_second(self) -> float:
        return self.computed_pairs / self.seconds if self.seconds > 0 else 0.0

    def stats(self) -> dict[str, Any]:
        """What ``metrics.json`` records of the run (``run.models.MODEL.stats``)."""
        return {
            "unique_inputs": self.unique_pairs,
            "cached": self.cached_pairs,
            "computed": self.computed_pairs,
            "seconds": round(self.seconds, 3),
            "pairs_per_second": round(self.pairs_per_second, 2),
            "real_tokens": self.real_tokens,
            "padded_tokens": self.padded_tokens,
            "padding_efficiency": round(self.padding_efficiency, 4),
        }


def predict_pairs(
    classifier: NLIClassifier,
    pairs: Sequence[Pair],
    cache: PredictionCache | None = None,
    *,
    progress: bool = True,
    bar: Any = None,
) -> PredictionRun:
    """Probabilities for ``pairs``, computing only those not already cached.

    ``bar``: a progress bar (``tqdm``) to advance by every pair answered, cached or computed,
    instead of a bar of its own (a caller predicting chunk by chunk keeps one bar).

    >>> from nlibias.backends.fake import FakeNLIClassifier
    >>> run = predict_pairs(FakeNLIClassifier(), [("P", "H"), ("P", "H")], progress=False)
    >>> run.probs.shape, run.unique_pairs
    ((2, 3), 1)
    """
    started = time.perf_counter()
    unique: dict[Pair, int] = {}
    positions = np.fromiter((unique.setdefault(pair, len(unique)) for pair in pairs), dtype=np.int64)
    unique_pairs = list(unique)
    fingerprint = identity_fingerprint(classifier.identity())
    keys = [cache_key(fingerprint, premise, hypothesis) for premise, hypothesis in unique_pairs]
    unique_probs = np.full((len(unique_pairs), 3), np.nan)
    cached = cache.get_many(keys) if cache is not None else {}
    missing = [i for i, key in enumerate(keys) if key not in cached]
    for i, key in enumerate(keys):
        if key in cached:
            unique_probs[i] = cached[key]
    if cache is not None:
        cache.register_identity(fingerprint, classifier.identity())

    real = padded = 0
    if bar is not None:
        bar.update(len(unique_pairs) - len(missing))
    if missing:
        from contextlib import nullcontext

        from tqdm.auto import tqdm

        todo = [unique_pairs[i] for i in missing]
        shown = (
            tqdm(total=len(todo), unit="pair", desc=classifier.name, disable=not progress, leave=False)
            if bar is None
            else nullcontext(bar)
        )
        with shown as bar:
            for batch in classifier.predict_batches(todo):
                targets = [missing[int(j)] for j in batch.indices]
                unique_probs[targets] = batch.probs
                if cache is not None:
                    cache.put_many(
                        (
                            (keys[t], [float(x) for x in row])
                            for t, row in zip(targets, batch.probs, strict=True)
                        ),
                        fingerprint=fingerprint,
                    )
                real += batch.real_tokens
                padded += batch.padded_tokens
                bar.update(len(targets))
    if np.isnan(unique_probs).any():
        raise RuntimeError(f"{classifier.name}: the backend returned no output for some pairs")
    return PredictionRun(
        probs=unique_probs[positions] if len(positions) else np.zeros((0, 3)),
        unique_pairs=len(unique_pairs),
        cached_pairs=len(unique_pairs) - len(missing),
        computed_pairs=len(missing),
        real_tokens=real,
        padded_tokens=padded,
        seconds=time.perf_counter() - started,
    )


class ClassifierPredictor:
    """Adapts an :class:`NLIClassifier` to the audit's :class:`Predictor` contract.

    >>> from nlibias.backends.fake import FakeNLIClassifier
    >>> from nlibias.schema import Sample
    >>> s = Sample(id="a", source="bbnli", domain="d", subtopic="t", premise="P.", hypothesis="H.",
    ...            gold="neutral")
    >>> run = ClassifierPredictor(FakeNLIClassifier()).predict([s], None, progress=False)
    >>> run.predictions[0].sample_id, sum(run.predictions[0].probs) > 0.999
    ('a', True)
    """

    def __init__(self, classifier: NLIClassifier) -> None:
        self.classifier = classifier
        self.name = classifier.name

    def close(self) -> None:
        """Stop the classifier's workers, when it has any (sharded and Ray classifiers)."""
        close = getattr(self.classifier, "close", None)
        if callable(close):
            close()

    def describe(self) -> Mapping[str, Any]:
        describe = getattr(self.classifier, "describe", None)
        return dict(describe()) if callable(describe) else dict(self.classifier.identity())

    def predict(
        self, samples: Sequence[Sample], cache: PredictionCache | None, *, progress: bool = True
    ) -> PredictorRun:
        run = predict_pairs(
            self.classifier, [(s.premise, s.hypothesis) for s in samples], cache, progress=progress
        )
        best = run.probs.argmax(axis=1) if len(samples) else np.zeros(0, dtype=np.int64)
        predictions = [
            Prediction(
                sample_id=sample.id,
                model=self.name,
                label=LABELS[int(choice)],
                probs=(float(row[0]), float(row[1]), float(row[2])),
            )
            for sample, choice, row in zip(samples, best, run.probs, strict=True)
        ]
        return PredictorRun(predictions=predictions, stats=run.stats())
