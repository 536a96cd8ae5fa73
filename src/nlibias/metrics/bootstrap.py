"""The one bootstrap engine of every measure: percentile intervals from resampling units.

A ``(B x units)`` matrix ``W`` of draw counts gives all ``B`` resampled totals of a block ``X``
as ``W @ X``; a statistic turns totals into measures (NaN: undefined). docs/design.md, Intervals.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from statistics import NormalDist

import numpy as np

#: ``statistic(*totals)``: each measure's value in every resample (NaN: undefined there), from
#: the ``(resamples x columns)`` totals of each block, in block order.
Statistic = Callable[..., Mapping[str, np.ndarray]]
#: Largest number of floats one chunk of resamples may hold (chunked draws equal one big draw).
CHUNK_FLOATS = 250_000
_MAX_CODE_BITS = 60  # 0/1 rows of at most this many columns are coded as one integer each


def bootstrap_intervals(
    blocks: Sequence[np.ndarray],
    statistic: Statistic,
    *,
    resamples: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
    strata: Sequence[int] = (),
    distinct: bool = False,
) -> dict[str, list[float] | None]:
    """Percentile interval ``[lo, hi]`` of every measure of ``statistic`` over ``(units x columns)``
    ``blocks`` (None: undefined); ``strata``: sizes of consecutive runs of units resampled apart."""
    totals = draw_totals(blocks, resamples=resamples, rng=rng, strata=strata, distinct=distinct)
    intervals: dict[str, list[float] | None] = {}
    for name, values in statistic(*totals).items():
        found = percentile_interval(values, confidence)
        intervals[name] = None if found is None else list(found)
    return intervals


def draw_totals(
    blocks: Sequence[np.ndarray],
    *,
    resamples: int,
    rng: np.random.Generator,
    strata: Sequence[int] = (),
    distinct: bool = False,
) -> list[np.ndarray]:
    """The ``(resamples x columns)`` totals of each block, each stratum's units drawn among themselves."""
    n_units = len(blocks[0])
    sizes = list(strata) or [n_units]
    if sum(sizes) != n_units or any(len(block) != n_units for block in blocks):
        raise ValueError(f"strata of {sizes} units and blocks of {[len(b) for b in blocks]} rows disagree")
    totals = [np.zeros((max(resamples, 0), block.shape[1])) for block in blocks]
    start = 0
    for size in sizes if resamples > 0 else ():
        part = [block[start : start + size] for block in blocks]  # views, not copies
        start += size
        drawn = _resampled_totals(part, resamples, rng, distinct=distinct)
        totals = [t + d for t, d in zip(totals, drawn, strict=True)]
    return totals


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float] | None:
    """The central ``confidence`` percentile interval of the non-NaN ``values`` (None: none).

    >>> percentile_interval(np.array([np.nan, 1.0, 2.0, 3.0]), 0.5)
    (1.5, 2.5)
    """
    defined = values[~np.isnan(values)]
    if defined.size == 0:
        return None
    tail = (1.0 - confidence) / 2.0 * 100.0
    lo, hi = np.percentile(defined, [tail, 100.0 - tail])
    return float(lo), float(hi)


def smallest_p(resamples: int) -> float:
    """The smallest p-value ``(1 + #{...}) / (B + 1)`` a bootstrap test of ``B`` resamples gives."""
    return 1.0 / (resamples + 1)


def deciding_resamples(alpha: float, tests: int = 1) -> int:
    """The fewest resamples with which the smallest Holm-adjusted p, ``tests / (B + 1)``, is below ``alpha``.

    >>> deciding_resamples(0.05), deciding_resamples(0.05, tests=3), deciding_resamples(1e-6)
    (20, 60, 1000000)
    """
    resamples = max(0, math.floor(tests / alpha) - 2)
    while not tests * smallest_p(resamples) < alpha or math.isclose(tests * smallest_p(resamples), alpha):
        resamples += 1
    return resamples


def _resampled_totals(
    blocks: Sequence[np.ndarray], resamples: int, rng: np.random.Generator, *, distinct: bool = False
) -> list[np.ndarray]:
    """The ``(resamples x columns)`` totals of each block over ``resamples`` resamples of its rows."""
    n_units = len(blocks[0])
    found = _distinct_rows(blocks) if distinct else None
    probabilities = None
    if found is not None:
        first, probabilities = found
        blocks = [block[first] for block in blocks]
    sums: list[list[np.ndarray]] = [[] for _ in blocks]
    for size in chunk_sizes(resamples, len(blocks[0])):
        if probabilities is not None:
            weights = rng.multinomial(n_units, probabilities, size=size).astype(float)
        else:
            weights = unit_draw_counts(n_units, size, rng)
        for chunks, block in zip(sums, blocks, strict=True):
            chunks.append(weights @ block)
    return [np.vstack(chunks) for chunks in sums]


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
    """``(size, n_units)``: how often each unit is drawn, with replacement, in each of ``size`` resamples.

    >>> unit_draw_counts(4, 3, np.random.default_rng(0)).sum(axis=1).tolist()
    [4.0, 4.0, 4.0]
    """
    if n_units == 0:
        return np.zeros((size, 0))
    draws = rng.integers(0, n_units, size=(size, n_units))
    draws += np.arange(size)[:, None] * n_units  # one bincount for all rows: offset each row
    return np.bincount(draws.ravel(), minlength=size * n_units).reshape(size, n_units).astype(float)


