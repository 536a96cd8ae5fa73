"""A deterministic fake NLI classifier for unit tests and dry runs (no torch needed)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from nlibias.models.base import BatchResult, Pair
from nlibias.models.batching import plan_batches
from nlibias.schema import LABEL_INDEX


class FakeNLIClassifier:
    """Probabilities from a hash of the pair (the same pair, the same answer), or 0.9 for the label
    of the first ``rules`` substring the lowercased hypothesis holds.

    >>> fake = FakeNLIClassifier(rules={"always": "entailment"})
    >>> batch = next(fake.predict_batches([("P.", "It is always so.")]))
    >>> batch.probs.argmax(axis=1).tolist()
    [0]
    """

    def __init__(
        self,
        name: str = "fake-nli",
        *,
        rules: Mapping[str, str] | None = None,
        seed: int = 0,
        batch_size: int = 16,
    ) -> None:
        self.name = name
        self.rules = dict(rules or {})
        self.seed = seed
        self.batch_size = batch_size
        self.calls: list[int] = []
        """Sizes of the batches computed so far."""

    def identity(self) -> Mapping[str, Any]:
        return {"backend": "fake", "model": self.name, "rules": self.rules, "seed": self.seed}

    def _probs(self, premise: str, hypothesis: str) -> np.ndarray:
        lowered = hypothesis.lower()
        for needle, label in self.rules.items():
            if needle in lowered:
                probs = np.full(3, 0.05)
                probs[LABEL_INDEX[label]] = 0.9
                return probs
        digest = hashlib.sha256(f"{self.name}\0{self.seed}\0{premise}\0{hypothesis}".encode()).digest()
        raw = np.frombuffer(digest[:3], dtype=np.uint8).astype(np.float64) + 1.0
        return raw / raw.sum()

    def predict_batches(self, pairs: Sequence[Pair]) -> Iterator[BatchResult]:
        lengths = [len(p) + len(h) for p, h in pairs]
        for batch in plan_batches(lengths, max_tokens=10**9, max_batch_size=self.batch_size):
            self.calls.append(len(batch))
            probs = np.stack([self._probs(*pairs[i]) for i in batch]) if len(batch) else np.zeros((0, 3))
            real = int(sum(lengths[i] for i in batch))
            yield BatchResult(indices=batch, probs=probs, real_tokens=real, padded_tokens=real)
