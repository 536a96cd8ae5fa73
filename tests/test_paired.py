"""The paired bootstrap (:mod:`nlibias.metrics.paired`): hand-derived values, the same draws as an
obviously-correct loop, Holm's adjustment, the audit's own intervals, and the test's error rates
in simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nlibias.metrics.bbnli import EncodedSamples, bbnli_measures, encode_samples
from nlibias.metrics.bbnli_scorer import score_bbnli_columns
from nlibias.metrics.meta import ALL_MEASURES
from nlibias.metrics.metric_frame import slice_rng
from nlibias.metrics.paired import (
    TOWARDS_STEREOTYPE,
    Comparison,
    bbnli_units,
    bias_change,
    compare_units,
    holm,
    mean_units,
)
from nlibias.schema import Sample
from nlibias.schema.columns import SampleColumns
from nlibias.schema.measure_info import MeasureInfo

SCORE = ALL_MEASURES["bbnli_bias_score"]

# Four pairs (pro, anti) and what each model answered; every gold label is neutral.
STEREO = ["pro", "anti"] * 4
KEYS = ["a", "a", "b", "b", "c", "c", "d", "d"]
BASE = ["entailment", "neutral", "neutral", "neutral", "neutral", "contradiction", "neutral", "neutral"]
CAND = [
    "entailment",
    "contradiction",
    "entailment",
    "neutral",
    "neutral",
    "contradiction",
    "neutral",
    "neutral",
]


def _units(labels: list[str]):  # type: ignore[no-untyped-def]
    return bbnli_units(encode_samples(labels, gold=None, stereotype=STEREO, pair_key=KEYS))


def test_hand_built_values() -> None:
    # Baseline: pro count (E on pro, C on anti) = a:pro E + c:anti C = 2, anti count 0, n = 8,
    # correct (neutral) 6 -> score = (2*2/2 - 1)(1 - 6/8) = 1 * 0.25 = 25 points.
    # Candidate: a:pro E, a:anti C, b:pro E, c:anti C -> pro 4, anti 0, correct 4 ->
    # (2*4/4 - 1)(1 - 4/8) = 50 points. Delta = +25; d = |50| - |25| = 25.
    found = compare_units(_units(BASE), _units(CAND), [SCORE], resamples=0)[0]
    assert (found.baseline, found.candidate, found.delta, found.change) == (25.0, 50.0, 25.0, 25.0)
    assert found.p == 1.0 and found.delta_ci is None  # no resample: no interval, no evidence


def test_paired_interval_equals_a_plain_loop_over_the_same_draws() -> None:
    resamples, seed = 300, 7
    found = compare_units(_units(BASE), _units(CAND), [SCORE], resamples=resamples, seed=seed)[0]
    # The same draws: the overall slice's stream, 4 pair units drawn with replacement (one chunk).
    draws = slice_rng(seed, "overall").integers(0, 4, size=(resamples, 4))
    deltas, changes, sums = [], [], []
    for row in draws:
        # Build the resampled samples label by label and score them with the plain BBNLI measures.
        stereo, keys, base, cand = [], [], [], []
        for j, unit in enumerate(row):
            for k in (0, 1):
                stereo.append(STEREO[2 * unit + k])
                keys.append(f"{j}")  # each drawn pair its own key
                base.append(BASE[2 * unit + k])
                cand.append(CAND[2 * unit + k])
        b = bbnli_measures(base, gold=["neutral"] * 8, stereotype=stereo, pair_key=keys)["bbnli_bias_score"]
        c = bbnli_measures(cand, gold=["neutral"] * 8, stereotype=stereo, pair_key=keys)["bbnli_bias_score"]
        deltas.append(c - b)
        changes.append(abs(c) - abs(b))
        sums.append(c + b)
    assert found.delta_ci == pytest.approx(tuple(np.percentile(deltas, [2.5, 97.5])))
    assert found.change_ci == pytest.approx(tuple(np.percentile(changes, [2.5, 97.5])))
    assert found.p == pytest.approx((1 + sum(d <= 0 for d in changes)) / (resamples + 1))
    # The intersection-union test, by the loop: s = +1 (the candidate's 50 is above 0); Δ* = c - b,
    # Σ* = c + b; each p = (1 + #{statistic <= 0}) / (B + 1); p is the larger.
    p_delta = (1 + sum(d <= 1e-9 for d in deltas)) / (resamples + 1)
    p_sum = (1 + sum(x <= 1e-9 for x in sums)) / (resamples + 1)
    assert (found.p_delta, found.p_sum) == pytest.approx((p_delta, p_sum))
    assert found.p == max(found.p_delta, found.p_sum)


def test_holm_hand_example() -> None:
    # Sorted: .001 (x4 = .004), .01 (x3 = .03), .02 (x2 = .04), .2 (x1 = .2).
    assert holm([0.02, 0.2, 0.001, 0.01]) == pytest.approx([0.04, 0.2, 0.004, 0.03])
    # Monotone: the second-smallest .011 x 2 = .022 < .03 (3 x .01) so it takes .03.
    assert holm([0.01, 0.011, 0.5]) == pytest.approx([0.03, 0.03, 0.5])
    assert holm([]) == []


def test_baseline_interval_is_the_audits() -> None:
    # With every sample answered the units are the audit's, in its order: the same seed gives the
    # audit's interval for the baseline (its draws are shared with the candidate).
    samples = [
        Sample(id=f"{k}:{s}", source="bbnli", domain="d", subtopic="t", premise="P.", hypothesis=f"{k}{s} H.",
               gold="neutral", stereotype=s, pair_key=k)
        for k, s in zip(KEYS, STEREO, strict=True)
    ]  # fmt: skip
    columns = SampleColumns.from_samples(samples)
    codes = np.array([{"entailment": 0, "neutral": 1, "contradiction": 2}[x] for x in BASE])
    audit = score_bbnli_columns(columns, codes, bootstrap=200, seed=3)["overall"]["ci"]["bbnli_bias_score"]
    found = compare_units(_units(BASE), _units(CAND), [SCORE], resamples=200, seed=3)[0]
    assert list(found.baseline_ci or ()) == audit


def test_mean_units_compare() -> None:
    # 4 units, one 0/1 value each: baseline 1 of 4 (25 %), candidate 3 of 4 (75 %); neutral 50:
    # d = |75 - 50| - |25 - 50| = 0.
    info = ALL_MEASURES["tp_bias_score"]
    base = mean_units(np.array([[1.0], [0.0], [0.0], [0.0]]), ["tp_bias_score"])
    cand = mean_units(np.array([[1.0], [1.0], [1.0], [0.0]]), ["tp_bias_score"])
    found = compare_units(base, cand, [info], resamples=100)[0]
    assert (found.delta, found.change) == (50.0, 0.0)


def _simulated_run(rng: np.random.Generator, n_pairs: int, pro_shift: float, fresh: float, base: np.ndarray):  # type: ignore[no-untyped-def]
    """A candidate from ``base`` labels: each sample answered afresh with probability ``fresh``
    from E/N/C = (.25 + s, .5, .25 - s) on pro samples and (.25 - s, .5, .25 + s) on anti ones."""
    stereo = np.tile([0, 1], n_pairs)
    p_e = np.where(stereo == 0, 0.25 + pro_shift, 0.25 - pro_shift)
    u = rng.random(2 * n_pairs)
    drawn = np.where(u < p_e, 0, np.where(u < p_e + 0.5, 1, 2))
    return np.where(rng.random(2 * n_pairs) < fresh, drawn, base)


def _encoded(labels: np.ndarray) -> EncodedSamples:
    n = len(labels)
    return EncodedSamples(
        predicted=labels.astype(np.int64), gold=np.ones(n, dtype=np.int64),
        stereotype=np.tile([0, 1], n // 2).astype(np.int64), pair_code=np.repeat(np.arange(n // 2), 2),
        pair_keys=list(np.repeat(np.arange(n // 2), 2)), text_code=None, ids=None,
    )  # fmt: skip


def _fails(
    rng: np.random.Generator,
    n_pairs: int,
    pro_shift: float,
    fresh: float,
    resamples: int,
    base_shift: float = 0.0,
    worse: str | None = None,
) -> bool:
    base = _simulated_run(rng, n_pairs, base_shift, 1.0, np.zeros(2 * n_pairs))
    cand = _simulated_run(rng, n_pairs, pro_shift, fresh, base)
    seed = int(rng.integers(1 << 30))
    found = compare_units(
        bbnli_units(_encoded(base)), bbnli_units(_encoded(cand)), [SCORE], resamples=resamples, seed=seed,
        worse=None if worse is None else {SCORE.name: worse},
    )  # fmt: skip
    return found[0].p_adjusted < 0.05


@pytest.mark.parametrize(("shift", "worse"), [(0.0, None), (0.05, None), (0.0, TOWARDS_STEREOTYPE)])
def test_a_candidate_equal_in_distribution_fails_at_most_at_the_nominal_rate(
    shift: float, worse: str | None
) -> None:
    # 200 simulated gates on 100 pairs, the candidate answering independently from the baseline's
    # distribution (exchangeable pro/anti noise around a true score of 0, or of 10 points with
    # shift .05): both are equally biased. Under a 5 % test the number of failures is at most
    # Binomial(200, .05); its 99.9 % quantile is the bound (P(X > bound) < .001).
    runs = 200
    tail = [math.comb(runs, i) * 0.05**i * 0.95 ** (runs - i) for i in range(runs + 1)]
    bound = next(k for k in range(runs) if sum(tail[k + 1 :]) < 0.001)
    rng = np.random.default_rng(2024)
    failures = sum(_fails(rng, 100, shift, 1.0, 200, base_shift=shift, worse=worse) for _ in range(runs))
    assert failures <= bound, (failures, bound)


def test_three_points_more_pro_stereotype_bias_fails_nine_times_in_ten() -> None:
    # The full BBNLI size, 1,138 pairs. As score = (pro - anti) / n when gold is neutral (the
    # factor 1 - accuracy cancels), a baseline answering pro samples E .30 / N .5 / C .20 and anti
    # samples E .20 / C .30 scores 10 points (each sample: pro .30 - anti .20 = .10).
    # The candidate is the baseline with 10 % of its answers given afresh by a more biased model
    # (pro E .45 / C .05, anti E .05 / C .45: .40 per sample), so its score is 10 + 10 % x (40 - 10)
    # = +3 points in expectation. The paired difference's standard error is about .7 points, so
    # the gate should fail nearly always; at least 45 of 50 runs are required. (Near the neutral
    # value the test is weaker by design: a baseline at -1.5 and a candidate at +1.5 are equally
    # biased, d = 0.)
    rng = np.random.default_rng(11)
    failures = sum(_fails(rng, 1138, 0.20, 0.1, 200, base_shift=0.05) for _ in range(50))
    assert failures >= 45, failures


def test_near_no_bias_the_change_towards_the_stereotype_keeps_its_power() -> None:
    # The same +3 points (10 % of answers given afresh at .30 per sample: 10 % x 30 = 3) around a
    # baseline with no bias. "Farther from no bias" depends there on m_cand + m_base, whose spread
    # the pairing does not shrink, so the default direction fails in a minority of runs
    # (bench/gate_power.py). The signed change m_cand - m_base keeps the pairing's precision
    # (about .7 points) and fails nearly always.
    rng = np.random.default_rng(5)
    failures = sum(
        _fails(rng, 1138, 0.15, 0.1, 200, base_shift=0.0, worse=TOWARDS_STEREOTYPE) for _ in range(50)
    )
    assert failures >= 45, failures


def test_the_change_of_each_direction_by_hand() -> None:
    # Baseline -1.5, candidate +1.5: |1.5| - |-1.5| = 0 away from neutral, +3 towards the stereotype.
    # Baseline 0, candidate 3: 3 either way. Baseline 4, candidate 1: -3 either way.
    base, cand = np.array([-1.5, 0.0, 4.0]), np.array([1.5, 3.0, 1.0])
    assert bias_change(SCORE, base, cand, "away_from_neutral").tolist() == [0.0, 3.0, -3.0]
    assert bias_change(SCORE, base, cand, TOWARDS_STEREOTYPE).tolist() == [3.0, 3.0, -3.0]
    with pytest.raises(ValueError, match="magnitude"):
        bias_change(ALL_MEASURES["S"], base, cand, TOWARDS_STEREOTYPE)


@pytest.mark.parametrize("benchmark", ["bbnli", "wq-nli", "occupations", "crows-pairs"])
def test_each_benchmarks_units_give_its_scorers_numbers(benchmark: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The units the gate resamples reproduce the audit's own values: the statistic over all units'
    # totals equals the scorer's overall value of every measure it reports, and each group's.
    from nlibias.catalog.registry import read_benchmark_samples
    from nlibias.jobs.expand import expand_samples
    from nlibias.metrics.paired import slice_positions
    from nlibias.schema.outputs import ModelOutputs

    expand_samples(benchmark, out_dir=tmp_path / "s")
    checked = read_benchmark_samples(tmp_path / "s")
    columns, n = checked.columns, len(checked.columns)
    rng = np.random.default_rng(0)
    if benchmark == "crows-pairs":
        kind = "sentence-logprob"
        values = {"score_more": rng.normal(-20, 1, n), "score_less": rng.normal(-20, 1, n),
                  "tokens_more": np.full(n, 5.0), "tokens_less": np.full(n, 5.0)}  # fmt: skip
        outputs = ModelOutputs(kind, np.full((n, 3), np.nan), values=values)
    else:
        kind = "classifier"
        probs = rng.dirichlet([1.0, 1.0, 1.0], size=n)
        outputs = ModelOutputs(kind, probs, probs.argmax(axis=1).astype(np.int8))
    metrics = checked.benchmark.measures[kind].score(columns, outputs, model="m", bootstrap=0, seed=0)
    headline = [i.name for i in ALL_MEASURES.values() if i.headline and i.name in metrics["overall"]]
    units = checked.benchmark.measures[kind].resampling_units(columns, outputs, model="m", measures=headline)
    slices = [("overall", None, metrics["overall"])]
    positions = {}
    for by in units.groups:  # every grouping the scorer reports too (domain, dominant_gender, ...)
        for name, index in slice_positions(units, by).items():
            if name in (metrics.get(f"by_{by}") or {}):
                slices.append((by, name, metrics[f"by_{by}"][name]))
                positions[(by, name)] = index
    compared = set()
    for slicing, name, expected in slices:
        index = None if name is None else positions[(slicing, name)]
        blocks, _ = units.take(index)
        found = units.statistic(*(b.sum(axis=0, keepdims=True) for b in blocks))
        for measure, value in found.items():
            if measure in expected and expected[measure] is not None:
                assert float(value[0]) == pytest.approx(expected[measure], abs=1e-9), (slicing, name, measure)
                compared.add((slicing, measure))
    assert {("overall", m) for m in headline} <= compared and len(slices) > 1


@pytest.mark.parametrize("worse", [None, TOWARDS_STEREOTYPE])
def test_a_candidate_whose_score_equals_the_baseline_in_every_resample_is_never_worse(
    worse: str | None,
) -> None:
    # 35 pairs answered neutral/neutral by the baseline become entailment/entailment: pro + 1 and
    # anti + 1 each, so pro - anti (the aggregate) is the same in every resample; the scorer's
    # formula (2 pro / (pro + anti) - 1)(1 - accuracy) gives it to ~1e-14, which is no change
    rng = np.random.default_rng(3)
    base = _simulated_run(rng, 300, 0.0, 1.0, np.zeros(600))
    neutral_pairs = np.flatnonzero((base[0::2] == 1) & (base[1::2] == 1))[:35]
    assert len(neutral_pairs) == 35
    cand = base.copy()
    cand[2 * neutral_pairs] = 0
    cand[2 * neutral_pairs + 1] = 0
    found = compare_units(
        bbnli_units(_encoded(base)), bbnli_units(_encoded(cand)), [SCORE], resamples=500, seed=1,
        worse=None if worse is None else {SCORE.name: worse},
    )[0]  # fmt: skip
    assert found.p == 1.0  # (1 + 500) / (500 + 1): no resample is worse
    assert found.change == 0.0 and found.change_ci == (0.0, 0.0)


def _iut(base: np.ndarray, cand: np.ndarray, measure: str = "bbnli_bias_score", **kwargs):  # type: ignore[no-untyped-def]
    """The gate's test on hand-set resampled values: ``Comparison`` fields from the statistics."""
    from nlibias.metrics.paired import bootstrap_p, gate_statistics, worse_side

    info = ALL_MEASURES[measure]
    worse = kwargs.get("worse", "away_from_neutral")
    drawn = gate_statistics(info, base, cand, worse, worse_side(info, kwargs["point"], worse))
    return {key: bootstrap_p(values, kwargs.get("margin", 0.0)) for key, values in drawn.items()}


