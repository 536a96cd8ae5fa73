"""Per-unit measures summarised overall and per group, with seeded percentile-bootstrap intervals.

The WQ-NLI measures (M1–M8: does a condition hold for a row?) and the gender-occupation measures
(S, ΔP, B: a per-pair indicator or difference) are all means over units (rows, pairs) of one value
per unit. :func:`units_frame` takes the ``(units x measures)`` value matrix once and reports, for
the whole set and for every value of every grouping, each measure's mean in percent, its count
(for 0/1 measures), and a percentile bootstrap interval from resampling units with replacement
within the slice. A slice's random stream is seeded from ``(seed, slice name)``, so its interval
does not depend on which other slices exist. ``NaN`` marks a unit where a measure is undefined;
that unit is left out of that measure (``n_defined`` says how many units it has).

>>> values = np.array([[1.0, 0.2], [0.0, 0.4], [1.0, 0.0]])
>>> out = units_frame(values, ["hit", "gap"], groups={"g": ["a", "a", "b"]},
...                       count_measures={"hit"}, bootstrap=0, seed=0, n_key="n_rows").to_dict()
>>> out["overall"]["hit"], out["overall"]["counts"]["hit"], round(out["by_g"]["a"]["gap"], 6)
(66.66666666666667, 2, 30.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlibias.errors import DataError
from nlibias.metrics.metric_frame import MetricFrame, check_resampling
from nlibias.metrics.resampling import chunk_sizes, unit_draw_counts
from nlibias.schema import Sample
from nlibias.schema.columns import NO_CODE, Categorical, SampleColumns


def bootstrap_means(
    values: np.ndarray, *, resamples: int, rng: np.random.Generator, confidence: float = 0.95
) -> list[list[float] | None]:
    """Percentile interval (in percent) of each column's mean over units resampled with replacement.

    Each resample draws ``len(values)`` units with replacement (drawn as multinomial counts over
    the distinct unit values when they repeat, which is the same distribution); a column's mean
    skips ``NaN`` units; a resample in which a column has no defined unit is left out of that
    column's percentiles.

    >>> bootstrap_means(np.ones((5, 1)), resamples=20, rng=np.random.default_rng(0))
    [[100.0, 100.0]]
    """
    n_units, n_columns = values.shape
    if resamples <= 0 or n_units == 0:
        return [None] * n_columns
    defined = ~np.isnan(values)
    filled = _zero_filled(values, defined)
    # Drawing n units with replacement only matters through how often each distinct unit value is
    # drawn, which is Multinomial(n, frequency / n): exact, and fast when units are 0/1 rows.
    probabilities = None
    binary = n_columns <= 30 and bool(np.isin(filled, (0.0, 1.0)).all())
    if binary:
        codes = _binary_row_codes(filled, defined)
        unique_codes, first, frequency = np.unique(codes, return_index=True, return_counts=True)
        if len(unique_codes) * 2 <= n_units:
            filled, defined = filled[first], defined[first]
            probabilities = frequency / n_units
    sums, counts = [], []
    for size in chunk_sizes(resamples, len(filled)):
        if probabilities is not None:
            weights = rng.multinomial(n_units, probabilities, size=size).astype(float)
        else:
            weights = unit_draw_counts(n_units, size, rng)
        sums.append(weights @ filled)
        counts.append(weights @ defined.astype(float))
    total, number = np.vstack(sums), np.vstack(counts)
    tail = (1.0 - confidence) / 2.0 * 100.0
    intervals: list[list[float] | None] = []
    for column in range(n_columns):
        ok = number[:, column] > 0
        if not ok.any():
            intervals.append(None)
            continue
        means = 100.0 * total[ok, column] / number[ok, column]
        lo, hi = np.percentile(means, [tail, 100.0 - tail])
        intervals.append([float(lo), float(hi)])
    return intervals


def _zero_filled(values: np.ndarray, defined: np.ndarray) -> np.ndarray:
    """``values`` with NaN as 0; ``values`` itself (no copy) when it has no NaN and is already the
    C-ordered float64 array ``np.where`` would make, so the sums below see the same memory layout."""
    if values.dtype == np.float64 and values.flags.c_contiguous and defined.all():
        return values
    return np.where(defined, values, 0.0)


def _binary_row_codes(filled: np.ndarray, defined: np.ndarray) -> np.ndarray:
    """One integer per row of 0/1 ``filled`` and ``defined``: bit j is column j, bit m + j its flag.

    Built a column at a time, so no ``(rows x 2m)`` integer matrix is held.
    """
    n_columns = filled.shape[1]
    codes = np.zeros(len(filled), dtype=np.int64)
    for j in range(n_columns):
        codes |= filled[:, j].astype(np.int64) << j
        codes |= defined[:, j].astype(np.int64) << (n_columns + j)
    return codes


def summarise_slice(
    values: np.ndarray,
    names: Sequence[str],
    *,
    count_measures: Collection[str],
    bootstrap: int,
    rng: np.random.Generator,
    n_key: str,
    confidence: float = 0.95,
    report_defined: bool = False,
) -> dict[str, Any]:
    """One slice: ``{n_key: units, <measure>: percent or None, "counts": {...}, "ci": {...}}``."""
    defined = ~np.isnan(values)
    n_defined = defined.sum(axis=0)
    # Correctly rounded sums: the result does not depend on the order of the units.
    sums = [math.fsum(values[defined[:, j], j].tolist()) for j in range(values.shape[1])]
    result: dict[str, Any] = {n_key: int(values.shape[0])}
    for j, name in enumerate(names):
        result[name] = float(100.0 * sums[j] / n_defined[j]) if n_defined[j] else None
    result["counts"] = {name: round(sums[j]) for j, name in enumerate(names) if name in count_measures}
    if report_defined:
        result["n_defined"] = {name: int(n_defined[j]) for j, name in enumerate(names)}
    intervals = bootstrap_means(values, resamples=bootstrap, rng=rng, confidence=confidence)
    result["ci"] = {name: intervals[j] for j, name in enumerate(names)}
    return result


def units_frame(
    values: np.ndarray,
    names: Sequence[str],
    *,
    groups: Mapping[str, Sequence[Any]],
    count_measures: Collection[str],
    bootstrap: int,
    seed: int,
    n_key: str,
    confidence: float = 0.95,
) -> MetricFrame:
    """The :class:`~nlibias.metrics.metric_frame.MetricFrame` of a ``(units x measures)`` matrix.

    Values are fractions (0/1 for conditions, or any number in [0, 1]); reported values are
    percent. Each grouping holds one label per unit (any sequence, or a
    :class:`~nlibias.schema.columns.Categorical`); groups are named ``str(label)`` and sorted by name.
    ``bootstrap=0`` gives ``None`` intervals.
    """
    check_resampling(bootstrap, confidence)
    values = np.asarray(values, dtype=float).reshape(-1, len(names))
    report_defined = bool(np.isnan(values).any())

    def summarise(index: np.ndarray | None, rng: np.random.Generator) -> dict[str, Any]:
        return summarise_slice(
            values if index is None else values[index],
            names,
            count_measures=count_measures,
            bootstrap=bootstrap,
            rng=rng,
            n_key=n_key,
            confidence=confidence,
            report_defined=report_defined,
        )

    return MetricFrame(summarise, n_units=len(values), groups=groups, seed=seed)


def pair_samples(
    samples: Sequence[Sample],
    role: Callable[[Sample], str | None],
    roles: tuple[str, str],
    *,
    unit: str,
    members: str = "samples",
) -> tuple[list[dict[str, Sample]], list[str]]:
    """Group samples into complete pairs by ``pair_key`` and ``role(sample)`` (one of ``roles``).

    Returns the complete pairs (role → sample, in first-seen order) and the ids of samples with no
    pair key, no role, or no partner. Two samples in one role of a pair is an error naming both.

    >>> a = Sample(id="a", source="x", domain="d", subtopic="t", premise="P", hypothesis="H",
    ...            gold="neutral", stereotype="pro", pair_key="k")
    >>> pairs, unpaired = pair_samples([a], lambda s: s.stereotype, ("pro", "anti"), unit="row")
    >>> pairs, unpaired
    ([], ['a'])
    """
    by_key: dict[str, dict[str, Sample]] = {}
    unpaired: list[str] = []
    for sample in samples:
        name = role(sample)
        if sample.pair_key is None or name not in roles:
            unpaired.append(sample.id)
            continue
        slot = by_key.setdefault(sample.pair_key, {})
        if name in slot:
            raise DataError(
                f"pair {sample.pair_key!r} has two {name} {members} ({slot[name].id!r}, {sample.id!r}); "
                f"each {unit} is one {roles[0]} and one {roles[1]}",
                sample=sample.id,
                field="pair_key",
            )
        slot[name] = sample
    complete: list[dict[str, Sample]] = []
    for pair in by_key.values():
        if set(pair) == set(roles):
            complete.append(pair)
        else:
            unpaired.extend(s.id for s in pair.values())
    return complete, unpaired


@dataclass(frozen=True)
class PairedPositions:
    """Complete pairs and left-over samples as positions into columns (see :func:`pair_codes`)."""

    first: np.ndarray
    """The position of each complete pair's first-role sample; pairs in first-seen order."""
    second: np.ndarray
    """The position of each complete pair's second-role sample, aligned with :attr:`first`."""
    unpaired: np.ndarray
    """Positions of samples with no pair key, no role or no partner, ordered as in
    :func:`pair_samples`: those without key or role first, then lone members, pairs in first-seen
    order."""


