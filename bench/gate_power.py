"""What a gate on 1,138 BBNLI pairs can see: the size and power of the gate's test in simulation.

Each simulated gate draws a baseline and a candidate answering BBNLI's 1,138 pro/anti pairs (gold
label neutral): a sample is answered entailment with probability .25 + s on pro samples and .25 - s
on anti ones, contradiction the other way round, neutral .5, so the score pro - anti is 200 s
points. The candidate repeats the baseline's answer with probability ρ (its answers "correlate"
with the baseline's: ρ = 0.5 and 0.8) and otherwise answers afresh, with the s that gives its
target score. One paired bootstrap of the pairs (1,000 resamples; multinomial draws over the
distinct pair values, the distribution of the library's draws) gives, for the same resamples, the
p of three tests at α = .05 on one slice, each computed by the library's functions:

* ``folded``: the test before issue 51, one statistic ``|m*_c| - |m*_b|`` per resample;
* ``IUT``: the gate's test (``nlibias.metrics.paired``): ``p = max(p_Δ, p_Σ)``;
* ``signed``: ``worse: towards_stereotype``, ``m*_c - m*_b`` (a different question: any move to
  the stereotype side; shown for what it buys near "no bias").

A null cell (the candidate exactly as biased as the baseline: the same score, or its mirror image,
"flip") gives the size: the share of gates that fail. The other cells move the candidate 3 or 5
points farther from "no bias" on its side: the power.

    python bench/gate_power.py                 # 1,000 gates per cell (about a minute on 1 core)
    python bench/gate_power.py --gates 100     # a quick look
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from nlibias.metrics.bootstrap import detectable_change
from nlibias.metrics.meta import ALL_MEASURES
from nlibias.metrics.paired import (
    AWAY_FROM_NEUTRAL,
    TOWARDS_STEREOTYPE,
    baseline_bias,
    bootstrap_p,
    gate_statistics,
    worse_side,
)

PAIRS = 1138
RESAMPLES = 1000
ALPHA = 0.05
SCORE = ALL_MEASURES["bbnli_bias_score"]
# (label, baseline score, candidate scores: the first is the null, then +3 and +5 points of d)
CELLS = (
    ("baseline 0", 0.0, (0.0, 3.0, 5.0)),
    ("baseline 2", 2.0, (2.0, 5.0, 7.0)),
    ("baseline 5", 5.0, (5.0, 8.0, 10.0)),
    ("baseline 10", 10.0, (10.0, 13.0, 15.0)),
    ("flip -2 -> +2", -2.0, (2.0, 5.0, 7.0)),
)


def _answers(rng: np.random.Generator, shift: float) -> np.ndarray:
    """Labels (0 E, 1 N, 2 C) of pro, anti, pro, anti, ... samples at ``shift`` = score / 200."""
    stereo = np.tile([0, 1], PAIRS)
    p_e = np.where(stereo == 0, 0.25 + shift, 0.25 - shift)
    p_c = 0.5 - p_e
    u = rng.random(2 * PAIRS)
    return np.where(u < p_e, 0, np.where(u < p_e + p_c, 2, 1))


def _pair_values(labels: np.ndarray) -> np.ndarray:
    """Each pair's pro - anti count (-2 .. 2): E on its pro sample or C on its anti one is +1,
    C on its pro sample or E on its anti one is -1. With every gold label neutral the aggregate
    score is ``100 x sum / (2 x pairs)`` ((2 pro / (pro + anti) - 1)(1 - accuracy) reduces to
    (pro - anti) / n), so a resample's score is that of its drawn pairs' values."""
    pro, anti = labels[0::2], labels[1::2]
    return (pro == 0).astype(int) - (pro == 2) + (anti == 2) - (anti == 0)


def _resampled_scores(
    base: np.ndarray, cand: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Both runs' scores in RESAMPLES paired resamples of the pairs: multinomial counts over the
    25 distinct (baseline, candidate) pair values, the same distribution as drawing pairs one by
    one (the library's ``distinct`` draws, :mod:`nlibias.metrics.bootstrap`), and fast."""
    joint = (base + 2) * 5 + (cand + 2)
    frequency = np.bincount(joint, minlength=25) / len(joint)
    counts = rng.multinomial(len(joint), frequency, size=RESAMPLES).astype(float)
    scale = 100.0 / (2 * len(joint))
    values = np.arange(25)
    return scale * counts @ (values // 5 - 2), scale * counts @ (values % 5 - 2)


def _draw(
    rng: np.random.Generator, base_score: float, cand_score: float, shared: float
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """One simulated pair of runs: both scores' resamples and both point scores."""
    base = _answers(rng, base_score / 200.0)
    fresh_shift = (cand_score / 200.0 - shared * base_score / 200.0) / (1.0 - shared)
    cand = np.where(rng.random(2 * PAIRS) < shared, base, _answers(rng, fresh_shift))
    base_values, cand_values = _pair_values(base), _pair_values(cand)
    b, c = _resampled_scores(base_values, cand_values, rng)
    scale = 100.0 / (2 * PAIRS)
    return b, c, scale * float(base_values.sum()), scale * float(cand_values.sum())


def one_gate(
    rng: np.random.Generator, base_score: float, cand_score: float, shared: float
) -> dict[str, bool]:
    """Whether each test fails one simulated gate."""
    b, c, _, point = _draw(rng, base_score, cand_score, shared)
    iut = gate_statistics(SCORE, b, c, AWAY_FROM_NEUTRAL, worse_side(SCORE, point, AWAY_FROM_NEUTRAL))
    signed = gate_statistics(SCORE, b, c, TOWARDS_STEREOTYPE, 1.0)
    return {
        "folded": bootstrap_p(np.abs(c) - np.abs(b), 0.0) < ALPHA,
        "IUT": max(bootstrap_p(values, 0.0) for values in iut.values()) < ALPHA,
        "signed": bootstrap_p(signed["delta"], 0.0) < ALPHA,
    }


def stated_detectable(rng: np.random.Generator, base_score: float, shared: float) -> float:
    """The detectable change (80% power) a gate states on runs where the candidate is as biased
    as the baseline, from its resamples' spreads as :func:`nlibias.metrics.paired.compare_slice`
    computes it."""
    b, c, base_point, cand_point = _draw(rng, base_score, base_score, shared)
    drawn = gate_statistics(SCORE, b, c, AWAY_FROM_NEUTRAL, worse_side(SCORE, cand_point, AWAY_FROM_NEUTRAL))
    spreads = {key: float(np.nanstd(values)) for key, values in drawn.items()}
    found = detectable_change(spreads, 0.0, ALPHA, baseline_bias=baseline_bias(base_point, 0.0, b))
    assert found is not None
    return found


def check_detectable(rng: np.random.Generator, gates: int) -> None:
    """Whether a change of the stated size is detected at the stated power: per cell, the median
    detectable change stated on null gates, then gates whose candidate is that much farther out on
    the baseline's side; the ratio is the simulated power over 0.8."""
    print("| baseline | ρ | stated d (median) | power at d | power / 0.8 |")
    print("|---|---|---|---|---|")
    for base_score in (0.0, 2.0, 5.0, 10.0):
        for shared in (0.5, 0.8):
            stated = float(np.median([stated_detectable(rng, base_score, shared) for _ in range(gates)]))
            cand_score = base_score + stated if base_score >= 0 else base_score - stated
            power = sum(one_gate(rng, base_score, cand_score, shared)["IUT"] for _ in range(gates)) / gates
            print(
                f"| {base_score:g} | {shared:.1f} | {stated:.2f} | {power:.3f} | {power / 0.8:.2f} |",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gates", type=int, default=1000, help="simulated gates per cell")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--detectable", action="store_true", help="check the stated detectable change")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    if args.detectable:
        check_detectable(rng, args.gates)
        print(f"{time.perf_counter() - started:.0f} s")
        return
    print(f"{PAIRS} pairs, {RESAMPLES} resamples, alpha {ALPHA}, {args.gates} gates per cell")
    print("| cell | ρ | candidate | d | rate of | folded | IUT | signed |")
    print("|---|---|---|---|---|---|---|---|")
    for label, base_score, cand_scores in CELLS:
        for shared in (0.5, 0.8):
            for k, cand_score in enumerate(cand_scores):
                fails = [one_gate(rng, base_score, cand_score, shared) for _ in range(args.gates)]
                rates = {
                    name: sum(f[name] for f in fails) / args.gates for name in ("folded", "IUT", "signed")
                }
                d = abs(cand_score) - abs(base_score)
                kind = "size" if k == 0 else "power"
                print(
                    f"| {label} | {shared:.1f} | {cand_score:+g} | {d:+g} | {kind} | {rates['folded']:.3f} | "
                    f"{rates['IUT']:.3f} | {rates['signed']:.3f} |",
                    flush=True,
                )
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
