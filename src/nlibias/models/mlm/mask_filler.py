"""Mask-filler contract: whole words for the one ``<mask>`` of each text, batch by batch.

>>> filler = FakeMaskFiller(words=("able", "keen", "fit"))
>>> batch = next(filler.fill_batches(["They are <mask>."], top_k=2, exclude=[{"keen"}]))
>>> [c.word for c in batch.candidates[0]]
['fit', 'able']
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from nlibias.errors import SourceError
from nlibias.models.batching import plan_batches
from nlibias.schema.prediction_rows import log_probability_problem

MASK = "<mask>"


def check_fill_answer(word: Any, log_prob: Any, *, source: str, field: str) -> float:
    """A fill answer's one rule: a non-empty word and a finite log-probability at most 0, as a
    float; else a SourceError naming ``source`` and ``field``.

    >>> check_fill_answer(" kind", -0.5, source="http://h/v1", field="logprobs.top_logprobs")
    -0.5
    >>> check_fill_answer(" kind", 3.0, source="http://h/v1", field="logprobs.top_logprobs")
    Traceback (most recent call last):
    nlibias.errors.SourceError: http://h/v1: field logprobs.top_logprobs: ...
    """

    def refuse(reason: str) -> SourceError:
        return SourceError(
            source,
            field,
            f"{reason} (token or word {word!r}); a fill answer's log-probability is a number at most 0",
            fix="check that the model or server returns natural-log probabilities",
        )

    if not isinstance(word, str) or not word:
        raise refuse("the word is empty or not text")
    problem = log_probability_problem(log_prob)
    if problem is not None:
        raise refuse(f"the log-probability {problem} (a probability is at most 1)")
    return float(log_prob)


def check_fill_batch(batch: FillBatch, *, source: str, texts: int) -> None:
    """Every candidate of ``batch`` passes :func:`check_fill_answer`, ranked 1, 2, ..., its
    indices within the ``texts`` asked."""
    if len(batch.candidates) != len(batch.indices) or any(not 0 <= int(i) < texts for i in batch.indices):
        raise SourceError(source, "indices", "the fill batch's indices do not match the texts asked")
    for row in batch.candidates:
        for rank, candidate in enumerate(row, start=1):
            check_fill_answer(candidate.word, candidate.log_prob, source=source, field="log_prob")
            if candidate.rank != rank or candidate.vocab_rank < 1:
                raise SourceError(
                    source, "rank", f"candidate {candidate.word!r} has rank {candidate.rank}, expected {rank}"
                )


@dataclass(frozen=True)
class FillCandidate:
    """One whole word proposed for a mask."""

    word: str
    rank: int
    """1-based position among the kept whole-word candidates."""
    log_prob: float
    """Natural-log probability the LM gives the token at the mask (over its whole vocabulary)."""
    vocab_rank: int
    """1-based position in the LM's full ranking (subword pieces and skipped words included)."""

    def to_list(self) -> list[Any]:
        return [self.word, self.rank, self.log_prob, self.vocab_rank]

    @classmethod
    def from_list(cls, values: Sequence[Any]) -> FillCandidate:
        return cls(str(values[0]), int(values[1]), float(values[2]), int(values[3]))


@dataclass(frozen=True)
class FillBatch:
    """Candidates for one batch of texts."""

    indices: np.ndarray
    """Positions of the batch's texts in the input sequence."""
    candidates: list[tuple[FillCandidate, ...]]
    """One tuple per text (at most ``top_k`` each, fewer only when the vocabulary runs out)."""
    real_tokens: int = 0
    padded_tokens: int = 0


def rank_whole_words(
    log_probs: np.ndarray,
    order: np.ndarray,
    word_of: Sequence[str | None],
    *,
    top_k: int,
    exclude: Collection[str],
) -> list[FillCandidate]:
    """Walk ``order`` (token ids by decreasing score) and keep the first ``top_k`` whole words,
    skipping ``exclude`` (lower-cased) and repeats.
    >>> lp = np.log(np.array([0.1, 0.5, 0.4]))
    >>> [c.word for c in rank_whole_words(lp, np.array([1, 2, 0]), ["a", None, "b"], top_k=2, exclude={"B"})]
    ['a']
    """
    skip = {w.lower() for w in exclude}
    kept: list[FillCandidate] = []
    seen: set[str] = set()
    for position, token_id in enumerate(order, start=1):
        word = word_of[int(token_id)] if int(token_id) < len(word_of) else None
        if word is None or word.lower() in skip or word in seen:
            continue
        seen.add(word)
        kept.append(FillCandidate(word, len(kept) + 1, float(log_probs[int(token_id)]), position))
        if len(kept) == top_k:
            break
    return kept


@runtime_checkable
class MaskFiller(Protocol):
    """A masked LM that fills ``<mask>``; ``identity()`` determines the outputs."""

    name: str

    def identity(self) -> Mapping[str, Any]: ...

    def fill_batches(
        self, texts: Sequence[str], *, top_k: int, exclude: Sequence[Collection[str]]
    ) -> Iterator[FillBatch]: ...


class FakeMaskFiller:
    """Deterministic fills from a word list, ranked by a hash of (text, word); ``calls``: batch sizes."""

    def __init__(
        self,
        name: str = "fake-mlm",
        *,
        words: Sequence[str] = ("strong", "weak", "able", "likely", "rare", "poor", "good", "bad"),
        batch_size: int = 16,
    ) -> None:
        self.name = name
        self.words = tuple(words)
        self.batch_size = batch_size
        self.calls: list[int] = []

    def identity(self) -> Mapping[str, Any]:
        return {"backend": "fake-mlm", "model": self.name, "words": list(self.words)}

    def _ranked(self, text: str) -> list[tuple[str, float]]:
        scores = [
            int.from_bytes(hashlib.sha256(f"{text}\0{word}".encode()).digest()[:4], "big") + 1
            for word in self.words
        ]
        total = float(sum(scores))
        return sorted(
            ((word, math.log(score / total)) for word, score in zip(self.words, scores, strict=True)),
            key=lambda item: -item[1],
        )

    def fill_batches(
        self, texts: Sequence[str], *, top_k: int, exclude: Sequence[Collection[str]]
    ) -> Iterator[FillBatch]:
        lengths = [len(text) for text in texts]
        for batch in plan_batches(lengths, max_tokens=10**9, max_batch_size=self.batch_size):
            self.calls.append(len(batch))
            rows: list[tuple[FillCandidate, ...]] = []
            for i in batch:
                words, log_probs = zip(*self._ranked(texts[int(i)]), strict=True)
                order = np.arange(len(words))
                kept = rank_whole_words(
                    np.array(log_probs), order, words, top_k=top_k, exclude=exclude[int(i)]
                )
                rows.append(tuple(kept))
            real = int(sum(lengths[int(i)] for i in batch))
            yield FillBatch(indices=batch, candidates=rows, real_tokens=real, padded_tokens=real)
