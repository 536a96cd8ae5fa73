"""Hugging Face causal LMs answering yes/no prompts, scored (one forward pass) or generated
(greedy). A GGUF file's dequantised weights are saved under ``$NLIBIAS_MODEL_CACHE`` on the first
load (reading GGUF is slow; the logits are bit-identical)."""

from __future__ import annotations

import copy
import functools
import os
import secrets
import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from platformdirs import user_cache_dir

from nlibias.errors import ConfigError, import_extra
from nlibias.models.batching import plan_batches
from nlibias.models.generative.answers import generated_record
from nlibias.models.generative.defaults import PLAIN_ANSWER_CUE
from nlibias.models.generative.prefix_sharing import PrefixBatch, Stage, group_by_prefix, plan_prefix_batches
from nlibias.models.generative.records import AnswerBatch
from nlibias.models.generative.scoring import (
    answer_records,
    padded_tensors,
    staged_last_logits,
    supports_staged_forward,
)
from nlibias.models.generative.sources import CausalLMSource, quick_file_hash
from nlibias.models.hf_common import choose_device, choose_dtype, dtype_kwargs, load_pretrained
from nlibias.models.library_bars import quiet_loading
from nlibias.schema.model_keys import GenerativeMode
from nlibias.textio.env_paths import env_path

MIN_PREFIX_SAVING = 0.2
"""Scored prompts run in stages (shared prefixes once) only when that saves at least this share
of the padded tokens of plain batches."""


#: Greedy decoding, whatever sampling settings the checkpoint ships.
_GREEDY: dict[str, Any] = {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}


def converted_models_dir() -> Path:
    """Where dequantised copies of GGUF models are kept."""
    return env_path("NLIBIAS_MODEL_CACHE") or Path(user_cache_dir("nlibias")) / "gguf-converted"


