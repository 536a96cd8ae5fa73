"""Generative LMs as audit predictors, one per (backend, prompt style, mode); answers as labels.

>>> from nlibias.models.generative.prompts import PROMPT_STYLES
>>> predictors = build_generative_predictors("fake:demo", list(PROMPT_STYLES.values()))
>>> [p.name for p in predictors]
['demo|prompt=true|scored', 'demo|prompt=entailed|scored']
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from nlibias.models.generative.answers import parse_answer
from nlibias.models.generative.backend import AnswerRecord, GenerativeBackend, build_backend
from nlibias.models.generative.defaults import DEFAULT_MAX_NEW_TOKENS, OptionScore
from nlibias.models.generative.prompts import PromptStyle
from nlibias.runtime.cache import PredictionCache, is_probability_row
from nlibias.runtime.choices import predict_choices
from nlibias.runtime.contract import PredictorRun
from nlibias.runtime.loop import ComputedBatch, cached_outputs
from nlibias.schema import Prediction
from nlibias.schema.model_keys import GenerativeMode, check_mode, model_key
from nlibias.schema.model_ref import ModelRef
from nlibias.schema.prediction_rows import PROBABILITY_TOLERANCE

if TYPE_CHECKING:
    from nlibias.benchmarks.base import BenchmarkSamples


class GenerativePredictor:
    """The predictor of one (backend, prompt style, mode)."""

    def __init__(
        self,
        backend: GenerativeBackend,
        prompt: PromptStyle,
        *,
        mode: GenerativeMode = "scored",
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        option_score: OptionScore = "total",
        cache: PredictionCache | None = None,
    ) -> None:
        self.backend = backend
        self.prompt = prompt
        self.mode: GenerativeMode = check_mode(mode)
        self.max_new_tokens = max_new_tokens
        self.option_score = option_score
        self.default_cache = cache
        self.name = model_key(backend.name, prompt.name, mode)
        self.kind: str = "generative"

    def answer_identity(self) -> dict[str, Any]:
        identity: dict[str, Any] = {
            "backend": dict(self.backend.identity()),
            "mode": self.mode,
            "answers": list(self.prompt.answers),
        }
        if self.mode == "generated" or self.backend.scored_uses_generation:
            identity["max_new_tokens"] = self.max_new_tokens
        return identity

    def describe(self) -> Mapping[str, Any]:
        loaded_dtype = getattr(self.backend, "loaded_dtype", None)
        return {
            "kind": "generative",
            **({"dtype": loaded_dtype} if isinstance(loaded_dtype, str) else {}),
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
            **({"option_score": self.option_score} if self.prompt.choices and self.mode == "scored" else {}),
            "labels": self.prompt.labels,
        }

    def predict(
        self, samples: BenchmarkSamples, cache: PredictionCache | None, *, progress: bool = True
    ) -> PredictorRun:
        if self.prompt.choices:
            return predict_choices(self, samples, cache, progress=progress)
        started = time.perf_counter()
        cache = cache if cache is not None else self.default_cache
        texts = [self.prompt.render(premise, hypothesis) for premise, hypothesis in samples.texts()]
        unique = list(dict.fromkeys(texts))

        def compute(todo: list[tuple[str, ...]]) -> Iterator[ComputedBatch]:
            for batch in self.backend.answer_batches(
                [text for (text,) in todo],
                answers=self.prompt.answers,
                mode=self.mode,
                max_new_tokens=self.max_new_tokens,
            ):
                yield ComputedBatch(batch.indices, batch.records, batch.real_tokens, batch.padded_tokens)

        run = cached_outputs(
            self.name,
            [(text,) for text in unique],
            self.answer_identity(),
            compute,
            cache,
            to_json=AnswerRecord.to_json,
            from_json=AnswerRecord.from_json,
            valid=is_answer_record,
            progress=progress,
            unit="prompt",
        )
        records = dict(zip(unique, map(self._read_again, run.outputs), strict=True))
        predictions = [
            self._prediction(sample_id, records[text])
            for sample_id, text in zip(samples.columns.ids, texts, strict=True)
        ]
        seconds = time.perf_counter() - started
        stats = {
            **run.stats(seconds),
            "n_unparsed": sum(p.label is None for p in predictions),
            "mode": self.mode,
            "prompt": self.prompt.name,
        }
        return PredictorRun.of_predictions(predictions, self.kind, stats)

    def _read_again(self, record: AnswerRecord) -> AnswerRecord:
        """A generated answer as this parser reads its text."""
        if record.method != "generated" or record.text is None:
            return record
        parsed = parse_answer(record.text, self.prompt.answers)
        if (parsed.answer, parsed.rule) == (record.answer, record.rule):
            return record
        return replace(record, answer=parsed.answer, rule=parsed.rule)

    def _prediction(self, sample_id: str, record: AnswerRecord) -> Prediction:
        label = self.prompt.label_of(record.answer)
        probs: tuple[float, float, float] | None = None
        if record.probs is not None:
            by_label = {"entailment": 0.0, "neutral": 0.0, "contradiction": 0.0}
            for word, p in record.probs.items():
                by_label[self.prompt.labels[word]] += float(p)
            probs = (by_label["entailment"], by_label["neutral"], by_label["contradiction"])
        extra: dict[str, Any] = {
            "kind": self.kind,
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
        return Prediction(sample_id=sample_id, model=self.name, label=label, probs=probs, extra=extra)


def is_answer_record(value: Any) -> bool:
    """True for a usable cached answer record (well typed, the answer the most probable word).

    >>> is_answer_record({"answer": "yes", "probs": {"yes": 0.75, "no": 0.25}})
    True
    >>> is_answer_record({"answer": "yes", "probs": {"yes": 0.25, "no": 0.75}})
    False
    """
    if not isinstance(value, dict) or not all(
        value.get(key) is None or isinstance(value[key], str) for key in ("answer", "text", "rule", "method")
    ):
        return False  # a generated text is read again (_read_again): it must be a text
    probs = value.get("probs")
    if probs is not None and (
        not isinstance(probs, dict) or not is_probability_row(list(probs.values()), size=len(probs))
    ):
        return False
    answer = value.get("answer")
    if (
        probs
        and answer is not None
        and (
            answer not in probs
            or float(probs[answer]) < max(map(float, probs.values())) - PROBABILITY_TOLERANCE
        )
    ):
        return False
    mass = value.get("answer_mass")
    return mass is None or (isinstance(mass, int | float) and 0.0 <= mass <= 1.0 + 1e-6)


def build_generative_predictors(
    spec: str | ModelRef,
    styles: Sequence[PromptStyle],
    *,
    mode: str = "scored",
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    option_score: OptionScore = "total",
    cache: PredictionCache | None = None,
    name: str | None = None,
    **backend_options: Any,
) -> list[GenerativePredictor]:
    """One predictor per prompt style, sharing one backend (loaded once, lazily).

    >>> from nlibias.models.generative.prompts import PROMPT_STYLES
    >>> [p.name for p in build_generative_predictors("fake:m", [PROMPT_STYLES["true"]], mode="generated")]
    ['m|prompt=true|generated']
    """
    checked_mode = check_mode(mode)
    backend = build_backend(spec, name=name, **backend_options)
    return [
        GenerativePredictor(
            backend,
            style,
            mode=checked_mode,
            max_new_tokens=max_new_tokens,
            option_score=option_score,
            cache=cache,
        )
        for style in styles
    ]