def test_the_intersection_union_test_by_hand() -> None:
    # Four resamples of a baseline and a candidate on pro - anti (ν = 0), candidate point +2 (s = +1):
    #   b:  -1,  0,  1,  3      c:  2,  1,  3,  2
    #   Δ = c - b:      3,  1,  2, -1   -> not above 0: one  -> p_Δ = (1 + 1) / 5 = 0.4
    #   Σ = c + b:      1,  1,  4,  5   -> not above 0: none -> p_Σ = (1 + 0) / 5 = 0.2
    base, cand = np.array([-1.0, 0.0, 1.0, 3.0]), np.array([2.0, 1.0, 3.0, 2.0])
    assert _iut(base, cand, point=2.0) == {"delta": 0.4, "sum": 0.2}
    # Margin 1.5: Δ above it in 3, 2 (two) -> p_Δ = (1 + 2) / 5 = .6; Σ above in 4, 5 -> .6.
    assert _iut(base, cand, point=2.0, margin=1.5) == pytest.approx({"delta": 0.6, "sum": 0.6})
    # A candidate below ν (point -2, s = -1): Δ = b - c, Σ = -(c + b) on the mirrored values.
    assert _iut(-base, -cand, point=-2.0) == {"delta": 0.4, "sum": 0.2}
    # towards_stereotype reads Δ = c - b only.
    assert _iut(base, cand, point=2.0, worse=TOWARDS_STEREOTYPE) == {"delta": 0.4}
    # S (ν = 100, a magnitude): worse is lower; Δ = b - c only. b 95 95, c 90 96: Δ 5, -1 -> p (1+1)/3.
    found = _iut(np.array([95.0, 95.0]), np.array([90.0, 96.0]), "S", point=93.0)
    assert found == pytest.approx({"delta": 2 / 3})


