"""In-process Hugging Face sentence scorers as the CrowS-Pairs / WinoQueer reference defines them
(docs/design.md, "Token probability"): a masked LM's masked copies, or a causal LM's one pass."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nlibias.errors import ConfigError
from nlibias.models.base import Identified
from nlibias.models.batching import check_batch_limits, plan_batches, report_fraction, unit_progress
from nlibias.models.generative.hf_causal import HFCausalLM
from nlibias.models.generative.scoring import next_token_log_probs, padded_tensors
from nlibias.models.generative.sources import local_source
from nlibias.models.mlm.hf import HFMaskedLM
from nlibias.models.tp.base import PairScore, PairScoreBatch, check_variant, scored_positions

BACKEND_VERSION = 1
PAIRS_PER_CHUNK = 64
"""Pairs whose copies are batched together (and committed to the cache together)."""
CPU_BATCH_TOKENS = 256
"""A batch's token budget on CPU when none is given: the bar moves every 2 s at no cost in
throughput (``bench/bar_cadence.py``)."""
MEMO_SENTENCES = 200_000
"""Sentences whose token log-probabilities a scorer keeps for reuse (cleared beyond it)."""


Unit = tuple[int, list[int], int | None]
"""One row of a forward pass: its job, the job's token ids, the masked position (None: causal)."""


class _Scorer(Identified):
    """What both HF scorers share: encoding, positions, chunking, totals."""

    kind = "hf"
    name: str
    device: str
    uncased: bool
    max_tokens: int
    max_batch_size: int
    _memo: dict[tuple[int, ...], dict[int, float]]

    def describe(self) -> Mapping[str, Any]:
        return {**self._identity, "device": self.device, "uncased": self.uncased}

    def _encode(self, text: str) -> tuple[list[int], list[bool]]:
        raise NotImplementedError

    def _units(self, jobs: list[tuple[list[int], list[int]]]) -> list[Unit]:
        raise NotImplementedError

    def _unit_log_probs(self, units: list[Unit]) -> list[dict[int, float]]:
        """Each unit's token log-probabilities by position (one forward pass)."""
        raise NotImplementedError

    def _token_log_probs(
        self, jobs: list[tuple[list[int], list[int]]]
    ) -> tuple[list[dict[int, float]], int, int]:
        """Each job's log-probability at (at least) each of its positions; tokens counted."""
        units = self._units(jobs)
        found: list[dict[int, float]] = [{} for _ in jobs]
        lengths = np.array([len(ids) for _, ids, _ in units], dtype=np.int64)
        real = padded = 0
        for batch in plan_batches(lengths, max_tokens=self.max_tokens, max_batch_size=self.max_batch_size):
            chosen = [units[int(i)] for i in batch]
            for (job, _, _), values in zip(chosen, self._unit_log_probs(chosen), strict=True):
                found[job].update(values)
            real += int(lengths[batch].sum())
            padded += int(lengths[batch].max()) * len(batch)
            report_fraction(len(batch) / len(units))  # a bar moves inside a long chunk
        return found, real, padded

    def _sentence_log_probs(self, jobs: list[tuple[list[int], list[int]]]) -> tuple[list[float], int, int]:
        """Each job's sum over its positions (in position order, as the reference adds them);
        token log-probabilities already computed for the same token ids are reused."""
        memo = self._memo
        if len(memo) > MEMO_SENTENCES:
            memo.clear()
        todo = []
        for ids, positions in jobs:
            known = memo.setdefault(tuple(ids), {})
            missing = [p for p in positions if p not in known]
            if missing:
                todo.append((ids, missing))
        real = padded = 0
        if todo:
            found, real, padded = self._token_log_probs(todo)
            for (ids, _), values in zip(todo, found, strict=True):
                memo[tuple(ids)].update(values)
        sums = [float(sum(memo[tuple(ids)][p] for p in sorted(positions))) for ids, positions in jobs]
        return sums, real, padded

    def score_pair_batches(
        self, pairs: Sequence[tuple[str, str]], *, variant: str
    ) -> Iterator[PairScoreBatch]:
        """Both sentences' scores for every pair, a chunk of pairs at a time."""
        check_variant(variant)
        if not pairs:
            return
        encoded = [(self._encode(more), self._encode(less)) for more, less in pairs]
        lengths = np.array([len(a[0]) + len(b[0]) for a, b in encoded], dtype=np.int64)
        order = np.argsort(-lengths, kind="stable")  # chunks of similar lengths batch well
        for chunk in (order[i : i + PAIRS_PER_CHUNK] for i in range(0, len(order), PAIRS_PER_CHUNK)):
            jobs: list[tuple[list[int], list[int]]] = []
            for i in chunk:
                (a, keep_a), (b, keep_b) = encoded[int(i)]
                left, right = scored_positions(a, b, keep_a, keep_b, variant)
                jobs += [(a, left), (b, right)]
            with unit_progress(len(chunk)):
                sums, real, padded = self._sentence_log_probs(jobs)
            scores = [
                PairScore(sums[2 * k], sums[2 * k + 1], len(jobs[2 * k][1]), len(jobs[2 * k + 1][1]))
                for k in range(len(chunk))
            ]
            yield PairScoreBatch([int(i) for i in chunk], scores, real, padded)


