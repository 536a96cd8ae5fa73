"""Counterfactual pairs from sample columns: two samples with one ``pair_key`` in two roles.

>>> paired = match_pairs(np.array([5, 5, 6]), np.array([1, 0, 0]))
>>> paired.first.tolist(), paired.second.tolist(), paired.unpaired.tolist()
([1], [0], [2])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlibias.errors import DataError
from nlibias.schema.columns import NO_CODE, Categorical, SampleColumns

PRO, ANTI, NO_STEREOTYPE = 0, 1, NO_CODE
"""Stereotype codes (:class:`~nlibias.schema.columns.SampleColumns`): pro, anti, none (a test sample)."""


@dataclass(frozen=True)
class PairedPositions:
    """Complete pairs' ``first`` and ``second`` role positions (first-seen order), and the
    ``unpaired`` positions (without key or role first, then lone members)."""

    first: np.ndarray
    second: np.ndarray
    unpaired: np.ndarray


class DuplicateRole(ValueError):
    """Two samples in one role of one pair (the first repeat a sequential scan meets)."""

    def __init__(self, first: int, second: int, role: int) -> None:
        super().__init__(f"positions {first} and {second} share a pair and role {role}")
        self.first, self.second, self.role = first, second, role


def match_pairs(pair_code: np.ndarray, role_code: np.ndarray) -> PairedPositions:
    """Pairs of equal ``pair_code`` (``NO_CODE``: no key) and ``role_code`` 0 and 1.

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
    # the smallest position that repeats a slot; the one before it in ``order`` is that slot's first
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
    """:func:`match_pairs`, two samples in one role refused naming their pair key and ids.

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


def pair_rows(columns: SampleColumns, *, unit: str | None = None) -> PairedPositions:
    """Each pair's ``pro`` (first) and ``anti`` (second) sample; a repeated role is refused naming ``unit``."""
    return pair_codes(
        columns.pair_code,
        columns.stereotype,
        roles=("pro", "anti"),
        unit=unit or f"{columns.source or 'samples'} pair",
        pair_keys=columns.pair_keys,
        ids=columns.ids,
    )


def provenance_labels(
    columns: SampleColumns, key: str, fallback: str | None, rows: np.ndarray
) -> Categorical:
    """``str(provenance[key])`` of each sample at ``rows``, else ``str(fallback)``, else "unknown"."""
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


def equality_codes(values: Sequence[Any]) -> np.ndarray:
    """One integer per distinct value (None → -1): equal values, equal codes."""
    seen: dict[Any, int] = {}
    return np.fromiter(
        (-1 if v is None else seen.setdefault(v, len(seen)) for v in values),
        dtype=np.int64,
        count=len(values),
    )


def pair_positions(
    stereotype: np.ndarray, pair_code: np.ndarray, *, key_of: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(pairs, lone)``: the ``(pro, anti)`` positions of each pair in pro order, and the bias samples
    without a twin; a repeated role raises ``ValueError`` naming ``key_of(position)``.

    >>> pairs, lone = pair_positions(np.array([0, 1, -1, 0]), np.array([7, 7, -1, 9]))
    >>> pairs.tolist(), lone.tolist()
    ([[0, 1]], [3])
    """
    try:
        paired = match_pairs(pair_code, stereotype)
    except DuplicateRole as repeat:
        first, second = repeat.first, repeat.second
        key = key_of(first) if key_of is not None else int(pair_code[first])
        raise ValueError(
            f"pair_key {key!r} has more than one {('pro', 'anti')[repeat.role]}-stereotype sample "
            f"(positions {first} and {second}); a pair is exactly one pro and one anti sample, so "
            f"give each pair its own key"
        ) from None
    order = np.argsort(paired.first, kind="stable")
    pairs = np.column_stack([paired.first[order], paired.second[order]]).reshape(-1, 2)
    lone = np.sort(paired.unpaired[stereotype[paired.unpaired] != NO_STEREOTYPE])
    return pairs, lone


def find_pairs(
    stereotype: Sequence[str | None] | np.ndarray, pair_key: Sequence[Any]
) -> tuple[list[tuple[int, int]], list[int]]:
    """:func:`pair_positions` of stereotypes (strings or codes) and pair keys, as lists.

    >>> find_pairs(["pro", "anti", None, "pro"], ["a", "a", None, "b"])
    ([(0, 1)], [3])
    """
    roles = np.fromiter(
        (PRO if r in ("pro", PRO) else ANTI if r in ("anti", ANTI) else NO_STEREOTYPE for r in stereotype),
        dtype=np.int64,
        count=len(stereotype),
    )
    keys = list(pair_key)
    if len(keys) != len(roles):
        raise ValueError(f"pair_key has {len(keys)} items but stereotype has {len(roles)}")
    pairs, lone = pair_positions(roles, equality_codes(keys), key_of=keys.__getitem__)
    return [(int(a), int(b)) for a, b in pairs.tolist()], lone.tolist()
