"""Bootstrap resampling in chunks: same draws as one big draw when it fits, flat memory when not."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import nlibias.metrics.bootstrap as resampling
from nlibias.metrics.bootstrap import CHUNK_FLOATS, _resampled_totals, chunk_sizes, unit_draw_counts


def test_chunks_cover_every_resample_and_respect_the_cap() -> None:
    # 250,000 // 100,000 = 2 resamples a chunk; 10 units: all 1,000 in one chunk.
    assert list(chunk_sizes(5, 100_000)) == [2, 2, 1]
    assert list(chunk_sizes(3, 2_500_000)) == [1, 1, 1]  # never fewer than one resample
    assert list(chunk_sizes(1000, 10)) == [1000]
    sizes = list(chunk_sizes(1000, 47_000))  # 250,000 // 47,000 = 5 a chunk
    assert sum(sizes) == 1000 and max(sizes) == 5 and max(sizes) * 47_000 <= CHUNK_FLOATS
    assert list(chunk_sizes(0, 5)) == []


def test_draw_counts_are_draws_with_replacement() -> None:
    counts = unit_draw_counts(5, 200, np.random.default_rng(1))
    assert counts.shape == (200, 5)
    assert (counts.sum(axis=1) == 5).all()  # each resample draws 5 units
    assert (counts >= 0).all() and (counts == np.round(counts)).all()
    assert unit_draw_counts(0, 3, np.random.default_rng(1)).shape == (3, 0)


@pytest.mark.parametrize("chunk_floats", [10**9, 100, 20, 1])
def test_chunked_resampling_draws_exactly_what_one_big_draw_did(
    chunk_floats: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 20 units: chunks of 10**9 // 20 (all 50 resamples), 5, 1 and 1 resample(s) at a time.
    monkeypatch.setattr(resampling, "CHUNK_FLOATS", chunk_floats)
    rows = np.arange(60, dtype=float).reshape(20, 3)
    # Independent computation: the former code, one (resamples x units) draw, counted by hand.
    rng = np.random.default_rng(7)
    draws = rng.integers(0, 20, size=(50, 20))
    weights = np.zeros((50, 20))
    for resample in range(50):
        for unit in draws[resample]:
            weights[resample, unit] += 1
    expected = weights @ rows
    assert np.array_equal(_resampled_totals([rows], 50, np.random.default_rng(7))[0], expected)


def test_a_big_run_is_resampled_in_flat_memory() -> None:
    # 40,000 units x 1,000 resamples drawn at once: 320 MB of draws, 320 MB of counts and 320 MB of
    # floats (918 MiB peak measured). In chunks of 6 resamples (250,000 // 40,000) ~2 MB each.
    rows = np.ones((40_000, 4))
    tracemalloc.start()
    try:
        (totals,) = _resampled_totals([rows], 1000, np.random.default_rng(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert totals.shape == (1000, 4)
    assert (totals == 40_000).all()  # every resample draws 40,000 rows of ones
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.0f} MiB"
