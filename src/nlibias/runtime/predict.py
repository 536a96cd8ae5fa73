"""Run an NLI classifier over pairs through the prediction cache.

Pairs are deduplicated, looked up in the cache in bulk, and only the missing ones go to the
model; each computed batch is committed before the next starts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlibias.errors import DataError
from nlibias.models.base import NLIClassifier, Pair
from nlibias.runtime.base import PredictorRun
from nlibias.runtime.cache import PredictionCache, cache_key, identity_fingerprint, is_probability_row
from nlibias.schema import LABELS, Prediction, Sample
from nlibias.schema.model_keys import PredictorKind


@dataclass(frozen=True)
class PairProbabilities:
    """Probabilities for every input pair, in input order, and what it took to get them."""

    probs: np.ndarray
    """Shape ``(len(pairs), 3)``: entailment, neutral, contradiction."""
    unique_pairs: int
    cached_pairs: int
    computed_pairs: int
    real_tokens: int
    padded_tokens: int
    seconds: float
    cache_rejected: int = 0
    """Cached values refused when read (not finite, out of range, not summing to 1, wrong shape,
    undecodable) and recomputed."""
    truncated_pairs: int = 0
    """Computed pairs longer than the model's maximum length, truncated to it."""

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
            "cache_rejected": self.cache_rejected,
            "truncated_pairs": self.truncated_pairs,
        }


@dataclass(frozen=True)
class ComputedBatch:
    """One batch of outputs a model computed, in the loop's terms."""

    indices: Sequence[int] | np.ndarray
    """Positions of the batch's items in the list of inputs the model was given."""
    outputs: Sequence[Any] | np.ndarray
    """One output per index (a probability row, an answer record, ...)."""
    real_tokens: int = 0
    padded_tokens: int = 0
    truncated: int = 0
    """Inputs of the batch cut to the model's maximum length."""


@dataclass(frozen=True)
class CachedOutputs:
    """Every distinct input's output, in input order, and how each was obtained."""

    outputs: list[Any]
    cached: int
    computed: int
    real_tokens: int
    padded_tokens: int
    rejected: int = 0
    """Cached values that ``valid`` or ``from_json`` refused (recomputed, never used)."""
    truncated: int = 0

    def stats(self, seconds: float) -> dict[str, Any]:
        """What ``metrics.json`` records of a predictor's run over these outputs (``seconds``: its
        wall time), before the predictor adds its own fields."""
        return {
            "unique_inputs": len(self.outputs),
            "cached": self.cached,
            "computed": self.computed,
            "seconds": round(seconds, 3),
            "pairs_per_second": round(self.computed / seconds, 2) if seconds > 0 else 0.0,
            "real_tokens": self.real_tokens,
            "padded_tokens": self.padded_tokens,
            "padding_efficiency": round(self.real_tokens / self.padded_tokens, 4)
            if self.padded_tokens
            else 1.0,
            "cache_rejected": self.rejected,
        }


def cached_outputs(
    name: str,
    inputs: Sequence[tuple[str, ...]],
    identity: Mapping[str, Any],
    compute: Callable[[list[tuple[str, ...]]], Iterable[ComputedBatch]],
    cache: PredictionCache | None,
    *,
    to_json: Callable[[Any], Any],
    from_json: Callable[[Any], Any],
    valid: Callable[[Any], bool] | None = None,
    progress: bool = True,
    bar: Any = None,
    unit: str = "pair",
) -> CachedOutputs:
    """The one prediction loop of every predictor kind: look the distinct ``inputs`` up in the
    cache in bulk, send only the missing ones to ``compute``, and commit each computed batch to
    the cache before the next starts (a killed run loses at most one batch).

    ``identity`` is everything that determines the outputs (the cache keys on it with the exact
    input texts); ``to_json``/``from_json`` convert an output to and from what the cache stores.
    ``valid`` checks a stored value before it is used: a value it refuses (or that ``from_json``
    cannot read) is recomputed and counted in ``rejected``.
    ``bar``: a progress bar to advance instead of one of this call's own.

    >>> run = cached_outputs("double", [("a",), ("b",)], {"m": 1},
    ...     lambda todo: [ComputedBatch(range(len(todo)), [t[0] * 2 for t in todo])], None,
    ...     to_json=str, from_json=str, progress=False)
    >>> run.outputs, run.computed
    (['aa', 'bb'], 2)
    """
    fingerprint = identity_fingerprint(identity)
    # keys only for a cache: hashing every input for nothing costs time and scatters small strings
    keys = [cache_key(fingerprint, *item) for item in inputs] if cache is not None else []
    outputs: list[Any] = [None] * len(inputs)

    def usable(value: Any) -> bool:
        if valid is not None and not valid(value):
            return False
        from_json(value)  # raises on a value it cannot read
        return True

    found, rejected = cache.get_checked(keys, usable) if cache is not None else ({}, 0)
    done = [False] * len(inputs)
    for i, key in enumerate(keys):
        if key in found:
            outputs[i], done[i] = from_json(found[key]), True
    if cache is not None:
        cache.register_identity(fingerprint, identity)
    missing = [i for i, is_done in enumerate(done) if not is_done]
    real = padded = truncated = 0
    if bar is not None:
        bar.update(len(inputs) - len(missing))
    if missing:
        from contextlib import nullcontext

        from tqdm.auto import tqdm

        shown = (
            tqdm(total=len(missing), unit=unit, desc=name, disable=not progress, leave=False)
            if bar is None
            else nullcontext(bar)
        )
        with shown as shown_bar:
            for batch in compute([inputs[i] for i in missing]):
                targets = [missing[int(j)] for j in batch.indices]
                for target, output in zip(targets, batch.outputs, strict=True):
                    outputs[target], done[target] = output, True
                if cache is not None:
                    cache.put_many(
                        ((keys[t], to_json(o)) for t, o in zip(targets, batch.outputs, strict=True)),
                        fingerprint=fingerprint,
                    )
                real += batch.real_tokens
                padded += batch.padded_tokens
                truncated += batch.truncated
                shown_bar.update(len(targets))
    absent = len(done) - sum(done)
    if absent:
        raise RuntimeError(f"{name}: the model returned no output for {absent} inputs")
    return CachedOutputs(outputs, len(inputs) - len(missing), len(missing), real, padded, rejected, truncated)


def predict_pairs(
    classifier: NLIClassifier,
    pairs: Sequence[Pair],
    cache: PredictionCache | None = None,
    *,
    progress: bool = True,
    bar: Any = None,
) -> PairProbabilities:
    """Probabilities for ``pairs`` through :func:`cached_outputs` (distinct pairs computed once).

    ``bar``: a progress bar (``tqdm``) to advance by every pair answered, cached or computed,
    instead of a bar of its own (a caller predicting chunk by chunk keeps one bar).

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
            if not np.isfinite(batch.probs).all():  # a model with NaN weights: never cached, never scored
                raise DataError(
                    f"{classifier.name} gives probabilities that are not numbers (NaN or infinity) for "
                    f"{int((~np.isfinite(batch.probs)).any(axis=1).sum())} of {len(batch.indices)} pairs",
                    model=classifier.name,
                    fix="its weights hold NaN or overflow (a fine-tune that diverged?): use another checkpoint",
                )
            # rows as plain lists: row views would keep every batch's array alive until the chunk
            # ends, which raised an extended audit's peak RSS by ~40 MB with glibc's allocator
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


class ClassifierPredictor:
    """Adapts an :class:`NLIClassifier` to the audit's :class:`Predictor` contract.

    >>> from nlibias.models.fake import FakeNLIClassifier
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
        self.kind: PredictorKind = "classifier"

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
