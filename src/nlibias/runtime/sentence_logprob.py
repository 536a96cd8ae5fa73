"""Language models scoring sentence pairs as audit predictors, each distinct pair once."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nlibias.models.generative.http_client import server_address
from nlibias.models.tp.base import PairScore, SentenceScorer, check_variant
from nlibias.models.tp.hf import HFCausalScorer, HFMaskedScorer
from nlibias.models.tp.server import ServerScorer
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.contract import PredictorRun
from nlibias.runtime.loop import ComputedBatch, cached_outputs
from nlibias.schema import Prediction
from nlibias.schema.model_keys import PredictorKind, tp_model_key
from nlibias.schema.model_ref import CAUSAL_LM_KINDS, MASKED_LM_KINDS, ModelRef

if TYPE_CHECKING:
    from nlibias.benchmarks.base import BenchmarkSamples

KIND: PredictorKind = "sentence-logprob"


class SentenceLogprobPredictor:
    """One sentence scorer under one variant (``shared`` or ``whole``)."""

    def __init__(self, scorer: SentenceScorer, variant: str = "shared") -> None:
        self.scorer = scorer
        self.variant = check_variant(variant)
        self.name = tp_model_key(scorer.name, variant)
        self.kind: str = KIND

    def describe(self) -> Mapping[str, Any]:
        return {**self.scorer.describe(), "scorer": self.scorer.kind, "variant": self.variant}

    def predict(
        self, samples: BenchmarkSamples, cache: PredictionCache | None, *, progress: bool = True
    ) -> PredictorRun:
        started = time.perf_counter()
        pairs = samples.sentence_pairs
        distinct: dict[tuple[str, str], int] = {}
        for pair in pairs:
            if pair is not None:
                distinct.setdefault(pair.texts, len(distinct))
        inputs = list(distinct)

        def compute(todo: list[tuple[str, ...]]) -> Iterator[ComputedBatch]:
            for batch in self.scorer.score_pair_batches([(a, b) for a, b in todo], variant=self.variant):
                yield ComputedBatch(batch.indices, list(batch.scores), batch.real_tokens, batch.padded_tokens)

        run = cached_outputs(
            self.name,
            inputs,
            {**self.scorer.identity(), "variant": self.variant, "output": "pair-log-likelihood"},
            compute,
            cache,
            to_json=PairScore.to_json,
            from_json=PairScore.from_json,
            progress=progress,
        )
        predictions = []
        for sample_id, pair in zip(samples.columns.ids, pairs, strict=True):
            extra: dict[str, Any] = {"kind": KIND}
            if pair is None:
                extra["no_pair"] = True
            else:
                score: PairScore = run.outputs[distinct[pair.texts]]
                extra.update(
                    score_more=score.more, score_less=score.less,
                    tokens_more=score.tokens_more, tokens_less=score.tokens_less,
                )  # fmt: skip
            predictions.append(Prediction(sample_id, self.name, None, None, extra))
        return PredictorRun.of_predictions(predictions, self.kind, run.stats(time.perf_counter() - started))


def build_sentence_predictors(
    mlm: Sequence[ModelRef] = (),
    causal: Sequence[ModelRef] = (),
    *,
    variants: Sequence[str] = ("shared",),
    device: str | None = None,
    dtype: str | None = None,
    revision: str | None = None,
    concurrency: int | None = None,
) -> list[SentenceLogprobPredictor]:
    """One predictor per (model, variant): ``mlm`` masked LMs, ``causal`` causal LMs or servers.

    >>> [p.name for p in build_sentence_predictors(causal=[ModelRef.unread("openai:http://h/v1#m")])]
    ['m|tp=shared']
    """
    variants = [check_variant(v) for v in variants] or ["shared"]
    scorers: list[Any] = []
    for ref in mlm:
        scorers.append(
            HFMaskedScorer(ref.named_for(MASKED_LM_KINDS), revision=revision, device=device, dtype=dtype)
        )
    for ref in causal:
        if ref.is_server:
            url, model = server_address(ref, "causal")
            scorers.append(ServerScorer(url, model, concurrency=concurrency or 4))
        else:
            scorers.append(HFCausalScorer(ref.named_for(CAUSAL_LM_KINDS), device=device, dtype=dtype))
    return [SentenceLogprobPredictor(scorer, variant) for scorer in scorers for variant in variants]
