"""Predictor kinds: what a predictor's outputs are, which decides the measures they get; and the
variants of a kind (a generative LM's answer modes, a sentence scorer's token-probability scores).

The kind is recorded with the results (``predictor_kinds`` in ``metrics.json``, ``kind`` in
``predictions.jsonl``); a benchmark names the measures of each kind it scores
(:class:`~nlibias.benchmarks.base.Benchmark`), and may name a kind of its own besides these. The
variants are part of the model keys results are reported under (:mod:`nlibias.schema.model_keys`).

>>> PREDICTOR_KINDS
('classifier', 'generative', 'sentence-logprob')
>>> MODES, TP_VARIANTS
(('scored', 'generated'), ('shared', 'whole'))
"""

from __future__ import annotations

from typing import Literal, TypeGuard

from nlibias.errors import ConfigError

PredictorKind = Literal["classifier", "generative", "sentence-logprob"]
PREDICTOR_KINDS: tuple[str, ...] = ("classifier", "generative", "sentence-logprob")
"""``classifier``: 3-way NLI probabilities; ``generative``: yes/no answers of a prompted LM;
``sentence-logprob``: a language model's log-likelihood of both sentences of a sentence pair
(token-probability bias, :mod:`nlibias.metrics.token_probability`)."""

GenerativeMode = Literal["scored", "generated"]
MODES: tuple[str, ...] = ("scored", "generated")
"""Answer modes of generative LMs: answer words scored in one forward pass, or generated text."""


def check_mode(mode: object) -> GenerativeMode:
    """``mode`` if it is one of :data:`MODES`, else refused naming them.

    >>> check_mode("scored")
    'scored'
    >>> check_mode("greedy")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: mode must be one of scored, generated, got 'greedy'
    """
    if not _is_mode(mode):
        raise ConfigError(f"{{mode}} must be one of {', '.join(MODES)}, got {mode!r}", parameter="mode")
    return mode


def _is_mode(mode: object) -> TypeGuard[GenerativeMode]:
    return mode in MODES


TPVariant = Literal["shared", "whole"]
TP_VARIANTS: tuple[str, ...] = ("shared", "whole")
"""Token-probability scores of sentence scorers: ``shared`` sums the tokens the two sentences share
(CrowS-Pairs, WinoQueer); ``whole`` sums every token of the sentence (lm-evaluation-harness
``crows_pairs``)."""
