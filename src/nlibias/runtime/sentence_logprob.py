"""Language models scoring sentence pairs (token-probability bias) as predictors of the audit.

A :class:`SentenceLogprobPredictor` (kind ``sentence-logprob``) asks the samples' benchmark which
sentence pair each sample stands for (:attr:`nlibias.benchmarks.base.BenchmarkSamples.sentence_pairs`), scores the
distinct pairs through the one cached prediction loop (:func:`nlibias.runtime.loop.cached_outputs`;
the cache keys on the scorer's identity, the variant and both sentences), and returns one
prediction per sample: no label, the two scores in ``extra`` (``score_more``, ``score_less``,
``tokens_more``, ``tokens_less``), or ``no_pair`` for a sample that stands for no pair.

>>> from nlibias.schema.model_keys import tp_model_key
>>> tp_model_key("bert-base-uncased", "shared")
'bert-base-uncased|tp=shared'
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nlibias.errors import ConfigError
from nlibias.models.tp.base import PairScore, SentenceScorer, check_variant
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.contract import PredictorRun
from nlibias.runtime.loop import ComputedBatch, cached_outputs
from nlibias.schema import Prediction
from nlibias.schema.model_keys import tp_model_key
from nlibias.schema.model_ref import CAUSAL_LM_KINDS, MASKED_LM_KINDS, ModelRef
from nlibias.schema.predictor_kinds import PredictorKind

if TYPE_CHECKING:
    from nlibias.benchmarks.base import BenchmarkSamples

KIND: PredictorKind = "sentence-logprob"


class SentenceLogprobPredictor:
    """One sentence scorer under one variant (``shared`` or ``whole``), as an audit predictor."""

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
    """One predictor per (model, variant): ``mlm`` are masked LMs (hub name or directory);
    ``causal`` are causal LMs (``smollm2``, a ``.gguf`` path, a directory, a hub name) or
    servers (``openai:URL#MODEL`` / ``openai-completions:URL#MODEL``: prompt log-probabilities
    with ``echo``), each read once (:class:`~nlibias.schema.model_ref.ModelRef`). ``dtype``: the
    weights' dtype of the local models (None: their device's default), recorded with their scores
    and keying their cache.

    >>> [p.name for p in build_sentence_predictors(causal=[ModelRef.unread("openai:http://h/v1#m")])]
    ['m|tp=shared']
    """
    variants = [check_variant(v) for v in variants] or ["shared"]
    scorers: list[Any] = []
    for ref in mlm:
        from nlibias.models.tp.hf import HFMaskedScorer

        scorers.append(
            HFMaskedScorer(ref.named_for(MASKED_LM_KINDS), revision=revision, device=device, dtype=dtype)
        )
    for ref in causal:
        if ref.is_server:
            from nlibias.models.tp.server import ServerScorer

            if ref.server is None:
                raise ConfigError(
                    f"server spec {str(ref)!r} must look like openai:URL#MODEL", parameter="causal"
                )
            url, model = ref.server
            scorers.append(ServerScorer(url, model, concurrency=concurrency or 4))
        else:
            from nlibias.models.tp.hf import HFCausalScorer

            scorers.append(HFCausalScorer(ref.named_for(CAUSAL_LM_KINDS), device=device, dtype=dtype))
    return [SentenceLogprobPredictor(scorer, variant) for scorer in scorers for variant in variants]
