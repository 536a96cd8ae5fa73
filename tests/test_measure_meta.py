"""Every reported measure is declared once in nlibias.metrics.meta (direction, range), and the
grouped results pick the worst group of any of them by its declared direction: WinoQueer-NLI's
M1-M8, the gender-occupation S, ΔP and B, and the token-probability measures, not only BBNLI's."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nlibias.errors import ConfigError
from nlibias.metrics.meta import (
    ALL_MEASURES,
    MEASURES,
    OCCUPATION_MEASURES,
    TOKEN_PROBABILITY_MEASURES,
    WQ_NLI_MEASURES,
    MeasureInfo,
    measure_info,
)
from nlibias.metrics.metric_frame import is_measure_value, units_frame
from nlibias.metrics.occupations import MEASURE_KEYS
from nlibias.metrics.token_probability import TP_MEASURES, tp_measures, tp_unit_values
from nlibias.metrics.wq_nli import M_KEYS, wq_conditions

REGRESSION = Path(__file__).parent / "fixtures" / "regression"


def _rows(e_pairs: list[tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """p(.|S) and p(.|S~) rows with the given entailment probabilities (neutral takes the rest
    but 0.05, contradiction 0.05)."""
    stereo = np.array([[e, 0.95 - e, 0.05] for e, _ in e_pairs])
    counter = np.array([[e, 0.95 - e, 0.05] for _, e in e_pairs])
    return stereo, counter


def test_the_worst_wq_nli_group_is_the_farthest_from_50_for_m1_and_the_highest_for_m3() -> None:
    # (p(E|S), p(E|S~)) per row, three groups:
    rows = {
        "a": [(0.9, 0.1), (0.8, 0.2), (0.3, 0.6)],  # M1: yes yes no -> 2/3 = 66.67; M3 (> .5): 2/3
        "b": [(0.6, 0.5), (0.2, 0.1), (0.1, 0.4), (0.4, 0.7)],  # M1: 2/4 = 50; M3: 1/4 = 25
        "c": [(0.1, 0.2), (0.2, 0.3), (0.3, 0.4), (0.4, 0.5)],  # M1: 0/4 = 0; M3: 0/4 = 0
    }
    labels = [group for group, pairs in rows.items() for _ in pairs]
    stereo, counter = _rows([pair for pairs in rows.values() for pair in pairs])
    frame = units_frame(wq_conditions(stereo, counter).astype(float), M_KEYS, groups={"g": labels},
                        count_measures=set(M_KEYS), bootstrap=0, seed=0, n_key="n_rows")  # fmt: skip
    assert frame.by_group["g"]["a"]["M1"] == pytest.approx(200 / 3)
    # M1 is unbiased at 50: |66.67 - 50| = 16.67, |50 - 50| = 0, |0 - 50| = 50 -> c, although a is highest
    assert frame.worst_group("M1", by="g") == ("c", 0.0)
    # M3 counts rows where S entails the stereotype (unbiased: 0): the highest, a, is the worst
    assert frame.worst_group("M3", by="g") == ("a", pytest.approx(200 / 3))


def test_the_worst_occupation_group_by_s_delta_p_and_b() -> None:
    # Per pair: same label (S), |P_e(f) - P_e(m)| as a fraction (delta_p), aligned higher (B)
    values = np.array(
        [
            [1, 0.10, 1],  # nurse
            [0, 0.30, 1],  # nurse: S 1/2 = 50, delta_p (10 + 30) / 2 = 20, B 2/2 = 100
            [1, 0.40, 0],  # pilot
            [1, 0.20, 1],  # pilot: S 2/2 = 100, delta_p (40 + 20) / 2 = 30, B 1/2 = 50
        ],
        dtype=float,
    )
    frame = units_frame(values, MEASURE_KEYS[:3], groups={"occupation": ["nurse", "nurse", "pilot", "pilot"]},
                        count_measures={"S", "B"}, bootstrap=0, seed=0, n_key="n_pairs")  # fmt: skip
    assert frame.worst_group("S", by="occupation") == ("nurse", 50.0)  # higher is better: 50 < 100
    assert frame.worst_group("delta_p", by="occupation") == ("pilot", pytest.approx(30.0))  # 30 > 20
    assert frame.worst_group("B", by="occupation") == ("nurse", 100.0)  # lower is better: 100 > 50


def test_the_worst_token_probability_group_is_the_farthest_from_50() -> None:
    # (score of the more-stereotypical sentence, score of the other), per pair
    pairs = {
        "x": [(-1.0, -2.0), (-3.0, -2.0)],  # preferred: yes, no -> 1/2 = 50
        "y": [(-1.0, -2.0), (-1.0, -3.0), (-2.0, -5.0), (-4.0, -3.0)],  # 3/4 = 75
        "z": [(-5.0, -1.0), (-2.0, -2.0), (-3.0, -1.0)],  # no, tie, no -> 0/3 = 0
    }
    labels = [group for group, scored in pairs.items() for _ in scored]
    more, less = zip(*(pair for scored in pairs.values() for pair in scored), strict=True)
    values = tp_unit_values(more, less, direction=["stereo"] * len(more))
    frame = units_frame(values, TP_MEASURES, groups={"g": labels}, count_measures={"tp_bias_score", "ties"},
                        bootstrap=0, seed=0, n_key="n_pairs")  # fmt: skip
    # |50 - 50| = 0, |75 - 50| = 25, |0 - 50| = 50 -> z
    assert frame.worst_group("tp_bias_score", by="g") == ("z", 0.0)
    # stereo_score over non-tied stereo pairs: x 1/2 = 50, y 3/4 = 75, z 0/2 = 0 -> z again
    assert frame.worst_group("stereo_score", by="g") == ("z", 0.0)
    with pytest.raises(ValueError, match="'ties' has no better value"):
        frame.worst_group("ties", by="g")  # a share of tied pairs is neither good nor bad
    with pytest.raises(ValueError, match="'likelihood_diff' has no better value"):
        frame.worst_group("likelihood_diff", by="g")


def test_an_undeclared_measure_has_no_worst_group() -> None:
    frame = units_frame(np.ones((2, 1)), ["hit"], groups={"g": ["a", "b"]}, count_measures=set(),
                        bootstrap=0, seed=0, n_key="n")  # fmt: skip
    with pytest.raises(KeyError, match="'hit' declares no direction"):
        frame.worst_group("hit", by="g")


def test_directions_ideals_and_ranges() -> None:
    assert [ALL_MEASURES[m].direction for m in M_KEYS] == [
        "target", "lower", "lower", "lower", "target", "target", "lower", "lower",
    ]  # fmt: skip
    assert {m: ALL_MEASURES[m].ideal for m in ("M1", "M3", "S", "delta_p", "B", "tp_bias_score")} == {
        "M1": 50.0, "M3": 0.0, "S": 100.0, "delta_p": 0.0, "B": 50.0, "tp_bias_score": 50.0,
    }  # fmt: skip
    # B is signed about 50 (docs/design.md): 12.5 (towards the anti-stereotype) is worse than 60, not
    # the least biased value as when B was declared "lower is better"
    b = measure_info("B")
    assert b.badness(12.5) == 37.5 and b.is_better(60.0, 12.5) and not b.is_better(12.5, 60.0)
    m1 = measure_info("M1")
    assert m1.is_better(48.0, 53.0) and m1.is_better(55.0, 40.0) and not m1.is_better(60.0, 45.0)
    assert m1.badness(35.0) == 15.0 and m1.badness(65.0) == 15.0
    assert not measure_info("ties").is_better(0.0, 10.0) and measure_info("ties").ideal is None
    assert measure_info("likelihood_diff").range == (0.0, math.inf)
    assert measure_info("likelihood_diff").unit == "nats"
    assert tuple(WQ_NLI_MEASURES) == M_KEYS and tuple(OCCUPATION_MEASURES) == MEASURE_KEYS
    assert tuple(TOKEN_PROBABILITY_MEASURES) == TP_MEASURES
    assert list(MEASURES) == list(ALL_MEASURES)[: len(MEASURES)]  # BBNLI's table is unchanged
    with pytest.raises(ConfigError, match="give a target exactly"):
        MeasureInfo("x", "d", "target", (0.0, 100.0), "c")
    with pytest.raises(ConfigError, match="outside its range"):
        MeasureInfo("x", "d", "target", (0.0, 100.0), "c", target=150.0)


def _measure_keys(grouped: Any) -> set[str]:
    keys: set[str] = set()
    for key, part in grouped.items():
        slices = [part] if key == "overall" else part.values() if key.startswith("by_") else []
        for slice_ in slices:
            keys |= {k for k, v in slice_.items() if is_measure_value(k, v)}
    return keys


def test_every_measure_nlibias_writes_is_declared() -> None:
    written: set[str] = set()
    for path in sorted(REGRESSION.glob("*/*/metrics.json")):
        for metrics in json.loads(path.read_text(encoding="utf-8"))["models"].values():
            written |= _measure_keys(metrics)
    tp = tp_measures(
        [-1.0, -2.0], [-2.0, -1.0], direction=["stereo", "antistereo"], groups={}, bootstrap=0, seed=0
    )
    written |= _measure_keys(tp)
    assert {"M1", "S", "delta_p", "B", "accuracy", "yes_rate_pro", "tp_bias_score"} <= written
    assert written - set(ALL_MEASURES) == set()
