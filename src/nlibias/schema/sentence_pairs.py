"""Sentence pairs for token-probability bias: ``premise`` the more-stereotypical sentence,
``hypothesis`` the less, ``stereotype`` the direction (docs/design.md, "Token probability (TP)").

>>> SentencePair("Women can't drive.", "Men can't drive.").texts
("Women can't drive.", "Men can't drive.")
"""

from __future__ import annotations

from dataclasses import dataclass

from nlibias.schema.columns import SampleColumns


@dataclass(frozen=True, slots=True)
class SentencePair:
    """Two sentences that differ only in the identity words."""

    more: str
    """The more-stereotypical sentence."""
    less: str
    """The less-stereotypical (counterfactual) sentence."""

    @property
    def texts(self) -> tuple[str, str]:
        return self.more, self.less


def premise_hypothesis_pairs(columns: SampleColumns) -> list[SentencePair | None]:
    """The pair of each sample of a sentence-pair benchmark: (premise, hypothesis)."""
    return [
        SentencePair(p, h) for p, h in zip(columns.premise.tolist(), columns.hypothesis.tolist(), strict=True)
    ]
