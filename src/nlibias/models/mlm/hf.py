"""Hugging Face masked LMs as mask fillers: the LM head runs at the mask only (else the full
logits, with a warning); candidates are whole words."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from nlibias.errors import ConfigError
from nlibias.models.batching import plan_batches
from nlibias.models.generative.scoring import padded_tensors
from nlibias.models.hf_common import (
    HFBackend,
)
from nlibias.models.mlm.mask_filler import MASK, FillBatch, FillCandidate, rank_whole_words

DEFAULT_MLM = "bert-large-cased-whole-word-masking"
BACKEND_VERSION = 1
Scheme = Literal["wordpiece", "bpe", "sentencepiece"]
_MARKERS: dict[Scheme, str] = {"wordpiece": "##", "bpe": "Ġ", "sentencepiece": "▁"}
WORD_PUNCTUATION = frozenset("'’-")


def detect_scheme(tokens: Sequence[str]) -> Scheme:
    """Which subword scheme a vocabulary uses: the most frequent marker wins.

    >>> detect_scheme(["[CLS]", "the", "##s", "##ing"]), detect_scheme(["<s>", "Ġthe", "s"])
    ('wordpiece', 'bpe')
    """
    counts = {scheme: sum(1 for t in tokens if t.startswith(marker)) for scheme, marker in _MARKERS.items()}
    best = max(counts, key=lambda s: counts[s])
    return best if counts[best] else "wordpiece"


def is_whole_word(word: str) -> bool:
    """A word of letters (digits, inner apostrophes and hyphens allowed), not punctuation.

    >>> is_whole_word("well-known"), is_whole_word("..."), is_whole_word("[unused1]"), is_whole_word("-x")
    (True, False, False, False)
    """
    return (
        bool(word)
        and word[0].isalnum()
        and any(c.isalpha() for c in word)
        and all(c.isalnum() or c in WORD_PUNCTUATION for c in word)
    )


def whole_word_table(
    tokens: Sequence[str],
    special_ids: Collection[int],
    *,
    scheme: Scheme | None = None,
    decode: Callable[[str], str] | None = None,
) -> list[str | None]:
    """For each vocabulary id, the whole word it stands for, or ``None`` (a WordPiece ``##`` piece,
    a BPE / SentencePiece token without the word-start marker, a special token).

    >>> whole_word_table(["[CLS]", "able", "##ing", ",", "Ġx"], {0})
    [None, 'able', None, None, 'Ġx']
    >>> whole_word_table(["<s>", "Ġable", "ing", "Ġ,"], {0})
    [None, 'able', None, None]
    """
    scheme = scheme or detect_scheme(tokens)
    marker = _MARKERS[scheme]
    table: list[str | None] = []
    for token_id, token in enumerate(tokens):
        word: str | None = None
        if token_id not in special_ids:
            if scheme == "wordpiece":
                word = None if token.startswith(marker) else token
            elif token.startswith(marker):
                word = (decode(token) if decode else token[len(marker) :]).strip()
        table.append(word if word is not None and is_whole_word(word) else None)
    return table


def vocabulary_words(tokenizer: Any, size: int) -> tuple[list[str], Scheme, list[str | None]]:
    """Tokens of the ids below ``size`` (those the tokenizer has), their scheme, :func:`whole_word_table`."""
    tokens = [str(t) for t in tokenizer.convert_ids_to_tokens(list(range(min(size, len(tokenizer)))))]
    scheme = detect_scheme(tokens)
    decode = None if scheme == "wordpiece" else (lambda t: tokenizer.convert_tokens_to_string([t]))
    special = set(tokenizer.all_special_ids)
    return tokens, scheme, whole_word_table(tokens, special, scheme=scheme, decode=decode)


def find_mask_head(model: Any) -> tuple[Any, Any] | None:
    """``(base encoder, LM head)`` of a masked LM, or ``None``: its ``cls``, ``lm_head`` or
    ``predictions`` module holding the output embeddings."""
    encoder = getattr(model, getattr(model, "base_model_prefix", ""), None)
    output_embeddings = model.get_output_embeddings()
    if encoder is None or output_embeddings is None:
        return None
    for attribute in ("cls", "lm_head", "predictions"):
        head = getattr(model, attribute, None)
        if head is not None and callable(head) and any(m is output_embeddings for m in head.modules()):
            return encoder, head
    return None


def check_mask_head_loaded(
    model: Any, loading: Mapping[str, Any], name: str, parameter: str = "fill_model"
) -> None:
    """Refuse a checkpoint without masked-LM head weights (``loading``: ``from_pretrained``'s load
    report), which transformers would fill with a random head.
    >>> class M: base_model_prefix = "bert"
    >>> check_mask_head_loaded(M(), {"missing_keys": []}, "m")
    >>> check_mask_head_loaded(M(), {"missing_keys": ["cls.predictions.bias"]}, "nli")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: nli is not a masked LM: ...
    """
    prefix = f"{getattr(model, 'base_model_prefix', '')}."
    missing = sorted(k for k in loading.get("missing_keys") or () if not k.startswith(prefix))
    if missing:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        raise ConfigError(
            f"{name} is not a masked LM: its checkpoint has no weights for the masked-LM head ({shown}), "
            "so it would fill with a new, random head (a sequence classifier, such as an NLI model?); "
            "name a masked LM (e.g. bert-base-cased) or a causal LM (causal:NAME)",
            parameter=parameter,
        )


class HFMaskedLM(HFBackend):
    """What the masked-LM filler and scorer share: the checkpoint (refused without a mask token or
    a trained masked-LM head), its mask head, and the logits at one position per text."""

    def _load_masked_lm(self, revision: str | None, dtype: Any, parameter: str) -> None:
        """Load the tokenizer and weights (eval mode) and find the mask head."""
        from transformers import AutoModelForMaskedLM

        path = self.model_name_or_path

        def check(config: Any, tokenizer: Any, torch_dtype: Any) -> None:
            if tokenizer.mask_token_id is None:
                raise ConfigError(
                    f"{path}: the tokenizer has no mask token (not a masked LM? a causal LM is named as one)",
                    parameter=parameter,
                )

        _, self.tokenizer, (model, loading) = self._load_checkpoint(
            AutoModelForMaskedLM, revision, dtype, "masked LM", check, output_loading_info=True
        )
        check_mask_head_loaded(model, loading, path, parameter)
        self.model: Any = model.to(self.device).eval()
        self._head = find_mask_head(self.model)

    def _mask_logits(self, ids: Sequence[Sequence[int]], positions: Any, *, remask: bool = False) -> Any:
        """The logits at one position per row of ``ids`` (``remask``: that token masked first),
        through the :func:`find_mask_head` there only, if found."""
        import torch

        input_ids, attention = padded_tensors(ids, self.tokenizer.pad_token_id or 0, self.device)
        rows = torch.arange(len(ids), device=self.device)
        where = torch.as_tensor(positions, device=self.device)
        if remask:
            input_ids[rows, where] = self.tokenizer.mask_token_id
        inputs = {"input_ids": input_ids, "attention_mask": attention}
        if self._head is None:
            return self.model(**inputs).logits[rows, where]
        encoder, lm_head = self._head
        return lm_head(encoder(**inputs)[0][rows, where])


class HFMaskedLMFiller(HFMaskedLM):
    """A masked LM filling one ``<mask>`` per text; ``head_mode``: ``mask-only`` or ``full-logits``."""

    def __init__(
        self,
        model_name_or_path: str | Path = DEFAULT_MLM,
        *,
        revision: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
        max_tokens: int = 8192,
        max_batch_size: int = 128,
        max_length: int = 512,
        name: str | None = None,
        threads: int | None = None,
    ) -> None:
        self._settle(model_name_or_path, name, device, dtype, threads, max_tokens, max_batch_size, max_length)
        path = self.model_name_or_path
        self._load_masked_lm(revision, dtype, "fill_model")
        self.max_length = min(max_length, int(min(self.tokenizer.model_max_length, 10**6)))
        if self._head is None:  # every position's logits computed: slower
            warnings.warn(
                f"{path}: LM head not found (no cls/lm_head/predictions module holding the "
                "output embeddings); computing full logits at every position, which is slower",
                stacklevel=2,  # the caller that built this filler
            )
        self.head_mode = "mask-only" if self._head is not None else "full-logits"
        vocab_size = int(self.model.get_output_embeddings().weight.shape[0])
        _, self.scheme, self.word_of = vocabulary_words(self.tokenizer, vocab_size)
        self._identify("hf-mlm", BACKEND_VERSION, max_length=self.max_length)
        self.batches_computed = 0

    def describe(self) -> dict[str, Any]:
        return {
            **self._identity,
            "model": self.model_name_or_path,
            "device": self.device,
            "head": self.head_mode,
        }

    def encode(self, texts: Sequence[str]) -> tuple[list[list[int]], np.ndarray]:
        """Token ids of each text (``<mask>`` → the tokenizer's mask token) and its mask position."""
        prepared = [text.replace(MASK, self.tokenizer.mask_token) for text in texts]
        encoded = self.tokenizer(
            prepared, truncation=True, max_length=self.max_length, return_attention_mask=False, verbose=False
        )["input_ids"]
        positions = np.zeros(len(texts), dtype=np.int64)
        mask_id = self.tokenizer.mask_token_id
        for i, ids in enumerate(encoded):
            found = [j for j, token in enumerate(ids) if token == mask_id]
            if len(found) != 1:
                raise ValueError(
                    f"expected exactly one {MASK} in the text, found {len(found)} after tokenization "
                    f"(truncated at {self.max_length} tokens?): {texts[i]!r}"
                )
            positions[i] = found[0]
        return [list(ids) for ids in encoded], positions

    def _mask_log_probs(self, ids: Sequence[Sequence[int]], positions: np.ndarray) -> Any:
        import torch

        with torch.inference_mode():
            return torch.log_softmax(self._mask_logits(ids, positions).float(), dim=-1)

    def fill_batches(
        self, texts: Sequence[str], *, top_k: int, exclude: Sequence[Collection[str]]
    ) -> Iterator[FillBatch]:
        """Up to ``top_k`` whole-word candidates per text, batch by batch (longest batch first)."""
        import torch

        if not texts:
            return
        ids, positions = self.encode(texts)
        lengths = np.fromiter((len(row) for row in ids), dtype=np.int64, count=len(ids))
        for batch in plan_batches(lengths, max_tokens=self.max_tokens, max_batch_size=self.max_batch_size):
            log_probs = self._mask_log_probs([ids[int(i)] for i in batch], positions[batch])
            vocab = log_probs.shape[-1]
            rows: list[tuple[FillCandidate, ...]] = []
            for row, i in enumerate(batch):
                excluded = exclude[int(i)]
                depth = min(vocab, 4 * top_k + len(excluded) + 64)
                while True:
                    order = torch.topk(log_probs[row], depth).indices.cpu().numpy()
                    scores = log_probs[row].cpu().numpy()
                    kept = rank_whole_words(scores, order, self.word_of, top_k=top_k, exclude=excluded)
                    if len(kept) == top_k or depth == vocab:
                        break
                    depth = min(vocab, depth * 8)
                rows.append(tuple(kept))
            self.batches_computed += 1
            yield FillBatch(
                indices=batch,
                candidates=rows,
                real_tokens=int(lengths[batch].sum()),
                padded_tokens=int(lengths[batch].max()) * len(batch),
            )