def test_a_flip_to_the_mirror_image_is_not_worse_and_the_folded_change_is_not_tested() -> None:
    # Baseline at -5 (anti), candidate at +5 (pro): equally far from no bias, d = 0. The IUT reads
    # Σ = c + b around 0, which stays at or below 0 in half the resamples: p_Σ near 1/2, no failure.
    # 4 units whose baseline value is 0/1 with mean 45 % (-5 from 50) and candidate 55 % (+5).
    base = mean_units(np.array([[1.0]] * 9 + [[0.0]] * 11), ["tp_bias_score"])
    cand = mean_units(np.array([[1.0]] * 11 + [[0.0]] * 9), ["tp_bias_score"])
    found = compare_units(base, cand, [ALL_MEASURES["tp_bias_score"]], resamples=400, seed=0)[0]
    assert (found.baseline, found.candidate, found.change) == (45.0, 55.0, 0.0)
    assert found.p_sum is not None and found.p_sum > 0.3 and found.p == max(found.p_delta, found.p_sum)


def test_a_slicing_named_twice_counts_once_in_holms_family() -> None:
    units = mean_units(np.array([[1.0], [0.0]] * 10), ["tp_bias_score"], groups={"domain": ["a", "b"] * 10})
    info = [ALL_MEASURES["tp_bias_score"]]
    once = compare_units(units, units, info, slices=("overall", "domain"), resamples=50)
    twice = compare_units(units, units, info, slices=("overall", "domain", "overall", "domain"), resamples=50)
    assert (
        [c.slice_name for c in twice] == [c.slice_name for c in once] == ["overall", "domain=a", "domain=b"]
    )


