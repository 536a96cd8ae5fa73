"""``prompt:MODEL[?prompt=FILE]``: a causal LM asked for the three NLI labels with a prompt, scored
``yes`` / ``maybe`` / ``no`` as entailment / neutral / contradiction; the identity holds the prompt
file's SHA-256.

>>> PROMPT_LABELS
{'yes': 'entailment', 'maybe': 'neutral', 'no': 'contradiction'}
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from nlibias.errors import ConfigError, SourceError
from nlibias.models.base import BatchResult, Pair
from nlibias.models.batching import check_batch_limits
from nlibias.models.generative.hf_causal import HFCausalLM
from nlibias.models.generative.prompts import template_problem
from nlibias.models.generative.sources import local_source
from nlibias.models.hf_common import set_torch_threads
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.model_ref import ModelRef
from nlibias.textio.text_files import read_text

BACKEND_VERSION = 1
PROMPT_LABELS: dict[str, str] = {"yes": "entailment", "maybe": "neutral", "no": "contradiction"}
LABEL_WORDS: tuple[str, ...] = tuple(PROMPT_LABELS)
"""The label words in ``LABELS`` order (entailment, neutral, contradiction)."""


def load_nli_prompt(path: str | Path | None = None) -> tuple[str, str, Path]:
    """``(template, sha256 of the file, path)``; a template without ``{premise}`` and
    ``{hypothesis}`` (or with other placeholders) is refused, naming the file."""
    default = resources.files("nlibias") / "models" / "nli" / "prompts" / "nli_prompt.txt"
    file = Path(str(default if path is None else path)).expanduser()
    if not file.is_file():
        raise SourceError(
            file, None, "prompt file does not exist", fix="pass a text file with {premise} and {hypothesis}"
        )
    text = read_text(file)
    template = text.rstrip("\n")
    problem = template_problem(template)
    if problem is not None:
        raise SourceError(file, None, problem)
    return template, hashlib.sha256(file.read_bytes()).hexdigest(), file


class PromptedNLIClassifier:
    """A prompted causal LM as a 3-way NLI classifier; the LM loads on first use."""

    def __init__(
        self,
        model: str,
        *,
        prompt_file: str | Path | None = None,
        name: str | None = None,
        revision: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
        max_tokens: int = 4096,
        max_batch_size: int = 32,
        threads: int | None = None,
        label_map: Any = None,
        quantize: str | None = None,
        compile: bool | None = None,
    ) -> None:
        for option, value in (("label_map", label_map), ("quantize", quantize), ("compile", compile)):
            if value:
                raise option_applies_to_nothing(
                    option, f"sequence-classification models, not to a prompted LM ({model!r})"
                )
        check_batch_limits(max_tokens=max_tokens, max_batch_size=max_batch_size)
        ref = ModelRef.parse(model, parameter="model", allowed={"prompt"})
        base, options = ref.base, dict(ref.options)
        if "prompt" in options and prompt_file is not None:
            raise ConfigError(
                f"{model!r}: the prompt is given twice (spec and prompt_file)", parameter="model"
            )
        self.template, self.prompt_sha256, self.prompt_path = load_nli_prompt(
            options.get("prompt", prompt_file)
        )
        set_torch_threads(threads)
        pinned = not revision or ModelRef.unread(base).pinned[1] is not None
        source = local_source(base if pinned else f"{base}@{revision}")
        self.name = name or f"prompt:{model}"
        self.lm = HFCausalLM(
            source,
            name=base,
            device=device,
            dtype=dtype,
            max_batch_tokens=max_tokens,
            max_batch_size=max_batch_size,
        )
        self._identity: dict[str, Any] | None = None

    def identity(self) -> Mapping[str, Any]:
        if self._identity is None:
            self._identity = {
                "backend": "prompted-nli",
                "backend_version": BACKEND_VERSION,
                "lm": dict(self.lm.identity()),
                "prompt_sha256": self.prompt_sha256,
                "label_words": dict(PROMPT_LABELS),
            }
        return self._identity

    def describe(self) -> dict[str, Any]:
        return {
            **self.identity(),
            "name": self.name,
            "prompt_file": str(self.prompt_path),
            "device": self.lm.device,
        }

    def prompts(self, pairs: Sequence[Pair]) -> list[str]:
        """The user message of each pair (before the chat template)."""
        return [self.template.format(premise=p, hypothesis=h) for p, h in pairs]

    def predict_batches(self, pairs: Sequence[Pair]) -> Iterator[BatchResult]:
        """(entailment, neutral, contradiction) probabilities, batch by batch."""
        for batch in self.lm.answer_batches(self.prompts(pairs), answers=LABEL_WORDS, mode="scored"):
            rows = [[float((r.probs or {})[word]) for word in LABEL_WORDS] for r in batch.records]
            probs = np.array(rows, dtype=np.float64).reshape(len(rows), 3)
            yield BatchResult(
                indices=np.asarray(batch.indices, dtype=np.int64),
                probs=probs,
                real_tokens=batch.real_tokens,
                padded_tokens=batch.padded_tokens,
            )
