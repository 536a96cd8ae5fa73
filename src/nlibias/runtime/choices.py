"""A generative LM asked multiple-choice questions (BBQ): ``scored``, the most probable option;
``generated``, the reply read as an option (unmatched: ``None``)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from nlibias.benchmarks.bbq import read_answer
from nlibias.errors import ConfigError
from nlibias.models.generative.option_scoring import OptionScores, option_batches
from nlibias.models.generative.prompts import BINARY_ANSWERS
from nlibias.runtime.contract import PredictorRun
from nlibias.runtime.loop import ComputedBatch, cached_outputs
from nlibias.schema import Prediction

if TYPE_CHECKING:
    from nlibias.benchmarks.base import BenchmarkSamples
    from nlibias.runtime.cache import PredictionCache
    from nlibias.runtime.generative import GenerativePredictor


def sample_options(samples: BenchmarkSamples) -> tuple[list[list[str]], list[list[str]]]:
    provenance = samples.columns.provenance
    if "answers" not in provenance:
        raise ConfigError(
            f"a multiple-choice prompt style needs samples with options; the {samples.benchmark.name} "
            "samples have none: ask with a yes/no style",
            parameter="prompts",
        )
    options = [list(o) for o in provenance["answers"].tolist()]
    words = provenance.get("answer_words")
    return options, [list(w) for w in words.tolist()] if words is not None else options


def predict_choices(
    predictor: GenerativePredictor,
    samples: BenchmarkSamples,
    cache: PredictionCache | None,
    *,
    progress: bool = True,
) -> PredictorRun:
    started = time.perf_counter()
    options, words = sample_options(samples)
    texts = [predictor.prompt.render(p, h, o) for (p, h), o in zip(samples.texts(), options, strict=True)]
    keys = [(text, *opts) for text, opts in zip(texts, options, strict=True)]
    unique = list(dict.fromkeys(keys))
    mode = predictor.mode

    def compute(todo: list[tuple[str, ...]]) -> Iterator[ComputedBatch]:
        prompts = [item[0] for item in todo]
        if mode == "scored":
            for batch in option_batches(predictor.backend, prompts, [item[1:] for item in todo]):
                records = [s.to_json() for s in batch.scores]
                yield ComputedBatch(batch.indices, records, batch.real_tokens, batch.padded_tokens)
            return
        for answered in predictor.backend.answer_batches(
            prompts, answers=BINARY_ANSWERS, mode="generated", max_new_tokens=predictor.max_new_tokens
        ):
            yield ComputedBatch(answered.indices, [{"text": r.text or ""} for r in answered.records])

    identity = {**predictor.answer_identity(), "answers": "multiple-choice"}
    if mode == "scored":  # options are scored, never generated (a server's scores are echoed)
        identity.pop("max_new_tokens", None)
    run = cached_outputs(
        predictor.name, unique, identity, compute, cache, to_json=dict, from_json=dict,
        valid=_valid(mode), progress=progress, unit="question",
    )  # fmt: skip
    found = dict(zip(unique, run.outputs, strict=True))
    rows = [
        _row(predictor, sample_id, found[key], opts, answer_words)
        for sample_id, key, opts, answer_words in zip(samples.columns.ids, keys, options, words, strict=True)
    ]
    stats = {
        **run.stats(time.perf_counter() - started),
        "n_unparsed": sum(row.extra["choice"] is None for row in rows),
        "mode": mode,
        "prompt": predictor.prompt.name,
    }
    return PredictorRun.of_predictions(rows, predictor.kind, stats)


def _valid(mode: str) -> Any:
    def valid(value: Any) -> bool:
        if mode != "scored":
            return isinstance(value, dict) and isinstance(value.get("text"), str)
        try:
            OptionScores.from_json(value)
        except (KeyError, TypeError, ValueError):
            return False
        return True

    return valid


def _row(
    predictor: GenerativePredictor,
    sample_id: str,
    found: dict[str, Any],
    options: Sequence[str],
    words: Sequence[str],
) -> Prediction:
    extra: dict[str, Any] = {"kind": predictor.kind, "prompt": predictor.prompt.name, "mode": predictor.mode}
    if predictor.mode == "scored":
        scores = OptionScores.from_json(found)
        best = scores.choice(options, predictor.option_score)
        extra |= {"option_logprobs": list(scores.logprobs), "option_tokens": list(scores.tokens)}
        extra["option_score"] = predictor.option_score
        choice: int | None = best
        text = options[best]
    else:
        text = found["text"]
        choice = read_answer(text, options, words)
        if choice is None:
            extra["answer_status"] = "unmatched"
    extra |= {"choice": choice, "answer_text": text}
    return Prediction(sample_id=sample_id, model=predictor.name, label=None, extra=extra)
