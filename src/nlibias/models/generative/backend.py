"""Generative LM backends (a Hugging Face causal LM, an OpenAI-compatible server, or the
:class:`FakeGenerativeBackend`) and :func:`build_backend` from a spec string.
>>> build_backend("fake:demo").name
'demo'
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

from nlibias.errors import ConfigError
from nlibias.models.generative import hf_causal
from nlibias.models.generative.answers import generated_record
from nlibias.models.generative.defaults import DEFAULT_MAX_NEW_TOKENS
from nlibias.models.generative.http_client import server_address
from nlibias.models.generative.openai_http import OpenAICompatibleLM
from nlibias.models.generative.records import AnswerBatch, AnswerRecord
from nlibias.models.generative.sources import SMOLLM2_NAME, local_source
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.model_keys import GenerativeMode
from nlibias.schema.model_ref import ModelRef

__all__ = ["AnswerBatch", "AnswerRecord", "FakeGenerativeBackend", "GenerativeBackend", "build_backend"]


@runtime_checkable
class GenerativeBackend(Protocol):
    """Answers user prompts with yes/no (/maybe); ``scored_uses_generation``: a scored answer may
    fall back to generated text (``max_new_tokens`` keys the cache)."""

    name: str
    scored_uses_generation: bool

    def identity(self) -> Mapping[str, Any]: ...

    def answer_batches(
        self,
        prompts: Sequence[str],
        *,
        answers: tuple[str, ...],
        mode: GenerativeMode = "scored",
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    ) -> Iterator[AnswerBatch]: ...


@dataclass
class FakeGenerativeBackend:
    """A deterministic stand-in: answers from a hash of the prompt; ``calls`` counts them.
    >>> next(FakeGenerativeBackend().answer_batches(["q"], answers=("yes", "no"))).records[0].method
    'scored'
    """

    name: str = "fake"
    seed: int = 0
    batch_size: int = 8
    scored_uses_generation: bool = False
    calls: int = field(default=0, compare=False)

    TEXTS: ClassVar[tuple[str, ...]] = (
        "Yes, the hypothesis is true.",
        "No. The paragraph does not say so.",
        "**No**",
        "I cannot determine that from the paragraph.",
    )

    def identity(self) -> Mapping[str, Any]:
        return {"backend": "fake-generative", "name": self.name, "seed": self.seed}

    def answer_batches(
        self,
        prompts: Sequence[str],
        *,
        answers: tuple[str, ...],
        mode: GenerativeMode = "scored",
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    ) -> Iterator[AnswerBatch]:
        for start in range(0, len(prompts), self.batch_size):
            chunk = range(start, min(start + self.batch_size, len(prompts)))
            records = []
            for i in chunk:
                digest = hashlib.sha256(f"{self.seed}\x00{prompts[i]}".encode()).digest()
                value = int.from_bytes(digest[:8], "big")
                self.calls += 1
                if mode == "scored":
                    raw = np.array([(value >> (8 * k)) % 251 + 1 for k in range(len(answers))], dtype=float)
                    probs = raw / raw.sum()
                    by_word = {w: float(p) for w, p in zip(answers, probs, strict=True)}
                    records.append(
                        AnswerRecord(answers[int(np.argmax(probs))], probs=by_word, answer_mass=0.5)
                    )
                else:
                    records.append(generated_record(self.TEXTS[value % len(self.TEXTS)], answers))
            yield AnswerBatch(indices=list(chunk), records=records)


LOCAL_OPTIONS = frozenset(
    {"device", "dtype", "max_batch_tokens", "max_batch_size", "use_chat_template", "convert_cache"}
)
HTTP_OPTIONS = frozenset(f.name for f in fields(OpenAICompatibleLM) if f.init) - {
    "base_url",
    "model",
    "api",
    "name",
    "scored_uses_generation",
}


def build_backend(spec: str | ModelRef, *, name: str | None = None, **options: Any) -> GenerativeBackend:
    """A backend from a spec: ``smollm2``, ``hf:NAME_OR_PATH`` or a bare name (``NAME@REV``),
    ``gguf:PATH``, ``openai[-completions]:URL#MODEL``, ``fake:NAME``."""
    options = {key: value for key, value in options.items() if value is not None}
    ref = spec if isinstance(spec, ModelRef) else ModelRef.unread(spec)
    spec = str(ref)
    is_http = ref.is_server
    wrong = sorted(set(options) & (LOCAL_OPTIONS if is_http else HTTP_OPTIONS))
    if wrong and ref.kind != "fake":
        kind = "local models (smollm2, hf:, gguf:)" if is_http else "servers (openai:URL#MODEL)"
        raise option_applies_to_nothing(
            wrong[0], f"{kind}, not to {spec!r}", subject=f"option(s) {', '.join(wrong)}", plural=True
        )
    if ref.kind == "fake":
        return FakeGenerativeBackend(name=name or ref.name or "fake")
    if is_http:
        url, model = server_address(ref, "spec")
        api: Literal["chat", "completions"] = "completions" if ref.kind == "openai-completions" else "chat"
        return OpenAICompatibleLM(url, model, api=api, name=name or "", **options)
    target = ref.name if ref.kind in ("hf", "gguf") else spec
    if not target and ref.kind != "gguf":
        raise ConfigError(
            "empty model spec; use smollm2, hf:NAME_OR_PATH, gguf:PATH or openai:URL#MODEL", parameter="spec"
        )
    source = hf_causal.CausalLMSource.from_gguf(target) if ref.kind == "gguf" else local_source(target)
    default_name = source.gguf_file or source.name_or_path.rstrip("/").split("/")[-1]
    if not source.gguf_file and "/" in target and not target.startswith(("/", ".", "~")):
        default_name = source.name_or_path  # hub names keep their organisation
    return hf_causal.HFCausalLM(
        source, name=name or ("smollm2" if spec == SMOLLM2_NAME else default_name), **options
    )
