"""Shared prompt prefixes (docs/generative.md): which tokens to compute once, planned on lists.

>>> seqs = [[1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 7, 8], [1, 2, 9, 9, 9, 9]]
>>> groups = group_by_prefix(seqs, min_prefix=2, min_fraction=0.5)
>>> batch = plan_prefix_batches(seqs, groups, max_tokens=64, max_batch_size=8, min_root=2)[0]
>>> [[list(s) for s in stage.segments] for stage in batch.stages]
[[[1, 2]], [[3, 4, 5], [9, 9]], [[6], [7, 8], [9, 9]]]
>>> batch.indices.tolist(), batch.prompt_tokens, batch.real_tokens, batch.padded_tokens
([0, 1, 2], 19, 12, 14)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    """Number of leading tokens ``a`` and ``b`` share.

    >>> common_prefix_length([1, 2, 3], [1, 2, 4, 5]), common_prefix_length([1], [2])
    (2, 0)
    """
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


@dataclass(frozen=True)
class PrefixGroup:
    """Prompts that share their first ``prefix_length`` tokens."""

    members: tuple[int, ...]
    """Indices of the prompts (into the sequences grouped), in sorted-token order."""
    prefix_length: int
    """Tokens shared by every member; each member has at least one token beyond them."""

    @property
    def size(self) -> int:
        return len(self.members)


def group_by_prefix(
    sequences: Sequence[Sequence[int]], *, min_prefix: int = 16, min_fraction: float = 0.5
) -> list[PrefixGroup]:
    """Group sorted token sequences while their common prefix (each member keeping a token) is at
    least ``min_prefix`` tokens and ``min_fraction`` of the longest; a group of one: ``len - 1``.

    >>> seqs = [[5, 6, 7, 8], [5, 6, 7, 9, 9], [5, 6, 7, 8], [1, 2]]
    >>> [(g.members, g.prefix_length) for g in group_by_prefix(seqs, min_prefix=3)]
    [((3,), 1), ((0, 2, 1), 3)]
    """
    if min_prefix < 0 or not 0.0 <= min_fraction <= 1.0:
        raise ValueError("min_prefix must be >= 0 and min_fraction within [0, 1]")
    if any(len(s) == 0 for s in sequences):
        raise ValueError("cannot share prefixes of empty token sequences")
    order = sorted(range(len(sequences)), key=lambda i: (tuple(sequences[i]), i))
    groups: list[PrefixGroup] = []
    members: list[int] = []
    shared = shortest = longest = 0
    for index in order:
        seq = sequences[index]
        if members:
            new_shared = min(shared, common_prefix_length(sequences[members[-1]], seq))
            new_shortest, new_longest = min(shortest, len(seq)), max(longest, len(seq))
            usable = min(new_shared, new_shortest - 1)
            if usable >= max(min_prefix, 1) and usable >= min_fraction * new_longest:
                members.append(index)
                shared, shortest, longest = new_shared, new_shortest, new_longest
                continue
            groups.append(PrefixGroup(tuple(members), min(shared, shortest - 1)))
        members = [index]
        shared = shortest = longest = len(seq)
    if members:
        groups.append(PrefixGroup(tuple(members), min(shared, shortest - 1)))
    return groups


@dataclass(frozen=True)
class Stage:
    """One forward pass of a staged batch: node ``k`` continues node ``parents[k]`` of the
    previous stage (whose cache it gets)."""

    segments: tuple[tuple[int, ...], ...]
    parents: tuple[int, ...] | None = None

    @property
    def width(self) -> int:
        return max(len(s) for s in self.segments)


@dataclass(frozen=True)
class PrefixBatch:
    """A batch run in stages; the last stage has one node per prompt, in ``indices`` order."""

    indices: np.ndarray
    stages: tuple[Stage, ...]

    @property
    def real_tokens(self) -> int:
        """Tokens actually computed (a shared prefix counts once)."""
        return sum(len(seg) for stage in self.stages for seg in stage.segments)

    @property
    def padded_tokens(self) -> int:
        """Positions computed, padding included."""
        return sum(len(stage.segments) * stage.width for stage in self.stages)

    @property
    def prompt_tokens(self) -> int:
        """Tokens of the prompts themselves (unshared, unpadded)."""
        total = np.zeros(len(self.stages[0].segments), dtype=np.int64)
        for stage in self.stages:
            before = total if stage.parents is None else total[list(stage.parents)]
            total = before + np.array([len(s) for s in stage.segments], dtype=np.int64)
        return int(total.sum())


def split_points(longest: Sequence[int], prefix_lengths: Sequence[int], *, root: int) -> list[int]:
    """Where each group hands over from its prefix to its suffixes: the suffix stage is padded to
    ``W = max(longest_g - prefix_g)`` anyway, so a group splits at ``max(root, longest_g - W)``.

    >>> split_points([12, 15], [11, 8], root=4)  # W = 7: the first group gives up 6 shared tokens
    [5, 8]
    """
    width = max(n - p for n, p in zip(longest, prefix_lengths, strict=True))
    floor = max(root, 1)
    return [min(p, max(floor, n - width)) for n, p in zip(longest, prefix_lengths, strict=True)]


def _batch_stages(
    sequences: Sequence[Sequence[int]], groups: Sequence[PrefixGroup], min_root: int
) -> tuple[np.ndarray, tuple[Stage, ...]]:
    heads = [sequences[g.members[0]][: g.prefix_length] for g in groups]
    root = min(len(h) for h in heads)
    for head in heads[1:]:
        root = min(root, common_prefix_length(heads[0], head))
    if len(groups) > 1 and root < max(min_root, 1):
        root = 0
    splits = split_points(
        [max(len(sequences[i]) for i in g.members) for g in groups],
        [g.prefix_length for g in groups],
        root=root,
    )
    groups = [replace(g, prefix_length=q) for g, q in zip(groups, splits, strict=True)]
    heads = [sequences[g.members[0]][: g.prefix_length] for g in groups]
    rows = [i for g in groups for i in g.members]
    suffixes = Stage(
        segments=tuple(tuple(sequences[i][g.prefix_length :]) for g in groups for i in g.members),
        parents=tuple(k for k, g in enumerate(groups) for _ in g.members),
    )
    prefixes = Stage(tuple(tuple(h[root:]) for h in heads))
    if root == 0:
        stages: tuple[Stage, ...] = (prefixes, suffixes)
    elif all(len(s) == 0 for s in prefixes.segments):  # one group, or groups with equal prefixes
        stages = (Stage((tuple(heads[0][:root]),)), Stage(suffixes.segments, tuple(0 for _ in rows)))
    else:
        stages = (
            Stage((tuple(heads[0][:root]),)),
            Stage(prefixes.segments, tuple(0 for _ in groups)),
            suffixes,
        )
    return np.asarray(rows, dtype=np.int64), stages


def plan_prefix_batches(
    sequences: Sequence[Sequence[int]],
    groups: Sequence[PrefixGroup],
    *,
    max_tokens: int = 4096,
    max_batch_size: int = 32,
    min_root: int = 4,
) -> list[PrefixBatch]:
    """Pack prefix groups into batches (longest prefix first, groups of one last, within
    ``max_batch_size`` and ``max_tokens``) and lay out their stages; a batch's common prefix of at
    least ``min_root`` tokens becomes a root stage.

    >>> seqs = [[7, 7, 1, 1, 1, 2], [7, 7, 1, 1, 1, 3], [7, 7, 1, 1, 1, 4]]
    >>> plan = plan_prefix_batches(seqs, group_by_prefix(seqs, min_prefix=2), max_tokens=12, max_batch_size=8)
    >>> [(b.indices.tolist(), [len(s.segments) for s in b.stages]) for b in plan]
    [([0, 1], [1, 2]), ([2], [1, 1])]
    """
    if max_tokens < 1 or max_batch_size < 1:
        raise ValueError("max_tokens and max_batch_size must be positive")
    parts: list[PrefixGroup] = []
    # groups of one last: beside real groups (short suffixes) they would widen every stage
    for group in sorted(groups, key=lambda g: (g.size == 1, -g.prefix_length, g.members)):
        longest = max(len(sequences[i]) for i in group.members)
        size = max(1, min(max_batch_size, max_tokens // max(longest, 1)))
        for start in range(0, group.size, size):
            parts.append(PrefixGroup(group.members[start : start + size], group.prefix_length))
    batches: list[PrefixBatch] = []
    current: list[PrefixGroup] = []
    rows = longest = 0
    for part in parts:
        part_longest = max(len(sequences[i]) for i in part.members)
        new_rows, new_longest = rows + part.size, max(longest, part_longest)
        if current and (new_rows > max_batch_size or new_rows * new_longest > max_tokens):
            batches.append(PrefixBatch(*_batch_stages(sequences, current, min_root)))
            current, new_rows, new_longest = [], part.size, part_longest
        current.append(part)
        rows, longest = new_rows, new_longest
    if current:
        batches.append(PrefixBatch(*_batch_stages(sequences, current, min_root)))
    return batches
