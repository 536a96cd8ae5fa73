"""Causal-LM fill (docs/extension.md): a small beam continues the left context into whole-word
candidates, the best ``pool`` of which are re-ranked by the whole sentence's log-probability."""

from __future__ import annotations

import functools
import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from nlibias.errors import ConfigError
from nlibias.models.batching import check_batch_limits, plan_batches
from nlibias.models.generative.hf_causal import HFCausalLM
from nlibias.models.generative.scoring import next_token_log_probs, padded_tensors, plain_last_logits
from nlibias.models.generative.sources import local_source
from nlibias.models.hf_common import set_torch_threads
from nlibias.models.mlm.hf import WORD_PUNCTUATION, is_whole_word, vocabulary_words
from nlibias.models.mlm.mask_filler import MASK, FillBatch, FillCandidate, rank_whole_words
from nlibias.schema.declared import PositiveInt
from nlibias.schema.model_ref import ModelRef

BACKEND_VERSION = 2
POOL_PER_WORD = 2
FILL_OPTIONS = frozenset({"beam", "depth", "pool"})


class FillOptions(BaseModel):
    """The options of a causal fill's spec after ``?`` (``NAME?beam=8``): part of its fingerprint."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    beam: PositiveInt = 16
    depth: PositiveInt = 3
    pool: PositiveInt | None = None
    """Candidates re-ranked by the whole sentence (default ``2 x top_k``)."""
    top_logprobs: PositiveInt = 20
    """Next tokens a server lists (a served fill only)."""


def read_fill_options(options: Mapping[str, str]) -> FillOptions:
    """The fill options of a spec, each value refused by its declared rule.

    >>> read_fill_options({"beam": "8"}).beam, read_fill_options({}).depth
    (8, 3)
    >>> read_fill_options({"beam": "0"})
    Traceback (most recent call last):
    nlibias.errors.ConfigError: option beam='0': Input should be greater than or equal to 1
    """
    try:
        return FillOptions.model_validate(dict(options))
    except ValidationError as error:
        problem = error.errors()[0]
        key = str(problem["loc"][0])
        raise ConfigError(
            f"option {key}={options[key]!r}: {problem['msg']}", parameter="fill_model"
        ) from None


def is_word_piece(text: str) -> bool:
    """A piece that can continue a word: letters, digits, inner apostrophes and hyphens.

    >>> is_word_piece("itive"), is_word_piece(" x"), is_word_piece(""), is_word_piece(".")
    (True, False, False, False)
    """
    return bool(text) and all(c.isalnum() or c in WORD_PUNCTUATION for c in text)


@dataclass(frozen=True)
class PieceTables:
    """Which token ids start a word (after a space) or continue one, and their text."""

    start_text: list[str | None]
    piece_text: list[str | None]
    scheme: str

    @property
    def starts(self) -> np.ndarray:
        return np.array([t is not None for t in self.start_text], dtype=bool)

    @property
    def pieces(self) -> np.ndarray:
        return np.array([t is not None for t in self.piece_text], dtype=bool)


def piece_tables(tokenizer: Any, vocab_size: int) -> PieceTables:
    """Word-start and word-continuation tables of a tokenizer over ``vocab_size`` ids."""
    tokens, scheme, starts = vocabulary_words(tokenizer, vocab_size)
    special = set(tokenizer.all_special_ids)
    pieces: list[str | None] = []
    for token_id, token in enumerate(tokens):
        text: str | None = None
        if token_id not in special:
            if scheme == "wordpiece":
                text = token[2:] if token.startswith("##") else None
            elif not token.startswith("Ġ" if scheme == "bpe" else "▁"):
                text = tokenizer.convert_tokens_to_string([token])
        pieces.append(text if text is not None and is_word_piece(text) else None)
    pad = [None] * (vocab_size - len(tokens))
    return PieceTables([*starts, *pad], [*pieces, *pad], scheme)


@dataclass(frozen=True)
class MaskedText:
    """A text split at its one ``<mask>``: ``left`` + ``sep`` + WORD + ``right``."""

    left: str
    sep: str
    right: str

    @classmethod
    def split(cls, text: str) -> MaskedText:
        """Split ``text`` at its ``<mask>`` (a space before the mask becomes ``sep``).

        >>> MaskedText.split("Men are <mask> at work.")
        MaskedText(left='Men are', sep=' ', right=' at work.')
        """
        if text.count(MASK) != 1:
            raise ValueError(f"expected exactly one {MASK} in the text: {text!r}")
        before, _, after = text.partition(MASK)
        left = before.rstrip()
        return cls(left, " " if left and before != left else "", after)

    def filled(self, word: str) -> str:
        return f"{self.left}{self.sep}{word}{self.right}"

    def context(self) -> MaskedText:
        return MaskedText(self.left, self.sep, "")


@dataclass
class Beam:
    context: int
    tokens: tuple[Any, ...]
    text: str
    score: float


Step = tuple[float | None, list[tuple[Any, str, float]]]


B = TypeVar("B")


def best_beams(grown: Sequence[B], width: int, *, tie: Callable[[B], Any]) -> list[B]:
    """The ``width`` best beams of each left context (ties broken by ``tie``): one beam step.

    >>> best_beams([Beam(0, (1,), "a", -1.0), Beam(0, (2,), "b", -0.5), Beam(1, (3,), "c", -2.0)], 1,
    ...            tie=lambda b: b.tokens)
    [Beam(context=0, tokens=(2,), text='b', score=-0.5), Beam(context=1, tokens=(3,), text='c', score=-2.0)]
    """
    by_context: dict[Any, list[B]] = {}
    for beam in grown:
        by_context.setdefault(beam.context, []).append(beam)  # type: ignore[attr-defined]
    return [
        b
        for group in by_context.values()
        for b in sorted(group, key=lambda b: (-b.score, tie(b)))[:width]  # type: ignore[attr-defined]
    ]


def stopwords_hash(words: Collection[str]) -> str:
    """A short content hash of a stop-word list (lower-cased, order and duplicates ignored).

    >>> stopwords_hash(["The", "a"]) == stopwords_hash({"a", "the"})
    True
    """
    return hashlib.sha256("\n".join(sorted({w.lower() for w in words})).encode()).hexdigest()[:16]


class BeamRerankFiller(ABC):
    """What every causal fill shares (in process or over HTTP): settings, identity, the fill."""

    fill_kind = "causal"
    device: str

    def __init__(
        self, options: Mapping[str, str], *, name: str, stopwords: Collection[str], texts_per_chunk: int
    ) -> None:
        self.options = read_fill_options(options)
        self.beam, self.depth, self.pool = self.options.beam, self.options.depth, self.options.pool
        self.name = name
        self.stopwords = frozenset(w.lower() for w in stopwords)
        self.texts_per_chunk = texts_per_chunk
        self._identity: dict[str, Any] = {}

    def _fill_identity(self, scorer: Mapping[str, Any], **settings: Any) -> dict[str, Any]:
        return {
            **scorer,
            "beam": self.beam,
            "depth": self.depth,
            "pool": self.pool or f"{POOL_PER_WORD}*top_k",
            **settings,
            "stopwords": stopwords_hash(self.stopwords),
        }

    def identity(self) -> Mapping[str, Any]:
        return dict(self._identity)

    def describe(self) -> dict[str, Any]:
        return {**self._identity, "name": self.name, "device": self.device, "kind": "causal"}

    def pool_size(self, top_k: int) -> int:
        """How many candidates are re-ranked by the whole sentence (at least ``top_k``)."""
        return max(self.pool or POOL_PER_WORD * top_k, top_k)

    #: How beams of equal score are ordered (by their tokens, or a server's by their text).
    tie: Callable[[Beam], Any] = staticmethod(lambda beam: beam.tokens)

    @abstractmethod
    def _stepper(self, contexts: Sequence[MaskedText]) -> Callable[[list[Beam], int], list[Step]]:
        """One beam step at a depth: per beam, log P(its word ends there) (None: unknown), and
        the ``(token, text, log P)`` that may continue it."""

    def left_candidates(self, contexts: Sequence[MaskedText]) -> list[dict[str, float]]:
        """For each left context: candidate word → left score (step 1)."""
        step = self._stepper(contexts)
        found: list[dict[str, float]] = [{} for _ in contexts]
        beams = [Beam(i, (), "", 0.0) for i in range(len(contexts))]
        for depth in range(self.depth + 1):
            grown: list[Beam] = []
            for beam, (boundary, growth) in zip(beams, step(beams, depth), strict=True):
                if depth > 0 and boundary is not None and is_whole_word(beam.text):
                    score, words = beam.score + boundary, found[beam.context]
                    words[beam.text] = max(words.get(beam.text, score), score)
                if depth < self.depth:
                    grown += [
                        Beam(beam.context, (*beam.tokens, token), beam.text + text, beam.score + value)
                        for token, text, value in growth
                    ]
            beams = best_beams(grown, self.beam, tie=self.tie)
            if not beams:
                break
        return found

    @abstractmethod
    def sentence_log_probs(self, sentences: Sequence[str]) -> list[float]:
        """log P of each whole sentence (step 2 re-ranks by it)."""

    def fill_batches(
        self, texts: Sequence[str], *, top_k: int, exclude: Sequence[Collection[str]]
    ) -> Iterator[FillBatch]:
        """Up to ``top_k`` whole-word candidates per text, a chunk of texts at a time."""
        for start in range(0, len(texts), self.texts_per_chunk):
            stop = min(start + self.texts_per_chunk, len(texts))
            split = [MaskedText.split(t) for t in texts[start:stop]]
            contexts: dict[MaskedText, int] = {}
            context_of = [contexts.setdefault(s.context(), len(contexts)) for s in split]
            found = self.left_candidates(list(contexts))
            rows = rerank_by_sentence(
                split,
                [found[c] for c in context_of],
                [{*(w.lower() for w in skip), *self.stopwords} for skip in exclude[start:stop]],
                pool=self.pool_size(top_k),
                top_k=top_k,
                score=self.sentence_log_probs,
            )
            yield FillBatch(indices=np.arange(start, stop), candidates=rows)


class CausalLMFiller(BeamRerankFiller):
    """Fills ``<mask>`` with a causal LM in process (``spec[?beam=16&depth=3&pool=10]``)."""

    def __init__(
        self,
        spec: str,
        *,
        stopwords: Collection[str] = (),
        device: str | None = None,
        dtype: str | None = None,
        max_tokens: int = 2048,
        max_batch_size: int = 128,
        threads: int | None = None,
        name: str | None = None,
    ) -> None:
        check_batch_limits(max_tokens=max_tokens, max_batch_size=max_batch_size)
        ref = ModelRef.parse(spec, parameter="fill_model", allowed=FILL_OPTIONS)
        super().__init__(
            ref.options, name=name or spec, stopwords=stopwords, texts_per_chunk=max(1, max_batch_size // 2)
        )
        set_torch_threads(threads)
        self.max_tokens, self.max_batch_size = max_tokens, max_batch_size
        self._lm = HFCausalLM(local_source(ref.base), name=ref.base, device=device, dtype=dtype)
        self.device = self._lm.device
        self.forward_passes = 0
        # no loaded model needed: a rerun whose fills are all cached never loads the LM
        self._identity = self._fill_identity(
            {"backend": "causal-fill", "backend_version": BACKEND_VERSION, "lm": dict(self._lm.identity())}
        )

    @functools.cached_property
    def _tables(self) -> PieceTables:
        """Which token ids start or continue a word (the LM loaded first)."""
        model, tokenizer = self._lm.load()
        return piece_tables(tokenizer, int(model.get_output_embeddings().weight.shape[0]))

    def load(self) -> tuple[Any, Any]:
        """``(model, tokenizer)``, loaded now if they were not."""
        return self._lm.load()

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` after the BOS text."""
        _, tokenizer = self._lm.load()
        return list(tokenizer(self._lm.bos + text, add_special_tokens=False)["input_ids"])

    def _steps(
        self, sequences: Sequence[Sequence[int]], allowed: Sequence[np.ndarray]
    ) -> list[tuple[float, list[int], list[float]]]:
        """For each sequence: log P(the next token ends a word), and the ``beam`` best next tokens
        among ``allowed``."""
        import torch

        model, _ = self._lm.load()
        not_piece = torch.as_tensor(~self._tables.pieces, device=self.device)
        lengths = np.array([len(s) for s in sequences])
        out: list[tuple[float, list[int], list[float]]] = [(0.0, [], [])] * len(sequences)
        for batch in plan_batches(lengths, max_tokens=self.max_tokens, max_batch_size=self.max_batch_size):
            with torch.inference_mode():
                logits = plain_last_logits(model, [sequences[i] for i in batch], self._lm.pad_id, self.device)
                logprobs = torch.log_softmax(logits.float(), dim=-1)
                boundary = torch.logsumexp(logprobs.masked_fill(~not_piece, float("-inf")), dim=-1)
                masks = torch.as_tensor(np.stack([allowed[i] for i in batch]), device=self.device)
                top = torch.topk(
                    logprobs.masked_fill(~masks, float("-inf")), min(self.beam, logprobs.shape[-1])
                )
            self.forward_passes += 1
            values, ids, ends = top.values.cpu().tolist(), top.indices.cpu().tolist(), boundary.cpu().tolist()
            for row, i in enumerate(batch):
                kept = [(t, v) for t, v in zip(ids[row], values[row], strict=True) if v != float("-inf")]
                out[int(i)] = (float(ends[row]), [t for t, _ in kept], [v for _, v in kept])
        return out

    def _stepper(self, contexts: Sequence[MaskedText]) -> Callable[[list[Beam], int], list[Step]]:
        tables = self._tables
        prefixes = [self.encode(c.left) for c in contexts]
        # a word starts with a word-start token after a space (or in a WordPiece vocabulary)
        spaced = [bool(c.sep) or tables.scheme == "wordpiece" for c in contexts]

        def step(beams: list[Beam], depth: int) -> list[Step]:
            starting = [depth == 0 and spaced[b.context] for b in beams]
            allowed = [tables.starts if start else tables.pieces for start in starting]
            steps = self._steps([prefixes[b.context] + list(b.tokens) for b in beams], allowed)
            return [
                (boundary, [(t, text, v) for t, v in zip(ids, values, strict=True) if (text := texts[t])])
                for (boundary, ids, values), texts in zip(
                    steps,
                    [tables.start_text if start else tables.piece_text for start in starting],
                    strict=True,
                )
            ]

        return step

    def sentence_log_probs(self, sentences: Sequence[str]) -> list[float]:
        """log P of each sentence: every token after the BOS text, given all tokens before it."""
        import torch

        model, _ = self._lm.load()
        encoded = [self.encode(s) for s in sentences]
        lengths = np.array([len(e) for e in encoded])
        scores = [0.0] * len(sentences)
        for batch in plan_batches(lengths, max_tokens=self.max_tokens, max_batch_size=self.max_batch_size):
            ids, mask = padded_tensors([encoded[i] for i in batch], self._lm.pad_id, self.device)
            with torch.inference_mode():
                picked = next_token_log_probs(model, ids, mask)
                total = (picked.double() * mask[:, 1:]).sum(-1).cpu().tolist()  # float64 sum: exact to 1e-6
            self.forward_passes += 1
            for row, i in enumerate(batch):
                scores[int(i)] = float(total[row])
        return scores


