"""Hugging Face sequence-classification NLI models: pairs tokenized once, batched by length;
softmax in float32, columns in (entailment, neutral, contradiction) order by ``id2label``."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nlibias.models.base import BatchResult, Pair
from nlibias.models.batching import plan_batches
from nlibias.models.hf_common import (
    HFBackend,
    check_speed_values,
    compile_model,
    dtype_name,
    quantize_int8_dynamic,
)
from nlibias.models.nli.labels import parse_label_map, resolve_label_order

#: Bumped when a change of this module changes outputs, so old cache entries are not reused.
BACKEND_VERSION = 1
_UNSET_MAX_LENGTH = 10**6  # tokenizers without a known limit report ~1e30 as model_max_length
#: Pairs per tokenizer call in :meth:`HFNLIClassifier.encode` (bounds the tokenizer's memory).
ENCODE_CHUNK = 4096


class HFNLIClassifier(HFBackend):
    """A 3-way NLI classifier (``AutoModelForSequenceClassification``). ``label_map`` overrides
    the model's ``id2label``; ``quantize`` and ``compile`` change the outputs slightly, so they
    enter :meth:`identity` (docs/benchmarks.md, "Optional speed flags")."""

    def __init__(
        self,
        model_name_or_path: str | Path,
        *,
        revision: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
        label_map: Mapping[int, str] | str | None = None,
        max_tokens: int = 8192,
        max_batch_size: int = 128,
        max_length: int = 512,
        name: str | None = None,
        quantize: str | None = None,
        compile: bool = False,
        threads: int | None = None,
    ) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification

        self._settle(model_name_or_path, name, device, dtype, threads, max_tokens, max_batch_size, max_length)
        path = self.model_name_or_path
        self.threads, self.quantize, self.compile = threads, quantize, compile
        override = parse_label_map(label_map) if isinstance(label_map, str) else label_map

        def check(config: Any, tokenizer: Any, torch_dtype: Any) -> None:
            check_speed_values(quantize=quantize, compile=compile, device=self.device, dtype=torch_dtype)
            self.label_order = resolve_label_order(config.id2label, override, model_name=path)

        config, self.tokenizer, model = self._load_checkpoint(
            AutoModelForSequenceClassification, revision, dtype, "model", check
        )
        self.model: Any = model.to(self.device).eval()
        if quantize is not None:
            self.model = quantize_int8_dynamic(self.model)
        if compile:
            self.model = compile_model(self.model)
        self.max_length = min(max_length, int(min(self.tokenizer.model_max_length, _UNSET_MAX_LENGTH)))
        self.last_truncated: np.ndarray = np.zeros(0, dtype=bool)
        """Which pairs of the last :meth:`encode` call were truncated to ``max_length``."""
        self._with_token_types = "token_type_ids" in self.tokenizer.model_input_names
        pad_id = self.tokenizer.pad_token_id
        pad_id = getattr(config, "pad_token_id", None) if pad_id is None else pad_id
        self._pad_values = {  # the tokenizer's pad token, else the config's, else 0
            "input_ids": int(pad_id) if pad_id is not None else 0,
            "token_type_ids": int(getattr(self.tokenizer, "pad_token_type_id", 0) or 0),
        }
        self._column_order = torch.tensor(self.label_order, device=self.device)
        self._identify(
            "hf-nli",
            BACKEND_VERSION,
            max_length=self.max_length,
            truncation="only_second,longest_first",
            label_order=list(self.label_order),
        )
        if quantize is not None:
            self._identity["quantize"] = f"{quantize}-dynamic-linear"
            # x86/fbgemm and Arm/qnnpack kernels round differently: their outputs are not shared.
            self._identity["quantized_engine"] = str(torch.backends.quantized.engine)
        if compile:
            self._identity["compile"] = True
        self.batches_computed = 0
        """Forward passes run so far (tests check that cached pairs are not recomputed)."""
        self.pairs_computed = 0

    def describe(self) -> dict[str, Any]:
        """What to record beside the results (threads, quantize, compile only when set)."""
        described: dict[str, Any] = {
            "backend": "hf-nli",
            "model": self.model_name_or_path,
            "revision": self.revision,
            "device": self.device,
            "dtype": dtype_name(self.dtype),
        }
        if self.threads is not None:
            described["torch_threads"] = self.threads
        speed = ("quantize", "quantized_engine", "compile")
        return described | {key: self._identity[key] for key in speed if key in self._identity}

    def encode(self, pairs: Sequence[Pair]) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        """Tokenize every pair once, unpadded: flat token arrays per input name, offsets, lengths;
        a long pair is truncated hypothesis first (``only_second``, else ``longest_first``)."""
        chunks = [
            self._encode_chunk(pairs[start : start + ENCODE_CHUNK])
            for start in range(0, len(pairs), ENCODE_CHUNK)
        ]
        self.last_truncated = np.concatenate([cut for _, _, cut in chunks]) if chunks else np.zeros(0, bool)
        if not chunks:
            return {}, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)
        lengths = np.concatenate([chunk_lengths for _, chunk_lengths, _ in chunks])
        offsets = np.zeros(len(pairs) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = {key: np.concatenate([chunk[key] for chunk, _, _ in chunks]) for key in chunks[0][0]}
        return flat, offsets, lengths

    def _encode_chunk(self, pairs: Sequence[Pair]) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        options = {
            "padding": False,
            "return_attention_mask": False,
            "return_token_type_ids": self._with_token_types,
            "verbose": False,
        }
        encoded = self._encode_untruncated(pairs, options)
        truncated = np.zeros(len(pairs), dtype=bool)
        for i, ids in enumerate(encoded["input_ids"]):
            if len(ids) > self.max_length:
                truncated[i] = True
                shortened = self._truncate(pairs[i][0], pairs[i][1], options)
                for key in encoded:
                    encoded[key][i] = shortened[key]
        lengths = np.fromiter((len(ids) for ids in encoded["input_ids"]), dtype=np.int64, count=len(pairs))
        total = int(lengths.sum())
        flat = {
            key: np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=total)
            for key, rows in encoded.items()
        }
        return flat, lengths, truncated

    def _encode_untruncated(self, pairs: Sequence[Pair], options: dict[str, Any]) -> dict[str, list[Any]]:
        """Token (type) ids of each pair, untruncated; a fast tokenizer's Rust backend is called
        directly (``tokenizer(...)`` adds a one-thread conversion loop: 16-18% of an audit)."""
        backend = getattr(self.tokenizer, "backend_tokenizer", None)
        if backend is None:
            premises, hypotheses = ([pair[k] for pair in pairs] for k in (0, 1))
            return dict(self.tokenizer(premises, hypotheses, truncation=False, **options))
        # A call with truncation (:meth:`_truncate`) leaves it set on the shared backend.
        if backend.truncation is not None:
            backend.no_truncation()
        if backend.padding is not None:
            backend.no_padding()
        encode = getattr(backend, "encode_batch_fast", backend.encode_batch)  # fast: no offsets
        encodings = encode(list(pairs), add_special_tokens=True)
        encoded = {"input_ids": [encoding.ids for encoding in encodings]}
        if self._with_token_types:
            encoded["token_type_ids"] = [encoding.type_ids for encoding in encodings]
        return encoded

    def _truncate(self, premise: str, hypothesis: str, options: dict[str, Any]) -> dict[str, Any]:
        tokenize = functools.partial(
            self.tokenizer, premise, hypothesis, max_length=self.max_length, **options
        )
        try:
            return dict(tokenize(truncation="only_second"))
        except Exception:  # the premise alone is longer than max_length: the tokenizer refuses
            return dict(tokenize(truncation="longest_first"))

    def _pad(
        self, flat: Mapping[str, np.ndarray], offsets: np.ndarray, lengths: np.ndarray, batch: np.ndarray
    ) -> dict[str, Any]:
        """Right-pad one batch to its longest pair, vectorised (no Python loop over its rows)."""
        import torch

        batch_lengths = lengths[batch]
        width = int(batch_lengths.max())
        columns = np.arange(width)
        mask = columns[None, :] < batch_lengths[:, None]
        positions = np.minimum(offsets[batch][:, None] + columns[None, :], max(int(offsets[-1]) - 1, 0))
        inputs = {
            key: torch.from_numpy(np.where(mask, values[positions], self._pad_values.get(key, 0))).to(
                self.device
            )
            for key, values in flat.items()
        }
        inputs["attention_mask"] = torch.from_numpy(mask.astype(np.int64)).to(self.device)
        return inputs

    def predict_batches(self, pairs: Sequence[Pair]) -> Iterator[BatchResult]:
        """Probabilities in LABELS order, batch by batch (longest batch first)."""
        import torch

        if not pairs:
            return
        flat, offsets, lengths = self.encode(pairs)
        for batch in plan_batches(lengths, max_tokens=self.max_tokens, max_batch_size=self.max_batch_size):
            inputs = self._pad(flat, offsets, lengths, batch)
            with torch.inference_mode():
                logits = self.model(**inputs).logits
                probs = torch.softmax(logits.float(), dim=-1)[:, self._column_order]
            self.batches_computed += 1
            self.pairs_computed += len(batch)
            yield BatchResult(
                indices=batch,
                probs=probs.cpu().numpy().astype(np.float64),
                real_tokens=int(lengths[batch].sum()),
                padded_tokens=int(lengths[batch].max()) * len(batch),
                truncated=int(self.last_truncated[batch].sum()),
            )
