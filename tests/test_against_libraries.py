"""Our statistics against well-kept libraries on random data: percentile bootstrap intervals
(scipy.stats.bootstrap), Holm's adjustment (statsmodels), Cohen's kappa (scikit-learn) and
Fleiss' kappa (statsmodels). docs/design.md, "Intervals", "Gate" and "Agreement", define them."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa
from statsmodels.stats.multitest import multipletests

from nlibias.metrics.bootstrap import bootstrap_intervals, mean_intervals
from nlibias.metrics.paired import holm
from nlibias.validation.agreement import cohen_kappa, fleiss_kappa

LABELS = ("valid", "invalid", "incoherent")


def _mean_of(n_units: int):  # one block of one column: its resampled totals over n units
    return lambda totals: {"mean": totals[:, 0] / n_units}


@pytest.mark.parametrize(("n_units", "seed"), [(7, 0), (150, 1), (2_000, 2)])
def test_percentile_interval_equals_scipy_on_the_same_draws(n_units: int, seed: int) -> None:
    # Both draw every resample at once as rng.integers(0, n, (B, n)) (our engine in one chunk
    # while B * n <= CHUNK_FLOATS), so one seed gives both the same resample indices, and the
    # percentile intervals must agree to float rounding (the sums are taken in another order).
    values = np.random.default_rng(100 + seed).normal(3.0, 2.0, size=n_units)
    resamples = 99
    ours = bootstrap_intervals(
        [values[:, None]], _mean_of(n_units), resamples=resamples, rng=np.random.default_rng(seed)
    )["mean"]
    theirs = scipy.stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=resamples,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(seed),
    ).confidence_interval
    assert ours == pytest.approx([theirs.low, theirs.high], rel=1e-12, abs=1e-12)


def test_percentile_interval_of_repeated_01_rows_matches_scipy_within_monte_carlo_error() -> None:
    # 0/1 rows that repeat are drawn as multinomial counts over the distinct rows (not unit by
    # unit), so the draws differ from scipy's; the intervals agree within Monte-Carlo error.
    # 400 units at p = 0.3: the mean's sd is sqrt(.3 * .7 / 400) = 2.29 points; the density of
    # its 2.5% quantile is phi(1.96) / 2.29 = 0.0255 per point, so with B = 4,000 each endpoint's
    # sd is sqrt(.025 * .975 / 4000) / 0.0255 = 0.097 points and a difference of two is 0.14:
    # 0.6 points is more than 4 of them.
    values = (np.random.default_rng(5).random(400) < 0.3).astype(float)
    ours = mean_intervals(values[:, None], ["rate"], resamples=4_000, rng=np.random.default_rng(6))["rate"]
    theirs = scipy.stats.bootstrap(
        (100.0 * values,), np.mean, n_resamples=4_000, method="percentile", rng=np.random.default_rng(7)
    ).confidence_interval
    assert ours is not None
    assert ours[0] == pytest.approx(theirs.low, abs=0.6) and ours[1] == pytest.approx(theirs.high, abs=0.6)


@settings(max_examples=25, deadline=None)  # statsmodels takes ~0.15 s a call here
@given(
    st.lists(
        st.floats(0.0, 1.0, allow_nan=False) | st.sampled_from([0.0, 0.01, 0.05, 1.0]),
        min_size=1,
        max_size=30,
    )
)
def test_holm_equals_statsmodels(pvalues: list[float]) -> None:
    expected = multipletests(pvalues, method="holm")[1]
    assert holm(pvalues) == pytest.approx(list(expected), rel=1e-12, abs=1e-15)


def test_holm_on_a_hand_checked_case() -> None:
    # sorted .01 .02 .04 .30 of m = 4: 4 * .01 = .04, 3 * .02 = .06, 2 * .04 = .08, 1 * .30 = .30
    assert holm([0.30, 0.01, 0.04, 0.02]) == pytest.approx([0.30, 0.04, 0.08, 0.06])


_ratings = st.lists(st.sampled_from(LABELS), min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_cohen_kappa_equals_scikit_learn(data: st.DataObject) -> None:
    first = data.draw(_ratings)
    second = data.draw(st.lists(st.sampled_from(LABELS), min_size=len(first), max_size=len(first)))
    ours = cohen_kappa(first, second)
    with warnings.catch_warnings():  # scikit-learn warns where kappa is undefined (NaN)
        warnings.simplefilter("ignore")
        theirs = float(cohen_kappa_score(first, second))
    if ours is None:  # chance agreement of 1 (both raters used one and the same label): undefined
        assert len(set(first) | set(second)) == 1 and not math.isfinite(theirs)
    else:
        assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(3, 6).flatmap(
        lambda raters: st.lists(
            st.lists(st.sampled_from(LABELS), min_size=raters, max_size=raters), min_size=1, max_size=30
        )
    )
)
def test_fleiss_kappa_equals_statsmodels(ratings: list[list[str]]) -> None:
    ours = fleiss_kappa(ratings, LABELS)
    codes = np.array([[LABELS.index(label) for label in item] for item in ratings])
    table, _ = aggregate_raters(codes, n_cat=len(LABELS))
    with np.errstate(divide="ignore", invalid="ignore"):
        theirs = float(statsmodels_fleiss_kappa(table, method="fleiss"))
    if ours is None:  # every rating the same label: chance agreement 1, kappa undefined
        assert len({label for item in ratings for label in item}) == 1 and not math.isfinite(theirs)
    else:
        assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12)