def test_the_detectable_change_by_hand() -> None:
    from nlibias.metrics.bootstrap import detectable_change

    # One statistic of spread 1 at α = .05: d = z_.95 + z_.80 = 1.6449 + 0.8416 = 2.4865 points.
    assert detectable_change({"delta": 1.0}, 0.0, 0.05) == pytest.approx(2.4865, abs=1e-4)
    # Margin 1 and spread 2: 1 + 2 x 2.4865 = 5.973.
    assert detectable_change({"delta": 2.0}, 1.0, 0.05) == pytest.approx(5.9730, abs=1e-4)
    # Σ's spread 3 from a baseline 40 points from ν: Σ's factor is 1, Δ decides alone.
    assert detectable_change({"delta": 1.0, "sum": 3.0}, 0.0, 0.05, baseline_bias=40.0) == pytest.approx(
        2.4865, abs=1e-4
    )
    # From an unbiased baseline with equal spreads 1: Φ(d - z)^2 = .8 -> Φ(d - z) = √.8 = .8944,
    # d - z = 1.2504 (normal table), d = 1.6449 + 1.2504 = 2.8953.
    assert detectable_change({"delta": 1.0, "sum": 1.0}, 0.0, 0.05) == pytest.approx(2.8953, abs=1e-4)
    assert detectable_change({"delta": float("nan")}, 0.0, 0.05) is None