class DuplicateRole(ValueError):
    """Two samples in one role of one pair: positions ``first`` < ``second``, role index ``role``
    (the repeat a sequential scan meets first). Callers turn it into their own message."""

    def __init__(self, first: int, second: int, role: int) -> None:
        super().__init__(f"positions {first} and {second} share a pair and role {role}")
        self.first, self.second, self.role = first, second, role


def match_pairs(pair_code: np.ndarray, role_code: np.ndarray) -> PairedPositions:
    """Pairs from integer columns with array operations (no loop over samples).

    ``pair_code`` is equal for the samples of one pair (:data:`~nlibias.schema.columns.NO_CODE`: no key);
    ``role_code`` is 0 for the first role, 1 for the second, anything else for no role. A pair is
    "seen" at its first sample that has a role. Two samples in one role of a pair raise
    :class:`DuplicateRole`.

    >>> paired = match_pairs(np.array([7, 7, -1, 9, 8, 8]), np.array([1, 0, 0, 0, -1, 0]))
    >>> paired.first.tolist(), paired.second.tolist(), paired.unpaired.tolist()
    ([1], [0], [2, 4, 3, 5])
    """
    has_role = (role_code == 0) | (role_code == 1)
    eligible = (pair_code != NO_CODE) & has_role
    positions = np.flatnonzero(eligible)
    role = role_code[positions].astype(np.int64)
    # np.unique's stable sort gives each pair's first position; ordering pairs by it = first seen.
    _, first_seen, pair_of = np.unique(pair_code[positions], return_index=True, return_inverse=True)
    pair_of = pair_of.reshape(-1)
    slot = pair_of * 2 + role
    if len(slot) and np.bincount(slot).max() > 1:
        raise _first_repeat(positions, slot)
    member = np.full((len(first_seen), 2), -1, dtype=np.int64)
    member[pair_of, role] = positions
    member = member[np.argsort(first_seen, kind="stable")]
    complete = (member >= 0).all(axis=1)
    lone = member[~complete].max(axis=1)  # an incomplete pair has one member, the other slot is -1
    return PairedPositions(
        first=member[complete, 0],
        second=member[complete, 1],
        unpaired=np.concatenate([np.flatnonzero(~eligible), lone]),
    )


