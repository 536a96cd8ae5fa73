"""Generative LMs as audit predictors: one predictor per (model, prompt style, answer mode).

A :class:`GenerativeBackend` answers user prompts (a Hugging Face causal LM, an OpenAI-compatible
server, or the deterministic :class:`FakeGenerativeBackend`); a :class:`GenerativePredictor`
renders each sample with a prompt style, asks the backend through the prediction cache, and turns
answer words into labels (binary: yes = entailment, no = neutral; 3-way: yes / maybe / no =
entailment / neutral / contradiction; unparsed = ``None``).

Answer modes: ``scored`` reads the answer words' probabilities at the answer position in one
forward pass (default for local models); ``generated`` decodes text greedily and parses it.

The cache key is the backend identity plus the answer settings plus the exact user prompt, so the
same question is never asked twice and a killed run resumes where it stopped.

>>> predictors = build_generative_predictors("fake:demo", ["true", "entailed"])
>>> [p.name for p in predictors]
['demo|prompt=true|scored', 'demo|prompt=entailed|scored']
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

from nlibias.backends.base import PredictorRun
from nlibias.cache import cache_key, identity_fingerprint
from nlibias.errors import ConfigError
from nlibias.prompts import PromptStyle, resolve_prompt_styles
from nlibias.schema import Prediction, Sample

if TYPE_CHECKING:
    from nlibias.cache import PredictionCache

GenerativeMode = Literal["scored", "generated"]
MODES: tuple[str, ...] = ("scored", "generated")
DEFAULT_MAX_NEW_TOKENS = 64


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
    """How the answer was read: ``scored`` or the parser rule (:mod:`nlibias.answers`)."""
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


@runtime_checkable
class GenerativeBackend(Protocol):
    """Something that answers user prompts with yes/no (/maybe).

    ``identity()`` returns everything that determines the answers (computed without loading a
    model). ``answer_batches`` yields answers as they are computed so that each can be cached at
    once. ``scored_uses_generation`` is True when a scored answer may fall back to generated text
    (a server without log-probabilities), so ``max_new_tokens`` belongs in the cache key.
    """

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


def model_key(model: str, prompt: str, mode: str) -> str:
    """The ``metrics.json`` key of a generative predictor.

    >>> model_key("smollm2", "true", "scored")
    'smollm2|prompt=true|scored'
    """
    return f"{model}|prompt={prompt}|{mode}"


def split_model_key(key: str) -> tuple[str, str, str] | None:
    """``(model, prompt style, mode)`` of a generative model key, ``None`` for other keys.

    >>> split_model_key("smollm2|prompt=entailed|generated")
    ('smollm2', 'entailed', 'generated')
    >>> split_model_key("roberta-large-mnli") is None
    True
    """
    parts = key.rsplit("|", 2)
    if len(parts) != 3 or not parts[1].startswith("prompt=") or parts[2] not in MODES:
        return None
    return parts[0], parts[1][len("prompt=") :], parts[2]


class GenerativePredictor:
    """The :class:`~nlibias.backends.base.Predictor` of one (backend, prompt style, mode).

    >>> from nlibias.prompts import PROMPT_STYLES
    >>> sample = Sample(id="a", source="bbnli", domain="gender", subtopic="t", premise="P.",
    ...                 hypothesis="H.", gold="neutral", stereotype="pro", pair_key="k")
    >>> run = GenerativePredictor(FakeGenerativeBackend(), PROMPT_STYLES["true"]).predict(
    ...     [sample], None, progress=False)
    >>> run.predictions[0].label in ("entailment", "neutral")
    True
    """

    def __init__(
        self,
        backend: GenerativeBackend,
        prompt: PromptStyle,
        *,
        mode: GenerativeMode = "scored",
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        cache: PredictionCache | None = None,
    ) -> None:
        if mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.backend = backend
        self.prompt = prompt
        self.mode: GenerativeMode = mode
        self.max_new_tokens = max_new_tokens
        self.default_cache = cache
        self.name = model_key(backend.name, prompt.name, mode)

    def answer_identity(self) -> dict[str, Any]:
        """Backend identity plus the settings that change answers (the cache fingerprint's input)."""
        identity: dict[str, Any] = {
            "backend": dict(self.backend.identity()),
            "mode": self.mode,
            "answers": list(self.prompt.answers),
        }
        if self.mode == "generated" or self.backend.scored_uses_generation:
            identity["max_new_tokens"] = self.max_new_tokens
        return identity

    def describe(self) -> Mapping[str, Any]:
        return {
            "kind": "generative",
            "model": self.backend.name,
            "identity": self.answer_identity(),
            "prompt": {
                "name": self.prompt.name,
                "template": self.prompt.template,
                "answers": list(self.prompt.answers),
                "origin": self.prompt.origin,
            },
            "mode": self.mode,
            "max_new_tokens": self.max_new_tokens,
            "labels": self.prompt.labels,
        }

    def predict(
        self, samples: Sequence[Sample], cache: PredictionCache | None, *, progress: bool = True
    ) -> PredictorRun:
        """Answer every sample (cached answers are reused; new ones are committed per batch)."""
        started = time.perf_counter()
        cache = cache if cache is not None else self.default_cache
        texts = [self.prompt.render(s.premise, s.hypothesis) for s in samples]
        unique = list(dict.fromkeys(texts))
        identity = self.answer_identity()
        fingerprint = identity_fingerprint(identity)
        keys = [cache_key(fingerprint, text) for text in unique]
        found = cache.get_many(keys) if cache is not None else {}
        records: dict[str, AnswerRecord] = {
            text: AnswerRecord.from_json(found[key])
            for text, key in zip(unique, keys, strict=True)
            if key in found
        }
        if cache is not None:
            cache.register_identity(fingerprint, identity)
        missing = [i for i, text in enumerate(unique) if text not in records]
        real = padded = 0
        if missing:
            from tqdm.auto import tqdm

            todo = [unique[i] for i in missing]
            with tqdm(
                total=len(todo), unit="prompt", desc=self.name, disable=not progress, leave=False
            ) as bar:
                for batch in self.backend.answer_batches(
                    todo, answers=self.prompt.answers, mode=self.mode, max_new_tokens=self.max_new_tokens
                ):
                    rows = []
                    for position, record in zip(batch.indices, batch.records, strict=True):
                        target = missing[int(position)]
                        records[unique[target]] = record
                        rows.append((keys[target], record.to_json()))
                    if cache is not None:
                        cache.put_many(rows, fingerprint=fingerprint)
                    real += batch.real_tokens
                    padded += batch.padded_tokens
                    bar.update(len(rows))
        absent = [text for text in unique if text not in records]
        if absent:
            raise RuntimeError(f"{self.name}: the backend returned no answer for {len(absent)} prompts")
        predictions = [
            self._prediction(sample, records[text]) for sample, text in zip(samples, texts, strict=True)
        ]
        seconds = time.perf_counter() - started
        unparsed = sum(p.label is None for p in predictions)
        stats = {
            "unique_inputs": len(unique),
            "cached": len(unique) - len(missing),
            "computed": len(missing),
            "seconds": round(seconds, 3),
            "pairs_per_second": round(len(missing) / seconds, 2) if seconds > 0 else 0.0,
            "real_tokens": real,
            "padded_tokens": padded,
            "padding_efficiency": round(real / padded, 4) if padded else 1.0,
            "n_unparsed": unparsed,
            "mode": self.mode,
            "prompt": self.prompt.name,
        }
        return PredictorRun(predictions=predictions, stats=stats)

    def _prediction(self, sample: Sample, record: AnswerRecord) -> Prediction:
        label = self.prompt.label_of(record.answer)
        probs: tuple[float, float, float] | None = None
        if record.probs is not None:
            by_label = {"entailment": 0.0, "neutral": 0.0, "contradiction": 0.0}
            for word, p in record.probs.items():
                by_label[self.prompt.labels[word]] += float(p)
            probs = (by_label["entailment"], by_label["neutral"], by_label["contradiction"])
        extra: dict[str, Any] = {
            "prompt": self.prompt.name,
            "mode": self.mode,
            "answer": record.answer,
            "answer_rule": record.rule,
            "answer_method": record.method,
            "answers": "/".join(self.prompt.answers),
        }
        if record.probs is not None:
            extra["answer_probs"] = dict(record.probs)
        if record.answer_mass is not None:
            extra["answer_mass"] = record.answer_mass
        if record.text is not None:
            extra["text"] = record.text
        return Prediction(sample_id=sample.id, model=self.name, label=label, probs=probs, extra=extra)


@dataclass
class FakeGenerativeBackend:
    """A deterministic stand-in for tests: answers depend only on a hash of the prompt.

    Scored answers get probabilities from the hash; generated answers are one of a few real-world
    answer texts (one unparseable). ``calls`` counts prompts actually answered.

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

    def _hash(self, prompt: str) -> int:
        return int.from_bytes(hashlib.sha256(f"{self.seed}\x00{prompt}".encode()).digest()[:8], "big")

    def answer_batches(
        self,
        prompts: Sequence[str],
        *,
        answers: tuple[str, ...],
        mode: GenerativeMode = "scored",
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    ) -> Iterator[AnswerBatch]:
        from nlibias.answers import parse_answer

        for start in range(0, len(prompts), self.batch_size):
            chunk = range(start, min(start + self.batch_size, len(prompts)))
            records = []
            for i in chunk:
                value = self._hash(prompts[i])
                self.calls += 1
                if mode == "scored":
                    raw = np.array([(value >> (8 * k)) % 251 + 1 for k in range(len(answers))], dtype=float)
                    probs = raw / raw.sum()
                    best = answers[int(np.argmax(probs))]
                    records.append(
                        AnswerRecord(
                            best,
                            probs={w: float(p) for w, p in zip(answers, probs, strict=True)},
                            answer_mass=0.5,
                        )
                    )
                else:
                    text = self.TEXTS[value % len(self.TEXTS)]
                    parsed = parse_answer(text, answers)
                    records.append(
                        AnswerRecord(parsed.answer, text=text, rule=parsed.rule, method="generated")
                    )
            yield AnswerBatch(indices=list(chunk), records=records)


LOCAL_OPTIONS = frozenset(
    {"device", "dtype", "max_batch_tokens", "max_batch_size", "use_chat_template", "convert_cache"}
)
HTTP_OPTIONS = frozenset(
    {
        "concurrency",
        "timeout",
        "max_retries",
        "backoff",
        "backoff_max",
        "api_key_env",
        "top_logprobs",
        "sleep",
    }
)


SERVER_SCHEMES = ("openai:", "openai-completions:")


def is_server_spec(spec: str) -> bool:
    """Whether ``spec`` names a model behind an OpenAI-compatible server (which batches and
    places the model itself), not a local one.

    >>> is_server_spec("openai:http://host:8000/v1#m"), is_server_spec("openai-community/gpt2")
    (True, False)
    """
    return spec.startswith(SERVER_SCHEMES)


def build_backend(spec: str, *, name: str | None = None, **options: Any) -> GenerativeBackend:
    """A backend from a CLI spec string.

    ``smollm2`` (embedded default) · ``hf:NAME_OR_PATH`` or a bare name/path (``NAME@REV`` pins a
    hub revision) · ``gguf:PATH`` · ``openai:http://HOST:PORT/v1#MODEL`` (chat completions) ·
    ``openai-completions:URL#MODEL`` (text completions) · ``fake:NAME`` (tests). ``options`` go to
    the backend (local: ``device``, ``dtype``, ``max_batch_tokens``, ``max_batch_size``; HTTP:
    ``concurrency``, ``timeout``, ``max_retries``, ``backoff``, ``api_key_env``, ``top_logprobs``).
    Options set to ``None`` are left at their defaults; an option of the other kind of backend is
    refused with a message that says which backends take it.
    """
    from nlibias.backends import hf_causal

    options = {key: value for key, value in options.items() if value is not None}
    is_http = is_server_spec(spec)
    wrong = sorted(set(options) & (LOCAL_OPTIONS if is_http else HTTP_OPTIONS))
    if wrong and not spec.startswith("fake:"):
        kind = "local models (smollm2, hf:, gguf:)" if is_http else "servers (openai:URL#MODEL)"
        raise ConfigError(f"option(s) {', '.join(wrong)} apply to {kind}, not to {spec!r}")
    if spec.startswith("fake:"):
        return FakeGenerativeBackend(name=name or spec[len("fake:") :] or "fake")
    if is_http:
        from nlibias.backends.openai_http import OpenAICompatibleLM

        scheme, _, rest = spec.partition(":")
        url, _, model = rest.partition("#")
        if not url.startswith(("http://", "https://")) or not model:
            raise ConfigError(
                f"cannot read {spec!r}: write openai:http://HOST:PORT/v1#MODEL (the model name after '#')"
            )
        api: Literal["chat", "completions"] = "completions" if scheme == "openai-completions" else "chat"
        return OpenAICompatibleLM(url, model, api=api, name=name or "", **options)
    if spec == hf_causal.SMOLLM2_NAME:
        return hf_causal.HFCausalLM(hf_causal.CausalLMSource.smollm2(), name=name or "smollm2", **options)
    if spec.startswith("gguf:"):
        source = hf_causal.CausalLMSource.from_gguf(spec[len("gguf:") :])
        return hf_causal.HFCausalLM(source, name=name, **options)
    target = spec[len("hf:") :] if spec.startswith("hf:") else spec
    if not target:
        raise ConfigError("empty model spec; use smollm2, hf:NAME_OR_PATH, gguf:PATH or openai:URL#MODEL")
    source = hf_causal.local_source(target)
    default_name = source.gguf_file or source.name_or_path.rstrip("/").split("/")[-1]
    if not source.gguf_file and "/" in target and not target.startswith(("/", ".", "~")):
        default_name = source.name_or_path  # hub names keep their organisation
    return hf_causal.HFCausalLM(source, name=name or default_name, **options)


def build_generative_predictors(
    spec: str,
    prompts: Sequence[str],
    *,
    mode: str = "scored",
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    cache: PredictionCache | None = None,
    name: str | None = None,
    **backend_options: Any,
) -> list[GenerativePredictor]:
    """One predictor per prompt style, sharing one backend (a model is loaded once, lazily).

    ``prompts``: built-in style names (``true``, ``entailed``) or prompt files; empty means both
    paper styles. ``cache`` is used when ``predict`` is called without one.

    >>> [p.name for p in build_generative_predictors("fake:m", ["true"], mode="generated")]
    ['m|prompt=true|generated']
    """
    if mode not in MODES:
        raise ConfigError(f"--mode must be one of {', '.join(MODES)}, got {mode!r}")
    checked_mode: GenerativeMode = "scored" if mode == "scored" else "generated"
    styles = resolve_prompt_styles(list(prompts))
    backend = build_backend(spec, name=name, **backend_options)
    return [
        GenerativePredictor(backend, style, mode=checked_mode, max_new_tokens=max_new_tokens, cache=cache)
        for style in styles
    ]
