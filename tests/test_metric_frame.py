"""The one grouped-result object (MetricFrame) behind every benchmark's slices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlibias.metrics import MetricFrame, bbnli_frame
from nlibias.metrics.bbnli import encode_samples
from nlibias.metrics.metric_frame import FRAME_COLUMNS, check_resampling, units_frame

E, N, C = "entailment", "neutral", "contradiction"


def test_units_frame_means_match_pandas_groupby():
    # rows: g=a -> hit 1, 0 (50%), gap .2, .4 (30%); g=b -> hit 1 (100%), gap 0 (0%)
    values = np.array([[1.0, 0.2], [0.0, 0.4], [1.0, 0.0]])
    frame = units_frame(
        values, ["hit", "gap"], groups={"g": ["a", "a", "b"]}, count_measures={"hit"},
        bootstrap=0, seed=0, n_key="n_rows",
    )  # fmt: skip
    table = frame.to_frame()
    assert list(table.columns) == list(FRAME_COLUMNS)
    by_g = table[table.slicing == "g"].set_index(["slice", "measure"])["value"]
    independent = (
        pd.DataFrame(values, columns=["hit", "gap"]).assign(g=["a", "a", "b"]).groupby("g").mean() * 100
    )
    for (group, measure), value in by_g.items():
        assert value == pytest.approx(independent.loc[group, measure])
    assert frame.difference("hit", by="g") == 50.0  # 100 - 50
    assert frame.difference("gap", by="g") == pytest.approx(30.0)  # 30 - 0
    assert table.set_index(["slicing", "slice", "measure"]).loc[("overall", "all", "hit"), "n"] == 3


def test_unknown_measure_and_grouping_are_refused():
    frame = units_frame(np.ones((2, 1)), ["M1"], groups={"g": ["a", "b"]}, count_measures=set(),
                        bootstrap=0, seed=0, n_key="n_rows")  # fmt: skip
    with pytest.raises(KeyError, match="unknown measure 'M9'"):
        frame.difference("M9", by="g")
    with pytest.raises(KeyError, match="no grouping 'h'"):
        frame.difference("M1", by="h")
    assert frame.worst_group("M1", by="g") == ("a", 100.0)  # both 100; |100 - 50| ties: the first group


@pytest.mark.parametrize(
    ("bootstrap", "confidence"), [(-1, 0.95), (True, 0.95), (1.5, 0.95), (10, 1.0), (10, 0)]
)
def test_check_resampling_refuses(bootstrap, confidence):
    with pytest.raises(ValueError):
        check_resampling(bootstrap, confidence)


def test_grouping_of_wrong_length_is_refused():
    with pytest.raises(ValueError, match="grouping 'g' has 1 values but there are 2 units"):
        MetricFrame(lambda index, rng: {"n": 0, "ci": {}}, n_units=2, groups={"g": ["a"]})


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([E, N, C]), min_size=2, max_size=12), st.randoms(use_true_random=False))
def test_bbnli_frame_slices_do_not_depend_on_sample_order(labels, random):
    # Pairs (2k, 2k+1); a slice's measures and intervals are the same whatever the sample order.
    n = len(labels) - len(labels) % 2
    labels = labels[:n]
    stereotype = ["pro", "anti"] * (n // 2)
    keys = [str(i // 2) for i in range(n)]
    domain = ["d" + str(i // 4) for i in range(n)]
    order = list(range(n))
    random.shuffle(order)

    def frame(index):
        pick = lambda xs: [xs[i] for i in index]  # noqa: E731
        encoded = encode_samples(pick(labels), gold=[N] * n, stereotype=pick(stereotype), pair_key=pick(keys))
        return bbnli_frame(encoded, groups={"domain": pick(domain)}, bootstrap=0).to_dict()

    first, shuffled = frame(range(n)), frame(order)
    for slice_name in ("overall",):
        for measure in ("accuracy", "cf_pro", "cf_anti", "cf_error", "bbnli_bias_score"):
            assert first[slice_name][measure] == shuffled[slice_name][measure]
    assert {g: m["cf_pro"] for g, m in first["by_domain"].items()} == {
        g: m["cf_pro"] for g, m in shuffled["by_domain"].items()
    }
