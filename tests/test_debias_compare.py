"""Before/after comparison (jobs.debias_compare): paired differences and pairs found from finetune.json."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlibias.errors import ConfigError
from nlibias.jobs.debias_compare import compare_debiasing, find_pairs, paired_differences


def test_paired_differences_by_hand_and_against_the_difference_of_means() -> None:
    # pairs x [same binary prediction, |dP|, aligned higher, same 3-way label (S_3way, = S here)];
    # pair 3 has no P_e for the "after" model
    before = np.array([[1, 0.30, 1, 1], [0, 0.10, 0, 0], [1, 0.20, 1, 1], [1, 0.40, 1, 1]], dtype=float)
    after = np.array([[1, 0.10, 0, 1], [1, 0.10, 0, 1], [1, 0.00, 0, 1], [1, np.nan, np.nan, 1]], dtype=float)
    result = paired_differences(before, after, groups={"g": ["f", "m", "f", "m"]}, bootstrap=200, seed=1)
    overall = result["overall"]
    # S over 4 pairs: 3/4 -> 4/4 = +25; dP over pairs 0-2: (.3+.1+.2)/3 = 20 -> (.1+.1+0)/3 = 6.67: -13.33;
    # B over pairs 0-2: 2/3 -> 0 = -66.67
    assert overall["S"] == pytest.approx(25.0)
    assert overall["delta_p"] == pytest.approx(-40.0 / 3)
    assert overall["B"] == pytest.approx(-200.0 / 3)
    # independently: the difference of the means over the pairs both models define
    both = ~np.isnan(after[:, 1])
    assert overall["delta_p"] == pytest.approx(100 * (after[both, 1].mean() - before[both, 1].mean()))
    # female-dominated pairs 0 and 2: S unchanged, B 2/2 -> 0/2
    assert result["by_g"]["f"]["S"] == 0.0 and result["by_g"]["f"]["B"] == pytest.approx(-100.0)
    low, high = overall["ci"]["B"]
    assert low <= overall["B"] <= high <= 0  # B falls or stays in every pair: no resample rises
    same = paired_differences(before, before, groups={}, bootstrap=50)["overall"]
    assert same["S"] == 0.0 and same["ci"]["S"] == [0.0, 0.0]
    with pytest.raises(ValueError, match="same pairs"):
        paired_differences(before, after[:2], groups={})


def record(path: Path, model: str, train: Path, accuracy: float) -> str:
    path.mkdir(parents=True)
    (path / "finetune.json").write_text(
        json.dumps({"settings": {"model": model}, "train": str(train), "eval_accuracy": accuracy})
    )
    return str(path)


def test_find_pairs_from_finetune_records(tmp_path: Path) -> None:
    aug = tmp_path / "aug"
    aug.mkdir()
    (aug / "augment_summary.json").write_text("{}")
    plain = tmp_path / "train.jsonl"
    bert = record(tmp_path / "bert", "bert-base-uncased", plain, 0.9)
    bert_aug = record(tmp_path / "bert-aug", "bert-base-uncased", aug, 0.91)
    roberta_aug = record(tmp_path / "roberta-aug", "roberta-base", aug / "train.jsonl", 0.9)
    # roberta-aug has no baseline among the models: no pair for it
    assert find_pairs([bert_aug, "some/hub-model", bert, roberta_aug]) == [(bert, bert_aug)]
    assert find_pairs([bert]) == []


def test_compare_refuses_runs_without_pairs(tmp_path: Path) -> None:
    metrics = {"source": "occupations", "models": {"a": {"overall": {}}, "b": {"overall": {}}}, "run": {}}
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    with pytest.raises(ConfigError) as error:
        compare_debiasing(tmp_path)
    assert error.value.parameter == "pairs"
    with pytest.raises(ConfigError, match="'c' is not in"):
        compare_debiasing(tmp_path, [("a", "c")])


def test_a_comparison_that_cannot_decide_is_refused_before_reading_anything(tmp_path: Path) -> None:
    # a 95% interval needs 1 / (B + 1) <= .025 at each end: B = 39 (the rule of every bootstrap option)
    with pytest.raises(ConfigError, match=r"bootstrap must be 0 \(no intervals\) or 39 or more") as error:
        compare_debiasing(tmp_path, bootstrap=10)
    assert error.value.parameter == "bootstrap"


values = st.lists(
    st.tuples(
        st.sampled_from([0.0, 1.0]),
        st.floats(0, 1),
        st.sampled_from([0.0, 1.0, np.nan]),
        st.sampled_from([0.0, 1.0]),
    ),
    min_size=1,
    max_size=20,
)


@settings(deadline=None)  # a shared machine can stall one example past the default 200 ms
@given(values, values)
def test_paired_difference_is_the_difference_of_means_over_pairs_both_define(a: list, b: list) -> None:
    n = min(len(a), len(b))
    before, after = np.array(a[:n], dtype=float), np.array(b[:n], dtype=float)
    overall = paired_differences(before, after, groups={}, bootstrap=0)["overall"]
    for j, key in enumerate(("S", "delta_p", "B", "S_3way")):
        both = ~(np.isnan(before[:, j]) | np.isnan(after[:, j]))
        if not both.any():
            assert overall[key] is None
            continue
        expected = 100 * (sum(after[both, j]) - sum(before[both, j])) / both.sum()
        assert overall[key] == pytest.approx(expected, abs=1e-9)


def comparison_pair(before: float, after: float, ci: list[float] | None, seed: int) -> dict:
    metrics = {
        role: {"overall": {"S": value, "delta_p": 10.0, "B": 50.0}, "by_dominant_gender": {}}
        for role, value in (("before", before), ("after", after))
    }
    return {
        "before": f"m-base-s{seed}",
        "after": f"m-aug-s{seed}",
        "accuracy": {"before": 80.0 + seed - 42, "after": None},
        "metrics": metrics,
        "difference": {
            "overall": {
                "S": after - before,
                "delta_p": 0.0,
                "B": 0.0,
                "ci": {"S": ci, "delta_p": [0.0, 0.0], "B": None},
            },
            "by_dominant_gender": {},
        },
    }


def test_seed_groups_mean_spread_and_the_change_rule() -> None:
    from nlibias.jobs.debias_compare import seed_groups
    from nlibias.report.debias_tables import format_debias_tables

    # S before/after per seed: 50 -> 60 (CI [+4, +16]), 54 -> 62 (CI [+2, +14]), 52 -> 66 (CI [+8, +20])
    pairs = [
        comparison_pair(50, 60, [4, 16], 42),
        comparison_pair(54, 62, [2, 14], 43),
        comparison_pair(52, 66, [8, 20], 44),
    ]
    comparison: dict = {"run": "/nowhere", "pairs": pairs}
    [group] = seed_groups(comparison, [[0, 1, 2]])  # type: ignore[arg-type]
    s = group["measures"]["S"]
    # before: mean (50+54+52)/3 = 52, range 50-54; after: mean (60+62+66)/3 = 62.67, range 60-66
    assert s["before"]["mean"] == pytest.approx(52.0) and (s["before"]["min"], s["before"]["max"]) == (50, 54)
    assert s["after"]["mean"] == pytest.approx(188 / 3) and (s["after"]["min"], s["after"]["max"]) == (60, 66)
    # differences 10, 8, 14: mean 32/3 = 10.67, range 8-14
    assert s["difference"]["mean"] == pytest.approx(32 / 3) and s["difference"]["values"] == [10, 8, 14]
    # every CI excludes 0 above it, and the ranges 50-54 and 60-66 do not overlap: a change
    assert s["changed"] is True
    # delta_p: every CI is [0, 0], which holds 0: no change; B has no CI: no change
    assert group["measures"]["delta_p"]["changed"] is False and group["measures"]["B"]["changed"] is False
    # accuracy 80, 81, 82 before: mean 81; after unknown
    assert (
        group["accuracy"]["before"]["mean"] == pytest.approx(81.0)
        and group["accuracy"]["after"]["mean"] is None
    )

    # one seed's interval holds 0: not a change, though the mean moved by 8.67
    shaky = [pairs[0], comparison_pair(54, 58, [-1, 9], 43), pairs[2]]
    [group] = seed_groups({"run": "/nowhere", "pairs": shaky}, [[0, 1, 2]])  # type: ignore[arg-type]
    assert group["measures"]["S"]["changed"] is False
    # every interval excludes 0, but the ranges across seeds overlap (before 50-61, after 60-66): not a change
    overlap = [pairs[0], comparison_pair(61, 62, [0.5, 2], 43), pairs[2]]
    [group] = seed_groups({"run": "/nowhere", "pairs": overlap}, [[0, 1, 2]])  # type: ignore[arg-type]
    assert group["measures"]["S"]["changed"] is False
    # independently: the rule written out for the first set
    cis, before, after = [[4, 16], [2, 14], [8, 20]], [50, 54, 52], [60, 62, 66]
    assert all(lo > 0 for lo, _ in cis) and max(before) < min(after)

    comparison["seed_groups"] = seed_groups(comparison, [[0, 1, 2]])  # type: ignore[arg-type]
    text = format_debias_tables(comparison)
    assert "m-base: mean (min–max) of 3 seeds" in text and "52.00 (50.00–54.00)" in text
    assert "+10.67 [+8.00, +14.00] *" in text and "m-aug-s42 - m-base-s42" in text


def test_a_tiny_difference_whose_interval_excludes_0_is_no_change() -> None:
    from nlibias.jobs.debias_compare import seed_groups
    from nlibias.report.debias_tables import format_debias_tables

    # One seed: dP moved by -3.6e-7 points and every resample agrees (interval [-3.6e-7, -3.6e-7]),
    # so the interval excludes 0; S moved by +10 with [+4, +16].
    pair = comparison_pair(50, 60, [4, 16], 42)
    tiny = -3.6e-7
    pair["metrics"]["after"]["overall"]["delta_p"] = 10.0 + tiny
    pair["difference"]["overall"]["delta_p"] = tiny
    pair["difference"]["overall"]["ci"]["delta_p"] = [tiny, tiny]
    comparison: dict = {"run": "/nowhere", "pairs": [pair]}
    [group] = seed_groups(comparison, [[0]])  # type: ignore[arg-type]
    # default minimum effect 1 point: |-3.6e-7| < 1, not a change; S's +10 >= 1 is one
    assert group["measures"]["delta_p"]["changed"] is False and group["measures"]["S"]["changed"] is True
    [loose] = seed_groups(comparison, [[0]], min_effect=0.0)  # type: ignore[arg-type]
    assert loose["measures"]["delta_p"]["changed"] is True  # the old rule marked it
    [strict] = seed_groups(comparison, [[0]], min_effect=20.0)  # type: ignore[arg-type]
    assert strict["measures"]["S"]["changed"] is False  # +10 < 20
    comparison["seed_groups"] = [group]
    text = format_debias_tables(comparison)
    assert "-0.00 [-0.00, -0.00]" in text and "-0.00 [-0.00, -0.00] *" not in text
    assert "+10.00 [+4.00, +16.00] *" in text and "at least 1 point(s)" in text


def test_debias_differences_are_the_gates_paired_code() -> None:
    from nlibias.jobs.debias_compare import paired_differences as debias_differences
    from nlibias.metrics.meta import ALL_MEASURES
    from nlibias.metrics.occupations import MEASURE_KEYS
    from nlibias.metrics.paired import compare_units, mean_units

    before = np.array([[1, 0.30, 1, 1], [0, 0.10, 0, 0], [1, 0.20, 1, 1], [1, 0.40, 1, 1]], dtype=float)
    after = np.array([[1, 0.10, 0, 1], [1, 0.10, 0, 1], [1, 0.00, 0, 1], [1, np.nan, np.nan, 1]], dtype=float)
    got = debias_differences(before, after, groups={"g": ["f", "m", "f", "m"]}, bootstrap=200, seed=1)
    # The same hand values as the per-pair mean: S +25, dP -13.33, B -66.67 (pair 3 left out of dP, B).
    assert got["overall"]["S"] == pytest.approx(25.0) and got["overall"]["delta_p"] == pytest.approx(
        -40.0 / 3
    )
    assert got["overall"]["B"] == pytest.approx(-200.0 / 3) and got["by_g"]["f"]["B"] == pytest.approx(-100.0)
    # Its interval is the paired bootstrap's over the pairs both models define.
    either = np.isnan(before) | np.isnan(after)
    units = [mean_units(np.where(either, np.nan, v), MEASURE_KEYS) for v in (before, after)]
    [s] = compare_units(*units, [ALL_MEASURES["S"]], resamples=200, seed=1)
    assert got["overall"]["ci"]["S"] == list(s.delta_ci or ())
