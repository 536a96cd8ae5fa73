"""Stratified, seeded subsets of samples: the demo's sample and ``nlibias audit --limit N``.

Both keep pro/anti pairs whole and cover every subtopic: a small version of the whole benchmark.

>>> from nlibias.schema import Sample
>>> pair = lambda t, k: [Sample(id=f"{t}{k}{s}", source="bbnli", domain="d", subtopic=t,
...     premise="P", hypothesis=s, gold="neutral", stereotype=s, pair_key=f"{t}{k}") for s in ("pro", "anti")]
>>> pool = [s for t in "abc" for k in range(10) for s in pair(t, k)]
>>> picked = stratified_subset(pool, 12, seed=0)
>>> len(picked), sorted({s.subtopic for s in picked})
(12, ['a', 'b', 'c'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nlibias.schema import Sample
from nlibias.schema.declared import PositiveInt, Seed, declared

MIN_PAIRS_PER_SUBTOPIC = 3
"""Pairs each subtopic gets first in :func:`sample_pairs_stratified` (when the budget allows)."""


def _allocate(sizes: Mapping[str, int], budget: int, floor: int) -> dict[str, int]:
    """``budget`` units over the strata of ``sizes``: ``floor`` each (capped at its size), the rest in
    proportion to what each has left (largest remainders first, ties by name)."""
    quota = {topic: min(floor, size) for topic, size in sizes.items()}
    left = budget - sum(quota.values())
    if left > 0:
        room = {topic: sizes[topic] - quota[topic] for topic in sizes}
        total_room = sum(room.values())
        shares = {topic: left * room[topic] / total_room for topic in sizes} if total_room else {}
        for topic, share in shares.items():
            quota[topic] += int(share)
        remaining = max(0, budget - sum(quota.values()))
        order = sorted(shares, key=lambda t: (-(shares[t] - int(shares[t])), t))
        for topic in [t for t in order if quota[t] < sizes[t]][:remaining]:
            quota[topic] += 1
    return quota


def _draw(units: Mapping[str, list[Any]], quota: Mapping[str, int], rng: np.random.Generator) -> set[Any]:
    """``quota[topic]`` of each topic's unit keys, drawn without replacement (topics in name order)."""
    chosen: set[Any] = set()
    for topic in sorted(units):
        keys = units[topic]
        picked = rng.choice(len(keys), size=min(quota[topic], len(keys)), replace=False)
        chosen.update(keys[int(i)] for i in picked)
    return chosen


def _complete_pairs(samples: Sequence[Sample]) -> dict[str, list[str]]:
    """The pair keys of each subtopic whose pair has both members (sorted)."""
    pairs_of: dict[str, dict[str, list[Sample]]] = {}
    for sample in samples:
        if sample.stereotype is None or sample.pair_key is None:
            continue
        pairs_of.setdefault(sample.subtopic, {}).setdefault(sample.pair_key, []).append(sample)
    complete = {
        topic: sorted(key for key, members in pairs.items() if len(members) == 2)
        for topic, pairs in pairs_of.items()
    }
    return {topic: keys for topic, keys in complete.items() if keys}


def has_pairs(samples: Sequence[Sample]) -> bool:
    """Whether ``samples`` hold a complete pro/anti pair (what :func:`stratified_subset` keeps whole)."""
    return bool(_complete_pairs(samples))


def _pair_keys(samples: Sequence[Sample], n_pairs: int, seed: int, min_per_subtopic: int) -> set[str]:
    complete = _complete_pairs(samples)
    sizes = {topic: len(keys) for topic, keys in complete.items()}
    budget = min(max(n_pairs, len(sizes)), sum(sizes.values()))
    floor = max(1, min(min_per_subtopic, budget // max(len(sizes), 1)))
    return _draw(complete, _allocate(sizes, budget, floor), np.random.default_rng(seed))


def sample_pairs_stratified(
    samples: Sequence[Sample], n_pairs: int, *, seed: int = 0, min_per_subtopic: int = MIN_PAIRS_PER_SUBTOPIC
) -> list[Sample]:
    """Whole pro/anti pairs, seeded, in the input order: ``min_per_subtopic`` per subtopic first (at
    least one), the rest in proportion to the subtopics' sizes (largest remainders first).

    >>> pair = lambda t, k: [Sample(id=f"{t}{k}{s}", source="bbnli", domain="d", subtopic=t,
    ...     premise="P", hypothesis=s, gold="neutral", stereotype=s, pair_key=f"{t}{k}") for s in ("pro", "anti")]
    >>> pool = [s for t in "ab" for k in range(10) for s in pair(t, k)]
    >>> picked = sample_pairs_stratified(pool, 4, seed=0, min_per_subtopic=1)
    >>> len(picked), sorted({s.subtopic for s in picked})
    (8, ['a', 'b'])
    """
    chosen = _pair_keys(samples, n_pairs, seed, min_per_subtopic)
    return [s for s in samples if s.pair_key in chosen and s.stereotype is not None]


@declared
def stratified_subset(samples: Sequence[Sample], limit: PositiveInt, *, seed: Seed = 0) -> list[Sample]:
    """About ``limit`` of ``samples`` in the input order: pairs drawn by
    :func:`sample_pairs_stratified`, unpaired samples in proportion by subtopic, each with its resampling unit's
    samples where it names one (BBQ's filled templates), the budget shared
    by their numbers (a limit below two per subtopic is exceeded to cover every subtopic).

    >>> solo = [Sample(id=f"t{i}", source="bbnli", domain="d", subtopic="ab"[i % 2], premise="P",
    ...     hypothesis="H", gold="neutral", stereotype=None, pair_key=None) for i in range(6)]
    >>> [s.id for s in stratified_subset(solo, 2, seed=0)]  # one of each subtopic's three
    ['t2', 't5']
    """
    if limit >= len(samples):
        return list(samples)
    complete = _complete_pairs(samples)
    paired = {key for keys in complete.values() for key in keys}
    units: dict[str, list[tuple[str, str]]] = {}  # subtopic → its units outside pairs, each drawn whole
    size: dict[tuple[str, str], int] = {}
    for sample in samples:
        if sample.pair_key not in paired or sample.stereotype is None:
            unit = _unit(sample)
            if unit not in size:
                units.setdefault(sample.subtopic, []).append(unit)
            size[unit] = size.get(unit, 0) + 1
    n_paired = 2 * len(paired)
    pairs = _pair_keys(samples, round(limit * n_paired / len(samples)) // 2, seed, 1) if paired else set()
    sizes = {topic: len(keys) for topic, keys in units.items()}
    budget = max(0, min(limit - 2 * len(pairs), len(samples) - n_paired))
    if budget:  # in units: samples over the units' mean size, at least one
        budget = max(1, round(budget * len(size) / (len(samples) - n_paired)))
    floor = min(1, budget // max(len(sizes), 1))
    chosen = _draw(units, _allocate(sizes, budget, floor), np.random.default_rng([seed, 1]))
    return [s for s in samples if _unit(s) in chosen or (s.pair_key in pairs and s.stereotype is not None)]


def _unit(sample: Sample) -> tuple[str, str]:
    """What a sample outside a pair is drawn with: its resampling unit (BBQ's template), else itself."""
    unit = sample.provenance.get("unit")
    return ("unit", str(unit)) if unit is not None else ("id", sample.id)
