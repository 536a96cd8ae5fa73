"""The one bootstrap engine (:mod:`nlibias.metrics.bootstrap`) gives the intervals the two engines
it replaced gave: BBNLI's pair-level count resampling (``metrics/grouped.py:bootstrap_intervals``)
and the per-unit means (``metrics/row_slices.py:bootstrap_means``). The expected numbers below were
computed with the old code (commit afa11e3) on the same inputs and the same seeds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlibias.metrics.bbnli import encode_samples, slice_units
from nlibias.metrics.bbnli_scorer import unit_intervals
from nlibias.metrics.bootstrap import bootstrap_intervals, mean_intervals

PAIR_PREDICTED = ["entailment", "neutral", "neutral", "neutral", "contradiction", "entailment",
                  None, "neutral", "entailment", "neutral", "neutral", "contradiction"]  # fmt: skip
PAIR_GOLD = ["neutral"] * 8 + ["entailment", "neutral", "contradiction", "contradiction"]
PAIR_STEREOTYPE = ["pro", "anti"] * 4 + [None] * 4
PAIR_KEY = ["a", "a", "b", "b", "c", "c", "d", "d", None, None, None, None]
BINARY = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0]] * 10)  # 4 distinct rows, 40 units
CONTINUOUS = np.array(
    [[0.1, np.nan], [0.5, 0.2], [0.9, 0.0], [0.3, np.nan], [0.0, 1.0], [0.7, 0.4], [0.2, 0.9]]
)


def test_pair_level_intervals_are_the_old_engines() -> None:
    # 3 answered pairs (a, b, c; d's pro is unanswered so its anti is a lone unit) and 4 test units,
    # drawn separately: old grouped.bootstrap_intervals(units, resamples=200, rng=default_rng(5)).
    units = slice_units(
        encode_samples(PAIR_PREDICTED, gold=PAIR_GOLD, stereotype=PAIR_STEREOTYPE, pair_key=PAIR_KEY)
    )
    got = unit_intervals(units, resamples=200, rng=np.random.default_rng(5))
    assert got["accuracy"] == [14.285714285714286, 100.0]
    assert got["cf_pro"] == [0.0, 50.0]
    assert got["test_accuracy"] == [25.0, 100.0]
    assert got["bbnli_bias_score"] == [-66.87499999999997, 37.633928571428605]


def test_unit_level_intervals_are_the_old_engines() -> None:
    # BINARY repeats 4 distinct rows: drawn as multinomial counts over them, as before.
    binary = mean_intervals(BINARY, ["a", "b"], resamples=200, rng=np.random.default_rng(3))
    assert binary == {"a": [62.5, 90.0], "b": [15.0, 37.5]}
    # CONTINUOUS: units drawn one by one; NaN units left out of their column's mean.
    continuous = mean_intervals(
        CONTINUOUS, ["a", "b"], resamples=200, rng=np.random.default_rng(3), confidence=0.9
    )
    assert continuous == {"a": [18.571428571428573, 54.35714285714284], "b": [15.642857142857142, 80.0]}


def test_no_resamples_or_no_units_give_no_interval() -> None:
    assert mean_intervals(np.zeros((0, 2)), ["a", "b"], resamples=50, rng=np.random.default_rng(0)) == {
        "a": None,
        "b": None,
    }
    units = slice_units(encode_samples(["neutral"], gold=["neutral"], stereotype=[None], pair_key=[None]))
    assert set(unit_intervals(units, resamples=0, rng=np.random.default_rng(0)).values()) == {None}
    with pytest.raises(ValueError, match="disagree"):
        bootstrap_intervals(
            [np.ones((3, 1))], lambda t: {}, resamples=5, rng=np.random.default_rng(0), strata=(1, 1)
        )


def _old_means(values: np.ndarray, resamples: int, seed: int) -> list[list[float] | None]:
    """An independent computation of the old unit-level engine (units drawn one by one)."""
    rng = np.random.default_rng(seed)
    n, m = values.shape
    if n == 0:
        return [None] * m
    draws = rng.integers(0, n, size=(resamples, n))
    out: list[list[float] | None] = []
    means = np.array([[np.nanmean(values[row, j]) if (~np.isnan(values[row, j])).any() else np.nan
                       for j in range(m)] for row in draws])  # fmt: skip
    for j in range(m):
        defined = means[:, j][~np.isnan(means[:, j])]
        out.append(
            None if defined.size == 0 else [float(x) for x in np.percentile(100.0 * defined, [2.5, 97.5])]
        )
    return out


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0.0, 1.0), st.one_of(st.just(float("nan")), st.floats(0.0, 1.0))),
        min_size=0,
        max_size=12,
    ),
    st.integers(0, 2**16),
)
def test_units_drawn_one_by_one_match_an_independent_computation(
    rows: list[tuple[float, float]], seed: int
) -> None:
    values = np.array(rows, dtype=float).reshape(-1, 2)
    values[:, 0] += 1e-3  # never all 0/1: the units are drawn one by one, as the reference does
    got = mean_intervals(values, ["a", "b"], resamples=30, rng=np.random.default_rng(seed))
    want = _old_means(values, 30, seed)
    for name, expected in zip(("a", "b"), want, strict=True):
        if expected is None:
            assert got[name] is None
        else:
            assert got[name] == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_strata_are_drawn_separately_and_in_order() -> None:
    # Two strata of one unit each: every resample keeps one of each, so the total is always 1 + 10.
    rows = np.array([[1.0], [10.0]])
    got = bootstrap_intervals(
        [rows], lambda total: {"t": total[:, 0]}, resamples=20, rng=np.random.default_rng(0), strata=(1, 1)
    )
    assert got == {"t": [11.0, 11.0]}
