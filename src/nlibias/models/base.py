"""Model contracts. Implementations live in the subpackages; tests use :mod:`.fake`.

An NLI classifier turns (premise, hypothesis) pairs into probabilities over
``(entailment, neutral, contradiction)``. It yields results batch by batch so that the caller can
commit each batch to the prediction cache as soon as it is computed (a killed run then loses at
most one batch).
"""

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
    """A 3-way NLI model.

    ``name`` is the key the model's results are reported under. ``identity()`` returns everything
    that determines the outputs (backend, model id, revision or file hash, settings that change
    outputs); the prediction cache keys on it, so two models never share entries.
    """

    name: str

    def identity(self) -> Mapping[str, Any]: ...

    def predict_batches(self, pairs: Sequence[Pair]) -> Iterator[BatchResult]: ...
