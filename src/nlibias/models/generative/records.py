"""What a generative backend returns: an :class:`AnswerRecord` per prompt, in batches."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class AnswerRecord:
    """A generative model's answer to one prompt (what the prediction cache stores).

    >>> AnswerRecord("yes", probs={"yes": 0.9, "no": 0.1}).to_json()["answer"]
    'yes'
    """

    answer: str | None
    """``yes`` / ``no`` / ``maybe``, or ``None`` when the answer could not be read."""
    probs: Mapping[str, float] | None = None
    """Answer word → probability renormalised over the answer words (scored answers only)."""
    text: str | None = None
    """The generated text (generated answers only)."""
    rule: str = "scored"
    """How the answer was read: ``scored`` or the parser rule."""
    method: str = "scored"
    """``scored`` (answer-word probabilities) or ``generated`` (parsed text)."""
    answer_mass: float | None = None
    """Probability of all answer words in the full next-token distribution (scored only)."""
    generated_tokens: int | None = None

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        record["probs"] = None if self.probs is None else dict(self.probs)
        return record

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> AnswerRecord:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in record.items() if k in known})


@dataclass(frozen=True)
class AnswerBatch:
    """Answers to some of the prompts passed to :meth:`GenerativeBackend.answer_batches`."""

    indices: np.ndarray | Sequence[int]
    """Positions of the answered prompts in the input sequence."""
    records: Sequence[AnswerRecord]
    real_tokens: int = 0
    padded_tokens: int = 0
