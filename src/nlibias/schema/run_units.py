"""One run's resampling units: what a benchmark's ``Measures.units`` builds and the paired bootstrap draws.

>>> units = RunUnits((np.array([[1.0], [0.0]]),), lambda totals: {"x": totals[:, 0]}, np.zeros(2, int))
>>> len(units), units.readable()
(2, 1)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True, eq=False)
class RunUnits:
    """``(units x columns)`` blocks, the statistic of their totals, each unit's stratum (drawn among
    themselves; non-decreasing) and each grouping's label per unit."""

    blocks: tuple[np.ndarray, ...]
    statistic: Callable[..., Mapping[str, np.ndarray]]
    stratum: np.ndarray
    groups: Mapping[str, Sequence[Any]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.stratum)

    def readable(self) -> int:
        """How many units hold an answer that was read (not a row of zeros)."""
        return int(np.count_nonzero(np.any(np.hstack(self.blocks) != 0, axis=1)))

    def take(self, index: np.ndarray | None) -> tuple[list[np.ndarray], tuple[int, ...]]:
        """The blocks of the units at ``index`` (ascending; None: all) and their strata sizes."""
        blocks = list(self.blocks) if index is None else [block[index] for block in self.blocks]
        codes = self.stratum if index is None else self.stratum[index]
        _, sizes = np.unique(codes, return_counts=True)
        return blocks, tuple(int(s) for s in sizes)

    def point(self, index: np.ndarray | None = None) -> Mapping[str, np.ndarray]:
        """Every measure on the units at ``index`` (None: all), each a one-value array."""
        blocks, _ = self.take(index)
        return self.statistic(*(block.sum(axis=0, keepdims=True) for block in blocks))
