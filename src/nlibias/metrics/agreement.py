"""Cohen's kappa, the one agreement of two raters beyond chance.

>>> round(cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"]), 3)
0.5
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters: ``(p_o − p_e) / (1 − p_e)``, ``p_e = Σ_k p_1(k) p_2(k)``; None
    where it is undefined (no items, or chance agreement 1)."""
    if len(first) != len(second):
        raise ValueError("both raters must rate the same items")
    n = len(first)
    if n == 0:
        return None
    observed = sum(1 for a, b in zip(first, second, strict=True) if a == b) / n
    counts_1, counts_2 = Counter(first), Counter(second)
    expected = sum(counts_1[k] * counts_2[k] for k in counts_1) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)
