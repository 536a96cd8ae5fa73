"""The one prediction loop of every predictor kind (:func:`cached_outputs`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlibias.models.batching import items_progress
from nlibias.runtime.cache import PredictionCache, cache_key, identity_fingerprint
from nlibias.runtime.progress import progress_bar


@dataclass(frozen=True)
class ComputedBatch:
    """One batch a model computed: its items' positions among the inputs, one output each."""

    indices: Sequence[int] | np.ndarray
    outputs: Sequence[Any] | np.ndarray
    real_tokens: int = 0
    padded_tokens: int = 0
    truncated: int = 0


@dataclass(frozen=True)
class CachedOutputs:
    """Every distinct input's output, in input order, and how many were cached, computed, refused."""

    outputs: list[Any]
    cached: int
    computed: int
    real_tokens: int
    padded_tokens: int
    rejected: int = 0
    truncated: int = 0

    def stats(self, seconds: float) -> dict[str, Any]:
        counts = (len(self.outputs), self.cached, self.computed, self.real_tokens, self.padded_tokens)
        return run_stats(*counts, self.rejected, seconds)


def run_stats(
    unique: int, cached: int, computed: int, real: int, padded: int, rejected: int, seconds: float
) -> dict[str, Any]:
    return {
        "unique_inputs": unique,
        "cached": cached,
        "computed": computed,
        "seconds": round(seconds, 3),
        "pairs_per_second": round(computed / seconds, 2) if seconds > 0 else 0.0,
        "real_tokens": real,
        "padded_tokens": padded,
        "padding_efficiency": round(real / padded, 4) if padded else 1.0,
        "cache_rejected": rejected,
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
    """The distinct ``inputs`` looked up in the cache, the missing computed, each batch committed;
    a stored value ``valid`` or ``from_json`` refuses is recomputed.
    >>> run = cached_outputs("double", [("a",), ("b",)], {"m": 1},
    ...     lambda todo: [ComputedBatch(range(len(todo)), [t[0] * 2 for t in todo])], None,
    ...     to_json=str, from_json=str, progress=False)
    >>> run.outputs, run.computed
    (['aa', 'bb'], 2)
    """
    fingerprint = identity_fingerprint(identity)
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
        shown = (
            progress_bar(len(missing), unit=unit, desc=name, enabled=progress, leave=False)
            if bar is None
            else nullcontext(bar)
        )
        with shown as shown_bar, _PartialTicks(shown_bar) as ticks:
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
                ticks.finish_batch(len(targets))
    absent = len(done) - sum(done)
    if absent:
        raise RuntimeError(f"{name}: the model returned no output for {absent} inputs")
    return CachedOutputs(outputs, len(inputs) - len(missing), len(missing), real, padded, rejected, truncated)


class _PartialTicks:
    """Moves ``bar`` in whole items while a backend reports parts of a long batch."""

    def __init__(self, bar: Any) -> None:
        self.bar = bar
        self.heard = 0.0
        self.shown = 0
        self._scope: Any = None

    def _hear(self, items: float) -> None:
        self.heard += items
        whole = int(self.heard)
        if whole > self.shown:
            self.bar.update(whole - self.shown)
            self.shown = whole

    def finish_batch(self, items: int) -> None:
        if items > self.shown:
            self.bar.update(items - self.shown)
        self.heard, self.shown = 0.0, 0

    def __enter__(self) -> _PartialTicks:
        self._scope = items_progress(self._hear)
        self._scope.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._scope.__exit__(*exc)