def rerank_by_sentence(
    split: Sequence[MaskedText],
    found: Sequence[Mapping[str, float]],
    exclude: Sequence[Collection[str]],
    *,
    pool: int,
    top_k: int,
    score: Callable[[Sequence[str]], list[float]],
) -> list[tuple[FillCandidate, ...]]:
    """Step 2 of every causal fill: each text's best ``pool`` candidates (``found``: word → left
    score) re-ranked by ``score`` (the whole sentence's log-probability), the first ``top_k`` kept.
    >>> split = [MaskedText.split("A <mask> b.")]
    >>> rows = rerank_by_sentence(split, [{"x": -1.0, "y": -2.0, "z": -3.0}], [{"z"}], pool=2, top_k=1,
    ...                           score=lambda sentences: [-5.0 if "x" in s else -4.0 for s in sentences])
    >>> rows[0][0].word, rows[0][0].vocab_rank
    ('y', 2)
    """
    shortlists: list[list[FillCandidate]] = []
    for words_scores, skip in zip(found, exclude, strict=True):
        words = sorted(words_scores, key=lambda w: (-words_scores[w], w))
        scores = np.array([words_scores[w] for w in words], dtype=np.float64)
        shortlists.append(rank_whole_words(scores, np.arange(len(words)), words, top_k=pool, exclude=skip))
    sentences = [m.filled(c.word) for m, short in zip(split, shortlists, strict=True) for c in short]
    scores_flat = iter(score(sentences))
    rows: list[tuple[FillCandidate, ...]] = []
    for short in shortlists:
        scored = [(next(scores_flat), c) for c in short]
        scored.sort(key=lambda pair: (-pair[0], pair[1].rank))
        rows.append(
            tuple(
                FillCandidate(c.word, rank, score, c.rank)
                for rank, (score, c) in enumerate(scored[:top_k], start=1)
            )
        )
    return rows