def test_the_fewest_resamples_that_can_decide() -> None:
    from nlibias.metrics.bootstrap import deciding_resamples

    # α .05: 1 / (B + 1) < .05 needs B + 1 > 20, B = 20; three slices: 3 / (B + 1) < .05, B = 60.
    assert deciding_resamples(0.05) == 20 and deciding_resamples(0.05, tests=3) == 60
    assert deciding_resamples(1 - 0.95) == 20  # 1 - .95 is 0.05000000000000004: the same answer


def test_a_candidate_that_only_gained_ties_is_not_more_biased_on_the_ties_split_score() -> None:
    # 40 pairs: the baseline prefers the stereotypical sentence in 20 and the other in 20 (both
    # scores 50). The candidate ties 6 of each kind: the paper's score 100 x 14 / 40 = 35 (15 points
    # "anti-stereotype", d = 15, a clear move by Δ: enough pairs fail the gate for ties alone); the
    # ties-split score
    # 100 x (14 + 12 / 2) / 40 = 50, as the baseline's (d = 0).
    from nlibias.metrics.token_probability import TP_MEASURES, tp_unit_values

    more = [-1.0] * 20 + [-3.0] * 20
    base = tp_unit_values(more, [-2.0] * 40, direction=["stereo"] * 40)
    cand = tp_unit_values(
        more, [-1.0] * 6 + [-2.0] * 14 + [-3.0] * 6 + [-2.0] * 14, direction=["stereo"] * 40
    )
    infos = [ALL_MEASURES["tp_bias_score"], ALL_MEASURES["tp_tie_split_score"]]
    paper, split = compare_units(
        mean_units(base, TP_MEASURES), mean_units(cand, TP_MEASURES), infos, resamples=400, seed=0
    )
    assert (paper.candidate, paper.change) == (35.0, 15.0) and paper.p_delta < 0.05
    assert (split.baseline, split.candidate, split.change) == (50.0, 50.0, 0.0) and split.p > 0.3


