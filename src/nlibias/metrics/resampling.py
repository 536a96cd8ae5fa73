"""Bootstrap resampling in bounded memory: how often each unit is drawn, a chunk of resamples at a time.

>>> import numpy as np
>>> counts = unit_draw_counts(4, 3, np.random.default_rng(0))
>>> counts.shape, counts.sum(axis=1).tolist()
((3, 4), [4.0, 4.0, 4.0])
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

#: Largest number of floats one chunk of resamples may hold (~6 MiB at the peak, and faster than
#: bigger chunks); chunked draws are exactly the numbers one big draw gives (tested).
CHUNK_FLOATS = 250_000


def chunk_sizes(resamples: int, n_units: int) -> Iterator[int]:
    """Numbers of resamples per chunk so that ``size * n_units <= CHUNK_FLOATS`` (at least 1).

    >>> list(chunk_sizes(5, 100_000))
    [2, 2, 1]
    """
    per_chunk = max(1, CHUNK_FLOATS // max(n_units, 1))
    done = 0
    while done < resamples:
        size = min(per_chunk, resamples - done)
        yield size
        done += size


def unit_draw_counts(n_units: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``(size, n_units)`` floats: how often each of ``n_units`` units is drawn, with replacement,
    in each of ``size`` resamples of ``n_units`` draws."""
    if n_units == 0:
        return np.zeros((size, 0))
    draws = rng.integers(0, n_units, size=(size, n_units))
    draws += np.arange(size)[:, None] * n_units  # one bincount for all rows: offset each row
    return np.bincount(draws.ravel(), minlength=size * n_units).reshape(size, n_units).astype(float)
