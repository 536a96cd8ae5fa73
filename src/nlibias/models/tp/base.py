"""The sentence-scorer contract and the token alignment every scorer shares (docs/design.md,
"Token probability").

>>> shared_positions([101, 7, 8, 9, 102], [101, 7, 5, 9, 102])
([0, 1, 3, 4], [0, 1, 3, 4])
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from nlibias.schema.declared import declared
from nlibias.schema.model_keys import TPVariant


def shared_positions(a: Sequence[Any], b: Sequence[Any]) -> tuple[list[int], list[int]]:
    """Positions of the tokens of ``a`` and ``b`` in the ``equal`` spans of a longest-matching
    alignment (``difflib.SequenceMatcher`` over the tokens as strings, as the reference does)."""
    matcher = difflib.SequenceMatcher(None, [str(x) for x in a], [str(x) for x in b])
    left: list[int] = []
    right: list[int] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            left.extend(range(a0, a1))
            right.extend(range(b0, b1))
    return left, right


def scored_positions(
    a: Sequence[Any], b: Sequence[Any], keep_a: Sequence[bool], keep_b: Sequence[bool], variant: str
) -> tuple[list[int], list[int]]:
    """The positions of ``a`` and ``b`` whose log-probabilities are summed (``keep``: scored at all)."""
    if variant == "shared":
        left, right = shared_positions(a, b)
    else:
        left, right = list(range(len(a))), list(range(len(b)))
    return [p for p in left if keep_a[p]], [p for p in right if keep_b[p]]


def check_variant(variant: Any) -> TPVariant:
    """``variant`` (whatever a caller holds) held to :data:`TPVariant`, refused naming ``tp_variants``.

    >>> check_variant("whole")
    'whole'
    """
    return _declared_variant(variant)


@declared
def _declared_variant(tp_variants: TPVariant) -> TPVariant:
    return tp_variants


@dataclass(frozen=True)
class PairScore:
    """Both sentences' log-likelihoods (natural log) and how many tokens each sum holds."""

    more: float
    less: float
    tokens_more: int
    tokens_less: int

    def to_json(self) -> list[float]:
        return [self.more, self.less, self.tokens_more, self.tokens_less]

    @classmethod
    def from_json(cls, row: Sequence[float]) -> PairScore:
        return cls(float(row[0]), float(row[1]), int(row[2]), int(row[3]))


@dataclass(frozen=True)
class PairScoreBatch:
    """Scores of some of the pairs a scorer was given."""

    indices: Sequence[int]
    """Positions of the pairs in the scorer's input."""
    scores: Sequence[PairScore]
    real_tokens: int = 0
    padded_tokens: int = 0


@runtime_checkable
class SentenceScorer(Protocol):
    """Scores sentence pairs; ``kind``: ``mlm``, ``causal`` or ``server``."""

    name: str
    kind: str

    def identity(self) -> Mapping[str, Any]: ...

    def describe(self) -> Mapping[str, Any]: ...

    def score_pair_batches(
        self, pairs: Sequence[tuple[str, str]], *, variant: str
    ) -> Iterator[PairScoreBatch]: ...