def test_the_stated_detectable_change_is_detected_at_about_80_percent_power() -> None:
    """Simulated gates on 400 units of values -1, 0, 1 (a signed measure, 0 = no bias) from an
    unbiased baseline, the candidate repeating half of its answers: the detectable change stated on
    runs as biased as each other, given to the candidate, fails about 80 % of gates. Read from
    |m_b - ν| itself, the Σ test's lead was overstated near no bias and the stated change failed
    about 55 % (``bench/gate_power.py --detectable`` prints every cell)."""
    rng = np.random.default_rng(7)
    gap = MeasureInfo("gap", "d", "zero", (-100.0, 100.0), "c", headline=True, neutral=0.0, signed=True)

    def gate(score: float) -> Comparison:
        base = rng.choice([-1.0, 0.0, 1.0], size=400, p=[0.25, 0.5, 0.25])
        fresh = rng.choice([-1.0, 0.0, 1.0], size=400, p=[0.25 - score / 100, 0.5, 0.25 + score / 100])
        cand = np.where(rng.random(400) < 0.5, base, fresh)
        return compare_units(
            mean_units(base[:, None], ["gap"]), mean_units(cand[:, None], ["gap"]), [gap],
            resamples=200, seed=int(rng.integers(2**31)),
        )[0]  # fmt: skip

    stated = float(np.median([gate(0.0).detectable for _ in range(100)]))
    # fresh answers at p(+1) - p(-1) = 2 x stated / 100 score 2 x stated; half of them: stated
    power = np.mean([gate(stated).p < 0.05 for _ in range(100)])
    assert 10.0 < stated < 20.0 and 0.7 <= power <= 0.92, (stated, power)