def _first_repeat(positions: np.ndarray, slot: np.ndarray) -> DuplicateRole:
    """The repeated (pair, role) slot a sequential scan meets first."""
    order = np.argsort(slot, kind="stable")  # within a slot, positions stay ascending
    repeats = np.flatnonzero(slot[order][1:] == slot[order][:-1]) + 1
    # The scan stops at the smallest position that repeats a slot: always a slot's second sample,
    # so the sample before it in ``order`` is that slot's first.
    k = int(repeats[np.argmin(positions[order[repeats]])])
    return DuplicateRole(int(positions[order[k - 1]]), int(positions[order[k]]), int(slot[order[k]]) % 2)


def pair_codes(
    pair_code: np.ndarray,
    role_code: np.ndarray,
    *,
    roles: tuple[str, str],
    unit: str,
    pair_keys: Sequence[str | None],
    ids: Sequence[str],
    members: str = "samples",
) -> PairedPositions:
    """:func:`pair_samples` over integer columns (:func:`match_pairs`), with its error message:
    ``pair_keys`` and ``ids`` are read only to name the samples of a repeated role.

    >>> paired = pair_codes(np.array([7, 7, -1, 9, 8, 8]), np.array([1, 0, 0, 0, -1, 0]),
    ...                     roles=("pro", "anti"), unit="row", pair_keys=list("kk-jll"), ids=list("abcdef"))
    >>> paired.first.tolist(), paired.second.tolist(), paired.unpaired.tolist()
    ([1], [0], [2, 4, 3, 5])
    """
    try:
        return match_pairs(pair_code, role_code)
    except DuplicateRole as repeat:
        first, second = repeat.first, repeat.second
        raise DataError(
            f"pair {pair_keys[second]!r} has two {roles[repeat.role]} {members} "
            f"({ids[first]!r}, {ids[second]!r}); each {unit} is one {roles[0]} and one {roles[1]}",
            sample=ids[second],
            field="pair_key",
        ) from None


def provenance_labels(
    columns: SampleColumns, key: str, fallback: str | None, rows: np.ndarray
) -> Categorical:
    """``str(provenance[key])`` of each row's sample at ``rows``, else ``str(fallback)``, else "unknown".

    Works on the value tables (a few hundred entries), then picks a code per row.
    """
    texts: dict[str, int] = {}  # label text -> code in the result

    def code_of(text: str) -> int:
        return texts.setdefault(text, len(texts))

    def unknown_if_none(value: Any) -> str:
        return str(value if value is not None else "unknown")

    fallback_column = None if fallback is None else getattr(columns, fallback)
    if fallback_column is None:
        fallback_codes, fallback_map = np.zeros(len(rows), dtype=np.int64), np.array([code_of("unknown")])
    else:
        fallback_codes = fallback_column.codes[rows]
        fallback_map = _ints(code_of(unknown_if_none(v)) for v in fallback_column.values)
    own = columns.provenance.get(key)  # absent: the samples were read without it, all None
    own_codes = np.full(len(rows), NO_CODE, dtype=np.int64)
    if own is not None:
        own_map = _ints(NO_CODE if v is None else code_of(str(v)) for v in own.values)
        own_codes = own_map[own.codes[rows]]
    codes = np.where(own_codes != NO_CODE, own_codes, fallback_map[fallback_codes])
    return Categorical(codes.astype(np.int32), tuple(texts))


def _ints(values: Iterable[int]) -> np.ndarray:
    return np.fromiter(values, dtype=np.int64)