def _distinct_rows(blocks: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
    """``(first position, frequency / units)`` of each distinct 0/1 unit row, when there are at
    most half as many as units; else None (draw units one by one)."""
    n_units = len(blocks[0])
    if sum(block.shape[1] for block in blocks) > _MAX_CODE_BITS:
        return None
    if not all(np.isin(block, (0.0, 1.0)).all() for block in blocks):
        return None
    # one integer per row, bit j its j-th 0/1 value, built a column at a time
    codes = np.zeros(n_units, dtype=np.int64)
    bit = 0
    for block in blocks:
        for j in range(block.shape[1]):
            codes |= block[:, j].astype(np.int64) << bit
            bit += 1
    unique_codes, first, frequency = np.unique(codes, return_index=True, return_counts=True)
    if len(unique_codes) * 2 > n_units:
        return None
    return first, frequency / n_units


def mean_intervals(
    values: np.ndarray,
    names: Sequence[str],
    *,
    resamples: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
) -> dict[str, list[float] | None]:
    """Percentile interval of each column's percent mean over resampled units (NaN units skipped).

    >>> mean_intervals(np.array([[0.0], [1.0], [np.nan]]), ["x"], resamples=0, rng=np.random.default_rng(0))
    {'x': None}
    """
    defined = ~np.isnan(values)
    return bootstrap_intervals(
        [_zero_filled(values, defined), defined.astype(float)],
        percent_means(names),
        resamples=resamples if len(values) else 0,
        rng=rng,
        confidence=confidence,
        distinct=True,
    )


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator`` elementwise, NaN where the denominator is not positive.

    >>> ratio(np.array([1.0, 1.0]), np.array([4.0, 0.0])).tolist()
    [0.25, nan]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / denominator, np.nan)


def percent_means(names: Sequence[str]) -> Statistic:
    """The statistic of columns' percent means from ``(sums, defined counts)`` blocks (NaN: no unit).

    >>> percent_means(["x"])(np.array([[1.0]]), np.array([[4.0]]))["x"].tolist()
    [25.0]
    """
    names = list(names)

    def means(sums: np.ndarray, counts: np.ndarray) -> dict[str, np.ndarray]:
        found = ratio(100.0 * sums, counts)
        return {name: found[:, j] for j, name in enumerate(names)}

    return means


def _zero_filled(values: np.ndarray, defined: np.ndarray) -> np.ndarray:
    """``values`` with NaN as 0 (no copy when it has none and is C-ordered float64)."""
    if values.dtype == np.float64 and values.flags.c_contiguous and defined.all():
        return values
    return np.where(defined, values, 0.0)


def detectable_change(
    spreads: Mapping[str, float],
    margin: float,
    alpha: float,
    *,
    baseline_bias: float = 0.0,
    power: float = 0.8,
) -> float | None:
    """The smallest change in bias ``d`` (points) a test at level ``alpha`` detects with probability
    ``power`` (normal approximation: Δ = d and Σ = 2 |m_b - ν| + d each above ``margin + z x
    spread``); None when a spread is undefined.

    >>> round(detectable_change({"delta": 1.0}, 0.0, 0.05), 3)  # (1.645 + 0.842) x 1
    2.486
    """
    if not spreads or any(not np.isfinite(v) for v in spreads.values()):
        return None
    normal = NormalDist()
    z = normal.inv_cdf(1.0 - alpha)
    offsets = {"delta": 0.0, "sum": 2.0 * baseline_bias}

    def power_at(d: float) -> float:
        found = 1.0
        for name, spread in spreads.items():
            found *= normal.cdf((d + offsets[name] - margin) / max(spread, 1e-12) - z)
        return found

    low, high = margin, margin + (z + normal.inv_cdf(power ** (1 / len(spreads)))) * max(spreads.values())
    for _ in range(60):  # bisection: power grows with d
        middle = (low + high) / 2.0
        low, high = (middle, high) if power_at(middle) < power else (low, middle)
    return high
