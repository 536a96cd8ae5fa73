"""Paired comparison of two runs over the same samples: one bootstrap, both runs on the same draws
(docs/design.md, Gate).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

import numpy as np

from nlibias.errors import ConfigError
from nlibias.metrics.bbnli import EncodedSamples, measures_from_totals, slice_units
from nlibias.metrics.bootstrap import (
    deciding_resamples,
    detectable_change,
    draw_totals,
    percent_means,
    percentile_interval,
    smallest_p,
)
from nlibias.metrics.metric_frame import group_positions, slice_rng
from nlibias.metrics.pairing import NO_STEREOTYPE, pair_positions
from nlibias.metrics.verdicts import MIN_VERDICT_UNITS
from nlibias.schema.declared import MAX_RESAMPLES
from nlibias.schema.measure_info import MeasureInfo
from nlibias.schema.outputs import RunUnits

Worse = Literal["away_from_neutral", "towards_stereotype"]
"""Which change counts against a candidate: farther from "no bias", or towards the stereotype."""
AWAY_FROM_NEUTRAL: Worse = "away_from_neutral"
TOWARDS_STEREOTYPE: Worse = "towards_stereotype"
WORSE_DIRECTIONS: tuple[Worse, ...] = get_args(Worse)

OVERALL = "overall"
SAME_VALUE_TOLERANCE = 1e-9
"""Points within which a change is none (float noise of an unchanged measure is about 1e-14)."""


def _snapped(values: Any) -> np.ndarray:
    return np.where(np.abs(values) <= SAME_VALUE_TOLERANCE, 0.0, values)


def mean_units(
    values: np.ndarray, names: Sequence[str], *, groups: Mapping[str, Sequence[Any]] | None = None
) -> RunUnits:
    """Units whose measures are the percent mean of one value per unit (NaN: left out).

    >>> float(mean_units(np.array([[1.0], [np.nan], [0.0]]), ["x"]).point()["x"][0])
    50.0
    """
    values = np.asarray(values, dtype=float).reshape(-1, len(names))
    defined = ~np.isnan(values)
    blocks = (np.where(defined, values, 0.0), defined.astype(float))
    return RunUnits(blocks, percent_means(names), np.zeros(len(values), dtype=np.int64), dict(groups or {}))


def bbnli_units(encoded: EncodedSamples, *, groups: Mapping[str, Sequence[Any]] | None = None) -> RunUnits:
    """A BBNLI run's units: each pair, unpaired bias sample and test sample (two strata), whatever
    the model answered, so two runs over the same samples share them; each row sums the scorer's
    count rows. ``groups``: one label per *sample* (a unit takes its first sample's).
    """
    pairs, lone = pair_positions(encoded.stereotype, encoded.pair_code, key_of=lambda i: encoded.pair_keys[i])
    tests = np.flatnonzero(encoded.stereotype == NO_STEREOTYPE)
    first = np.concatenate([pairs[:, 0], lone, tests]).astype(np.int64)
    n_units = len(first)
    unit_of = np.full(len(encoded), -1, dtype=np.int64)  # each sample's structural unit
    unit_of[first] = np.arange(n_units)
    unit_of[pairs[:, 1]] = np.arange(len(pairs))
    scored = slice_units(encoded)  # the scorer's units, each summed into its structural unit
    matrix = np.zeros((n_units, scored.matrix.shape[1]))
    np.add.at(matrix, unit_of[scored.first], scored.matrix)
    unit_groups = {by: [labels[int(i)] for i in first] for by, labels in (groups or {}).items()}
    stratum = np.zeros(n_units, dtype=np.int64)
    stratum[len(pairs) + len(lone) :] = 1
    return RunUnits((matrix,), measures_from_totals, stratum, unit_groups)


@dataclass(frozen=True)
class Comparison:
    """One measure of one slice, baseline against candidate (intervals None where undefined)."""

    measure: str
    slicing: str
    """``overall`` or a grouping (``domain``, ``subtopic``, ...)."""
    slice: str
    n_units: int
    baseline: float | None
    baseline_ci: tuple[float, float] | None
    candidate: float | None
    candidate_ci: tuple[float, float] | None
    delta: float | None
    """``candidate - baseline``."""
    delta_ci: tuple[float, float] | None
    change: float | None
    """``d``: how much farther from "no bias" the candidate lies than the baseline."""
    change_ci: tuple[float, float] | None
    p: float
    """``max(p_delta, p_sum)``."""
    margin: float
    worse: Worse = AWAY_FROM_NEUTRAL
    p_adjusted: float = 1.0
    """``p`` after Holm's correction over the slices of this model and measure."""
    tested: bool = True
    """False for a slice of fewer than MIN_VERDICT_UNITS units: ``p_adjusted`` 1, out of Holm's family."""
    p_delta: float = 1.0
    p_sum: float | None = None
    """None where the test reads Δ only (a magnitude, or ``towards_stereotype``)."""
    detectable: float | None = None
    """The smallest ``d`` this test detects with 80 % power at its family's Holm threshold."""

    @property
    def slice_name(self) -> str:
        return OVERALL if self.slicing == OVERALL else f"{self.slicing}={self.slice}"


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment (the i-th smallest of m times m - i + 1, monotone, capped at 1).

    >>> [round(p, 6) for p in holm([0.01, 0.04, 0.03])]  # sorted .01 .03 .04 -> 3*.01, 2*.03, max(.06, 1*.04)
    [0.03, 0.06, 0.06]
    """
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    adjusted = [1.0] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def _point(units: RunUnits, index: np.ndarray | None, name: str) -> float | None:
    value = float(units.point(index)[name][0])
    return None if np.isnan(value) else value


def paired_resamples(
    base: RunUnits,
    cand: RunUnits,
    names: Sequence[str],
    *,
    index: np.ndarray | None = None,
    resamples: int,
    rng: np.random.Generator,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Each measure of ``names`` per resample of the units at ``index`` (None: all), both runs on
    the same draws (NaN: undefined)."""
    base_blocks, strata = base.take(index)
    cand_blocks, cand_strata = cand.take(index)
    if strata != cand_strata or [b.shape[0] for b in base_blocks] != [b.shape[0] for b in cand_blocks]:
        raise ValueError("the two runs' units differ; compare runs over the same samples")
    n_base = len(base_blocks)
    totals = draw_totals([*base_blocks, *cand_blocks], resamples=resamples, rng=rng, strata=strata)
    drawn_base, drawn_cand = base.statistic(*totals[:n_base]), cand.statistic(*totals[n_base:])
    empty = np.full(0, np.nan)
    return (
        {n: np.asarray(drawn_base.get(n, empty), dtype=float) for n in names},
        {n: np.asarray(drawn_cand.get(n, empty), dtype=float) for n in names},
    )


def bias_change(info: MeasureInfo, base: np.ndarray, cand: np.ndarray, worse: Worse) -> np.ndarray:
    """``d`` per resample: how much more biased the candidate is than the baseline."""
    if worse == TOWARDS_STEREOTYPE:
        if not info.signed:
            raise ValueError(f"{info.name} is a magnitude: only {AWAY_FROM_NEUTRAL} applies to it")
        return cand - base
    if worse != AWAY_FROM_NEUTRAL:
        raise ValueError(f"worse is {worse!r}; use one of {', '.join(WORSE_DIRECTIONS)}")
    neutral = info.neutral if info.neutral is not None else 0.0
    return np.abs(cand - neutral) - np.abs(base - neutral)


def worse_side(info: MeasureInfo, candidate: float | None, worse: Worse) -> float:
    """``s``: the direction (+1 or -1) a move counts against the candidate in.

    >>> gap = MeasureInfo("gap", "d", "zero", (-100.0, 100.0), "c", headline=True, neutral=0.0, signed=True)
    >>> s = MeasureInfo("S", "d", "higher", (0.0, 100.0), "c", headline=True, neutral=100.0)
    >>> worse_side(gap, -2.0, AWAY_FROM_NEUTRAL), worse_side(gap, 0.0, AWAY_FROM_NEUTRAL), worse_side(s, 90.0, AWAY_FROM_NEUTRAL)
    (-1.0, 1.0, -1.0)
    """
    neutral = info.neutral if info.neutral is not None else 0.0
    if worse == TOWARDS_STEREOTYPE:
        return 1.0
    if not info.signed:
        return 1.0 if neutral <= info.range[0] else -1.0
    return -1.0 if candidate is not None and candidate < neutral else 1.0


def gate_statistics(
    info: MeasureInfo, base: np.ndarray, cand: np.ndarray, worse: Worse, side: float
) -> dict[str, np.ndarray]:
    """Per resample, ``delta`` Δ = s(m_c - m_b) and, for a signed measure away from neutral,
    ``sum`` Σ = s(m_c + m_b - 2ν): "more biased" is Δ > M and Σ > M.

    >>> gap = MeasureInfo("gap", "d", "zero", (-100.0, 100.0), "c", headline=True, neutral=0.0, signed=True)
    >>> found = gate_statistics(gap, np.array([-1.5, 2.0]), np.array([1.5, 3.0]), AWAY_FROM_NEUTRAL, 1.0)
    >>> found["delta"].tolist(), found["sum"].tolist()
    ([3.0, 1.0], [0.0, 5.0])
    """
    neutral = info.neutral if info.neutral is not None else 0.0
    found = {"delta": _snapped(side * (cand - base))}
    if info.signed and worse == AWAY_FROM_NEUTRAL:
        found["sum"] = _snapped(side * (cand + base - 2.0 * neutral))
    return found


def baseline_bias(value: float | None, neutral: float, draws: np.ndarray) -> float:
    """The baseline's distance from "no bias" less its resampling noise (for the detectable change).

    >>> baseline_bias(5.0, 0.0, np.array([2.0, 4.0, 6.0, 8.0]))  # sqrt(25 - 5) = 4.47
    4.47213595499958
    >>> baseline_bias(1.0, 0.0, np.array([2.0, 4.0, 6.0, 8.0])), baseline_bias(None, 0.0, np.array([]))
    (0.0, 0.0)
    """
    defined = draws[np.isfinite(draws)]
    if value is None:
        return 0.0
    noise = float(np.var(defined)) if defined.size else 0.0
    return float(np.sqrt(max(0.0, (value - neutral) ** 2 - noise)))


def refuse_undecidable(
    resamples: int, confidence: float, tests: int, measure: str, *, parameter: str
) -> None:
    """Refuse a bootstrap test whose smallest p, 1 / (B + 1), cannot fall below Holm's threshold.

    >>> refuse_undecidable(10, 0.95, 1, "S", parameter="bootstrap")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: bootstrap 10: the smallest p of 10 resamples is 1/11 = 0.0909, and Holm over 1 test(s) of S needs below 0.05: no test could ever decide; use bootstrap 20 or more
    >>> refuse_undecidable(1000, 0.999999, 4, "S", parameter="bootstrap")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: bootstrap 1000: the smallest p of 1000 resamples is 1/1001 = 0.000999, and Holm over 4 test(s) of S needs below 2.5e-07: no test could ever decide; that needs 4000000 resamples, more than the 1,000,000 allowed: lower the confidence, or test fewer slices
    """
    tests = max(tests, 1)
    needed = deciding_resamples(1.0 - confidence, tests)
    if resamples < needed:
        fix = (
            f"use bootstrap {needed} or more"
            if needed <= MAX_RESAMPLES
            else f"that needs {needed} resamples, more than the {MAX_RESAMPLES:,} allowed: lower the "
            "confidence, or test fewer slices"
        )
        raise ConfigError(
            f"bootstrap {resamples}: the smallest p of {resamples} resamples is 1/{resamples + 1} = "
            f"{smallest_p(resamples):.3g}, and Holm over {tests} test(s) of {measure} needs below "
            f"{(1.0 - confidence) / tests:.3g}: no test could ever decide; {fix}",
            parameter=parameter,
        )


def p_text(p: float, alpha: float) -> str:
    """``p`` to 4 decimals, or as many as it takes not to print the threshold for a p beside it.

    >>> p_text(0.0020, 1 - 0.95), p_text(0.04995, 1 - 0.95), p_text(0.05, 1 - 0.95)
    ('0.0020', '0.04995', '0.0500')
    """
    at = math.isclose(p, alpha, rel_tol=1e-9, abs_tol=1e-15)  # as p_below reads it
    for digits in range(4, 10):
        text = f"{p:.{digits}f}"
        if at or not math.isclose(float(text), alpha, rel_tol=1e-9, abs_tol=1e-15):
            return text.rstrip("0") if digits > 4 else text
    return repr(p)


def p_below(p: float, alpha: float) -> bool:
    """Whether ``p`` is below ``alpha`` (a p on the threshold, in floating point, is not).

    >>> p_below(50 / 1000, 1 - 0.95), p_below(49 / 1000, 1 - 0.95), p_below(3 * (1 / 60), 0.05)
    (False, True, False)
    """
    return p < alpha and not math.isclose(p, alpha, rel_tol=1e-9, abs_tol=1e-15)


def bootstrap_p(statistic: np.ndarray, margin: float) -> float:
    """``(1 + #{resamples not above margin}) / (B + 1)``; an undefined resample is not above.

    >>> bootstrap_p(np.array([2.0, 0.5, np.nan, 3.0]), 1.0)  # (1 + 2) / 5
    0.6
    """
    above = np.count_nonzero(statistic > margin + SAME_VALUE_TOLERANCE)
    return float((1.0 + len(statistic) - above) / (len(statistic) + 1.0))


def compare_slice(
    base: RunUnits,
    cand: RunUnits,
    infos: Sequence[MeasureInfo],
    *,
    slicing: str = OVERALL,
    name: str = OVERALL,
    index: np.ndarray | None = None,
    resamples: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
    margins: Mapping[str, float] | None = None,
    worse: Mapping[str, Worse] | None = None,
    family: int = 1,
) -> list[Comparison]:
    """Each measure of ``infos`` on one slice (unadjusted p); ``family``: the slices Holm adjusts over."""
    drawn_base, drawn_cand = paired_resamples(
        base, cand, [i.name for i in infos], index=index, resamples=resamples, rng=rng
    )
    found = []
    for info in infos:
        margin = float((margins or {}).get(info.name, 0.0))
        b, c = drawn_base[info.name], drawn_cand[info.name]
        direction = (worse or {}).get(info.name, AWAY_FROM_NEUTRAL)
        base_value, cand_value = _point(base, index, info.name), _point(cand, index, info.name)
        both_defined = base_value is not None and cand_value is not None
        points = np.array([base_value, cand_value], dtype=float)
        drawn = gate_statistics(info, b, c, direction, worse_side(info, cand_value, direction))
        p_values = {key: bootstrap_p(values, margin) for key, values in drawn.items()}
        spreads = {key: float(np.nanstd(v)) if np.isfinite(v).any() else np.nan for key, v in drawn.items()}
        neutral = info.neutral if info.neutral is not None else 0.0
        found.append(
            Comparison(
                measure=info.name,
                slicing=slicing,
                slice=name,
                n_units=len(base) if index is None else len(index),
                baseline=base_value,
                baseline_ci=percentile_interval(b, confidence),
                candidate=cand_value,
                candidate_ci=percentile_interval(c, confidence),
                delta=float(_snapped(points[1] - points[0])) if both_defined else None,
                delta_ci=percentile_interval(_snapped(c - b), confidence),
                change=float(_snapped(bias_change(info, points[:1], points[1:], direction))[0])
                if both_defined
                else None,
                change_ci=percentile_interval(_snapped(bias_change(info, b, c, direction)), confidence),
                p=max(p_values.values()),
                margin=margin,
                worse=direction,
                # an undefined value (no answer read on one side) tells nothing, like too few units
                tested=slice_tested(base, index) and both_defined,
                p_delta=p_values["delta"],
                p_sum=p_values.get("sum"),
                detectable=detectable_change(
                    spreads, margin, (1.0 - confidence) / max(family, 1),
                    baseline_bias=baseline_bias(base_value, neutral, b),
                ) if resamples > 0 else None,
            )
        )  # fmt: skip
    return found


def slice_tested(units: RunUnits, index: np.ndarray | None) -> bool:
    """Whether a slice holds MIN_VERDICT_UNITS units of the first stratum (BBNLI: bias units)."""
    codes = units.stratum if index is None else units.stratum[index]
    return bool(np.count_nonzero(codes == 0) >= MIN_VERDICT_UNITS)


def slice_positions(units: RunUnits, slicing: str) -> dict[str, np.ndarray]:
    """``{slice name: unit positions}`` of one grouping (``overall``: every unit)."""
    if slicing == OVERALL:
        return {OVERALL: np.arange(len(units))}
    if slicing not in units.groups:
        return {}
    members = group_positions(units.groups[slicing])
    return {key: members[key] for key in sorted(members)}


def planned_slices(units: RunUnits, slices: Sequence[str]) -> list[tuple[str, str, np.ndarray | None]]:
    """``(slicing, slice name, unit positions)`` of every slice (each slicing once; ``overall``: None)."""
    return [
        (slicing, name, None if slicing == OVERALL else index)
        for slicing in dict.fromkeys(slices)
        for name, index in slice_positions(units, slicing).items()
    ]


def holm_family_size(units: RunUnits, slices: Sequence[str]) -> int:
    """How many slices of ``slices`` are tested (Holm's family of one measure)."""
    return sum(slice_tested(units, index) for _, _, index in planned_slices(units, slices))


def compare_units(
    base: RunUnits,
    cand: RunUnits,
    infos: Sequence[MeasureInfo],
    *,
    slices: Sequence[str] = (OVERALL,),
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    margins: Mapping[str, float] | None = None,
    worse: Mapping[str, Worse] | None = None,
    parameter: str | None = None,
) -> list[Comparison]:
    """Every measure of ``infos`` on every slice of ``slices``, Holm-adjusted over each measure's
    slices; each slice's draws seeded from ``(seed, slice name)`` as the audit's are. ``parameter``:
    first refuse, naming it, a test that could never decide (:func:`refuse_undecidable`)."""
    planned = planned_slices(base, slices)
    family = holm_family_size(base, slices)
    if parameter is not None:
        names = ", ".join(info.name for info in infos)
        refuse_undecidable(resamples, confidence, family, names, parameter=parameter)
    found: list[Comparison] = []
    for slicing, name, index in planned:
        found += compare_slice(
            base, cand, infos, slicing=slicing, name=name, index=index, resamples=resamples,
            rng=slice_rng(seed, OVERALL if slicing == OVERALL else f"{slicing}={name}"),
            confidence=confidence, margins=margins, worse=worse, family=family,
        )  # fmt: skip
    adjusted: list[Comparison] = []
    for info in infos:
        mine = [c for c in found if c.measure == info.name and c.tested]  # untested: p_adjusted 1
        held = dict(zip(map(id, mine), holm([c.p for c in mine]), strict=True))
        adjusted += [replace(c, p_adjusted=held.get(id(c), 1.0)) for c in found if c.measure == info.name]
    return adjusted
