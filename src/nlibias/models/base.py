"""The NLI classifier contract: probabilities batch by batch, each cached at once."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

Pair = tuple[str, str]
"""A (premise, hypothesis) pair."""


@dataclass(frozen=True)
class BatchResult:
    """The outputs of one batch of a backend."""

    indices: np.ndarray
    """Positions of the batch's items in the input sequence."""
    probs: np.ndarray
    """Shape ``(len(indices), 3)``: entailment, neutral, contradiction probabilities."""
    real_tokens: int = 0
    """Tokens of the inputs themselves."""
    padded_tokens: int = 0
    """Tokens the model processed, padding included (``real / padded`` = padding efficiency)."""
    truncated: int = 0
    """Pairs of the batch longer than the model's maximum length, truncated to it."""


@runtime_checkable
class NLIClassifier(Protocol):
    """A 3-way NLI model; ``identity()`` determines its outputs (the cache key)."""

    name: str

    def identity(self) -> Mapping[str, Any]: ...

    def predict_batches(self, pairs: Sequence[Pair]) -> Iterator[BatchResult]: ...


class Identified:
    """A backend whose outputs ``_identity`` determines (the cache key)."""

    _identity: dict[str, Any]

    def identity(self) -> Mapping[str, Any]:
        return dict(self._identity)