class HFCausalLM:
    """A Hugging Face causal LM that answers yes/no prompts, loaded on first use."""

    scored_uses_generation = False

    def __init__(
        self,
        source: CausalLMSource,
        *,
        name: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
        max_batch_tokens: int = 4096,
        max_batch_size: int = 32,
        use_chat_template: bool | None = None,
        convert_cache: bool = True,
        share_prefixes: bool = True,
        min_shared_prefix: int = 16,
    ) -> None:
        self.source = source
        self.convert_cache = convert_cache
        self.name = name or (source.gguf_file or Path(source.name_or_path).name or source.name_or_path)
        self._asked_device = device
        self._device: str | None = None
        self._dtype = dtype
        self.max_batch_tokens = max_batch_tokens
        self.max_batch_size = max_batch_size
        self.use_chat_template = use_chat_template
        self.share_prefixes = share_prefixes
        self.min_shared_prefix = min_shared_prefix
        self._model: Any = None
        self._tokenizer: Any = None
        self._identity: dict[str, Any] | None = None

    def identity(self) -> Mapping[str, Any]:
        if self._identity is None:
            self._identity = {
                "backend": "hf-causal",
                "model": self.source.name_or_path if self.source.gguf_file is None else self.name,
                **self.source.fingerprint(),
                "dtype": self._dtype or "auto",
                "prompt_format": {None: "auto", True: "chat", False: "plain"}[self.use_chat_template],
            }
        return self._identity

    @property
    def device(self) -> str:
        if self._device is None:  # chosen (and checked) when first needed: torch is imported then
            self._device = choose_device(self._asked_device)
        return self._device

    @property
    def loaded_dtype(self) -> str | None:
        """The dtype the weights were loaded in, None before :meth:`load`."""
        return None if self._model is None else str(self._model.dtype).removeprefix("torch.")

    def load(self) -> tuple[Any, Any]:
        """Load (once) and return ``(model, tokenizer)``; no network when the files are local."""
        if self._model is not None:
            return self._model, self._tokenizer
        transformers = import_extra(
            "transformers", "hf", use="a Hugging Face {generative} LM", parameter="generative"
        )
        AutoConfig, AutoModelForCausalLM = transformers.AutoConfig, transformers.AutoModelForCausalLM
        AutoTokenizer = transformers.AutoTokenizer
        kwargs: dict[str, Any] = {}
        location = self.source.name_or_path
        converted = self._converted_dir()
        if converted is not None and (converted / "model.safetensors").is_file():
            location = str(converted)
        elif self.source.gguf_file is not None:
            kwargs["gguf_file"] = self.source.gguf_file
        what = f"causal LM (gguf_file={self.source.gguf_file})" if "gguf_file" in kwargs else "causal LM"

        def read(loader: Any, **extra: Any) -> Any:
            return load_pretrained(
                loader, location, revision=self.source.revision, what=what, **kwargs, **extra
            )

        with quiet_loading(), _gguf_bar_follows_transformers():
            tokenizer = read(AutoTokenizer.from_pretrained)
            # a GGUF file's own dtype is float32 (dequantised), read from the file or its converted copy
            config = None if self.source.gguf_file is not None else read(AutoConfig.from_pretrained)
            dtype = choose_dtype(self.device, self._dtype, config)
            model = read(AutoModelForCausalLM.from_pretrained, config=config, **dtype_kwargs(dtype))
        if converted is not None and "gguf_file" in kwargs:
            _save_converted(model, tokenizer, converted)
        model.to(self.device).eval()
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        self._model, self._tokenizer = model, tokenizer
        return model, tokenizer

    @property
    def pad_id(self) -> int:
        """The id padding is written with (the EOS token's when the tokenizer has no pad token)."""
        pad = self.load()[1].pad_token_id
        return int(pad) if pad is not None else 0

    @property
    def bos(self) -> str:
        """The text a scored sentence starts from: the BOS token, else EOS ('' when neither)."""
        _, tokenizer = self.load()
        return str(tokenizer.bos_token or tokenizer.eos_token or "")

    def _converted_dir(self) -> Path | None:
        """Where this GGUF model's dequantised copy lives (``None``: none)."""
        if self.source.gguf_file is None or not self.convert_cache:
            return None
        weights = quick_file_hash(Path(self.source.name_or_path) / self.source.gguf_file)
        return (
            converted_models_dir() / f"{Path(self.source.gguf_file).stem}-{weights}-{self._dtype or 'auto'}"
        )

    @property
    def chat(self) -> bool:
        """Whether prompts go through the model's chat template."""
        _, tokenizer = self.load()
        has_template = bool(getattr(tokenizer, "chat_template", None))
        if self.use_chat_template and not has_template:
            raise ConfigError(
                f"{self.name} has no chat template; drop use_chat_template", parameter="use_chat_template"
            )
        return has_template if self.use_chat_template is None else self.use_chat_template

    def format_prompt(self, user_text: str) -> str:
        """The exact text the model reads for one user message (chat template applied)."""
        _, tokenizer = self.load()
        if self.chat:
            messages = [{"role": "user", "content": user_text}]
            return str(tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False))
        return user_text + PLAIN_ANSWER_CUE

    def encode_prompts(self, user_texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each formatted prompt (chat templates bring their own special tokens)."""
        _, tokenizer = self.load()
        texts = [self.format_prompt(text) for text in user_texts]
        encoded = tokenizer(texts, add_special_tokens=not self.chat)["input_ids"]
        return [list(ids) for ids in encoded]

    def answer_token_ids(self, answers: Sequence[str]) -> dict[str, tuple[int, ...]]:
        """The token ids of each answer word's single-token spellings (:meth:`answer_spellings`)."""
        spellings = self.answer_spellings(answers)
        return {word: tuple(sorted(token for _, token in pairs)) for word, pairs in spellings.items()}

    def answer_spellings(self, answers: Sequence[str]) -> dict[str, tuple[tuple[str, int], ...]]:
        """``(text, token id)`` of each single-token spelling of each word (``word``, ``Word``,
        ``WORD``, with and without a leading space; ids two words share count for neither)."""
        _, tokenizer = self.load()
        special = set(getattr(tokenizer, "all_special_ids", []) or [])
        found: dict[str, dict[int, str]] = {}
        for word in answers:
            found[word] = {}
            for variant in dict.fromkeys((word, word.capitalize(), word.upper())):
                for spaced in (variant, " " + variant):
                    tokens = tokenizer.encode(spaced, add_special_tokens=False)
                    if len(tokens) == 1 and int(tokens[0]) not in special:
                        found[word].setdefault(int(tokens[0]), spaced)
        for word in answers:
            others = set().union(*(found[w] for w in answers if w != word))
            found[word] = {token: text for token, text in found[word].items() if token not in others}
            if not found[word]:
                raise ConfigError(
                    f"{self.name}: the answer word {word!r} has no single-token spelling in this "
                    "tokenizer, so it cannot be scored in one forward pass; use mode='generated'",
                    parameter="mode",
                )
        return {word: tuple((text, token) for token, text in ids.items()) for word, ids in found.items()}

    def answer_batches(
        self,
        prompts: Sequence[str],
        *,
        answers: tuple[str, ...],
        mode: GenerativeMode = "scored",
        max_new_tokens: int = 64,
    ) -> Iterator[AnswerBatch]:
        if not prompts:
            return
        sequences = self.encode_prompts(prompts)
        lengths = np.array([len(s) for s in sequences])
        if mode == "scored":  # the mode was checked where the predictor was made (check_mode)
            yield from self._scored(sequences, lengths, answers)
        else:
            yield from self._generated(sequences, lengths, answers, max_new_tokens)

    def _scored(
        self, sequences: list[list[int]], lengths: np.ndarray, answers: tuple[str, ...]
    ) -> Iterator[AnswerBatch]:
        import torch

        model, _ = self.load()
        pad_id = self.pad_id
        token_ids = self.answer_token_ids(answers)
        planned = self.prefix_plan(sequences) if self.share_prefixes else None
        if planned is None:  # plain batches: each one stage
            batches = plan_batches(
                lengths, max_tokens=self.max_batch_tokens, max_batch_size=self.max_batch_size
            )
            planned = [PrefixBatch(b, (Stage(tuple(tuple(sequences[i]) for i in b)),)) for b in batches]
        for batch in planned:
            with torch.inference_mode():
                logits = staged_last_logits(model, batch.stages, pad_id, self.device)
                records = answer_records(logits, token_ids, answers)
            yield AnswerBatch(batch.indices, records, batch.real_tokens, batch.padded_tokens)

    def prefix_plan(self, sequences: Sequence[Sequence[int]]) -> list[PrefixBatch] | None:
        """Staged batches computing shared prefixes once, or ``None`` where they save too little."""
        model, _ = self.load()
        if not sequences or min(len(s) for s in sequences) < 2 or not supports_staged_forward(model):
            return None
        groups = group_by_prefix(sequences, min_prefix=self.min_shared_prefix)
        staged = plan_prefix_batches(
            sequences, groups, max_tokens=self.max_batch_tokens, max_batch_size=self.max_batch_size
        )
        lengths = np.array([len(s) for s in sequences])
        plain = plan_batches(lengths, max_tokens=self.max_batch_tokens, max_batch_size=self.max_batch_size)
        plain_cost = sum(int(lengths[b].max()) * len(b) for b in plain)
        staged_cost = sum(b.padded_tokens for b in staged)
        return staged if staged_cost <= (1 - MIN_PREFIX_SAVING) * plain_cost else None

    def _generated(
        self, sequences: list[list[int]], lengths: np.ndarray, answers: tuple[str, ...], max_new_tokens: int
    ) -> Iterator[AnswerBatch]:
        import torch

        model, tokenizer = self.load()
        eos = _eos_ids(model, tokenizer)
        pad_id = self.pad_id
        batches = plan_batches(
            lengths + max_new_tokens, max_tokens=self.max_batch_tokens, max_batch_size=self.max_batch_size
        )
        for batch in batches:
            rows = [sequences[i] for i in batch]
            input_ids, mask = padded_tensors(rows, pad_id, self.device, left=True)
            real, padded = sum(len(r) for r in rows), max(len(r) for r in rows) * len(rows)
            with torch.inference_mode():
                limits = {"max_new_tokens": max_new_tokens, "eos_token_id": eos, "pad_token_id": pad_id}
                output = model.generate(input_ids=input_ids, attention_mask=mask, **limits, **_GREEDY)
            kept = [_until_eos(row, eos) for row in output[:, input_ids.shape[1] :].cpu().tolist()]
            texts = tokenizer.batch_decode(kept, skip_special_tokens=True)
            records = [generated_record(t.strip(), answers, len(k)) for t, k in zip(texts, kept, strict=True)]
            yield AnswerBatch(indices=batch, records=records, real_tokens=real, padded_tokens=padded)


@contextmanager
def _gguf_bar_follows_transformers() -> Iterator[None]:
    """transformers' GGUF conversion bar, off while transformers' switch for bars is."""
    from transformers import modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging as transformers_logging

    bar = getattr(gguf_utils, "tqdm", None)
    if bar is None or transformers_logging.is_progress_bar_enabled():
        yield
        return
    gguf_utils.tqdm = functools.partial(bar, disable=True)  # type: ignore[assignment]
    try:
        yield
    finally:
        gguf_utils.tqdm = bar


def _save_converted(model: Any, tokenizer: Any, target: Path) -> None:
    """Save a GGUF-loaded model as plain safetensors (atomically; failures only cost speed)."""
    from safetensors.torch import save_model

    staging: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.parent / f".converting-{os.getpid()}-{secrets.token_hex(6)}"
        staging.mkdir()
        config = copy.deepcopy(model.config)
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        config.save_pretrained(staging)
        model.generation_config.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        save_model(model, str(staging / "model.safetensors"))
        if target.exists():
            shutil.rmtree(staging, ignore_errors=True)
        else:
            staging.rename(target)
    except OSError:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def _eos_ids(model: Any, tokenizer: Any) -> list[int]:
    ids: set[int] = set()
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    for value in (configured, tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return sorted(ids)


def _until_eos(tokens: list[int], eos: Sequence[int]) -> list[int]:
    for position, token in enumerate(tokens):
        if token in eos:
            return tokens[:position]
    return tokens