def _budget(max_tokens: int | None, device: str, accelerator_default: int) -> int:
    """A batch's token budget: the one given, else :data:`CPU_BATCH_TOKENS` on CPU.

    >>> _budget(None, "cpu", 1024), _budget(None, "cuda:0", 1024), _budget(48, "cpu", 1024)
    (256, 1024, 48)
    """
    if max_tokens is not None:
        return max_tokens
    return CPU_BATCH_TOKENS if device == "cpu" else accelerator_default


def _lowercases(tokenizer: Any) -> bool:
    return bool(getattr(tokenizer, "do_lower_case", False) or tokenizer.init_kwargs.get("do_lower_case"))


class HFMaskedScorer(HFMaskedLM, _Scorer):
    """Pseudo-log-likelihood of a Hugging Face masked LM; ``max_tokens`` caps a batch's tokens
    (default 8,192, or :data:`CPU_BATCH_TOKENS` on CPU)."""

    kind = "mlm"

    def __init__(
        self,
        model_name_or_path: str | Path,
        *,
        revision: str | None = None,
        device: str | None = None,
        dtype: Any = None,
        max_tokens: int | None = None,
        max_batch_size: int = 256,
        name: str | None = None,
    ) -> None:
        self._settle(model_name_or_path, name, device, dtype, None, max_tokens, max_batch_size)
        self._load_masked_lm(revision, dtype, "mlm")
        self.max_tokens = _budget(max_tokens, self.device, 8192)
        self.uncased = _lowercases(self.tokenizer)
        self._memo = {}
        self.max_length = int(min(self.tokenizer.model_max_length, 512))
        self._identify("hf-mlm-pll", BACKEND_VERSION, uncased=self.uncased)

    def _encode(self, text: str) -> tuple[list[int], list[bool]]:
        encoded = self.tokenizer(
            text.lower() if self.uncased else text, truncation=True, max_length=self.max_length,
            return_special_tokens_mask=True, return_attention_mask=False, return_token_type_ids=False,
        )  # fmt: skip
        return list(encoded["input_ids"]), [not m for m in encoded["special_tokens_mask"]]

    def _units(self, jobs: list[tuple[list[int], list[int]]]) -> list[Unit]:
        return [(j, ids, p) for j, (ids, positions) in enumerate(jobs) for p in positions]

    def _unit_log_probs(self, units: list[Unit]) -> list[dict[int, float]]:
        """log P(token | the rest) at each unit's position, that token masked."""
        import torch

        texts = [ids for _, ids, _ in units]
        where = [int(p or 0) for _, _, p in units]
        targets = torch.tensor([t[p] for t, p in zip(texts, where, strict=True)], device=self.device)
        with torch.inference_mode():
            logits = self._mask_logits(texts, where, remask=True)
            log_probs = torch.log_softmax(logits if logits.dtype == torch.float64 else logits.float(), dim=-1)
            values = log_probs[torch.arange(len(units), device=self.device), targets].cpu().tolist()
        return [{p: value} for p, value in zip(where, values, strict=True)]


class HFCausalScorer(_Scorer):
    """Log-likelihood of a Hugging Face causal LM (loaded as generative LMs are): BOS prepended as
    text (as the reference does), each scored token's log P given every token before it, one
    forward pass per sentence.
    """

    kind = "causal"

    def __init__(
        self,
        spec: str,
        *,
        device: str | None = None,
        dtype: str | None = None,
        max_tokens: int | None = None,
        max_batch_size: int = 64,
        name: str | None = None,
    ) -> None:
        check_batch_limits(max_tokens=max_tokens, max_batch_size=max_batch_size)
        source = local_source(spec)
        self._lm = HFCausalLM(source, name=name or spec, device=device, dtype=dtype)
        self.name = name or spec
        self.model, self.tokenizer = self._lm.load()
        self.device = self._lm.device
        self.max_tokens, self.max_batch_size = _budget(max_tokens, str(self.device), 1024), max_batch_size
        self.uncased = _lowercases(self.tokenizer)
        self._memo = {}
        self.bos = self._lm.bos
        if not self.bos:
            raise ConfigError(
                f"{spec}: the tokenizer has neither a BOS nor an EOS token to start a sentence",
                parameter="causal",
            )
        self._identity = {
            "backend": "hf-causal-ll",
            "backend_version": BACKEND_VERSION,
            "model": source.name_or_path if source.gguf_file is None else self.name,
            **source.fingerprint(),
            "dtype": str(self.model.dtype).removeprefix("torch."),
            "bos": self.bos,
            "uncased": self.uncased,
        }

    def _encode(self, text: str) -> tuple[list[int], list[bool]]:
        ids = self.tokenizer(
            self.bos + (text.lower() if self.uncased else text), add_special_tokens=False,
            return_attention_mask=False,
        )["input_ids"]  # fmt: skip
        return list(ids), [i > 0 for i in range(len(ids))]  # the first token (BOS) is never scored

    def _units(self, jobs: list[tuple[list[int], list[int]]]) -> list[Unit]:
        return [(j, ids, None) for j, (ids, _) in enumerate(jobs)]

    def _unit_log_probs(self, units: list[Unit]) -> list[dict[int, float]]:
        """log P(token_t | tokens before t) at every position t >= 1: one pass per sentence."""
        import torch

        ids, attention = padded_tensors([ids for _, ids, _ in units], self._lm.pad_id, str(self.device))
        with torch.inference_mode():
            token_lp = next_token_log_probs(self.model, ids, attention).cpu().tolist()
        return [
            {t: token_lp[row][t - 1] for t in range(1, len(ids))} for row, (_, ids, _) in enumerate(units)
        ]
