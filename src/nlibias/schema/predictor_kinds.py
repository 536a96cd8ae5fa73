"""Predictor kinds: what a predictor's outputs are, which decides the measures they get; and the
variants of a kind (a generative LM's answer modes, a sentence scorer's token-probability scores).
A benchmark names the measures of each kind it scores, and may name a kind of its own.

>>> PREDICTOR_KINDS
('classifier', 'generative', 'sentence-logprob')
>>> MODES, TP_VARIANTS
(('scored', 'generated'), ('shared', 'whole'))
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from nlibias.schema.declared import declared

PredictorKind = Literal["classifier", "generative", "sentence-logprob"]
PREDICTOR_KINDS: tuple[str, ...] = get_args(PredictorKind)
"""``classifier``: 3-way NLI probabilities; ``generative``: yes/no answers of a prompted LM;
``sentence-logprob``: the log-likelihoods of both sentences of a sentence pair."""

GenerativeMode = Literal["scored", "generated"]
MODES: tuple[str, ...] = get_args(GenerativeMode)
"""Answer modes of generative LMs: answer words scored in one forward pass, or generated text."""


def check_mode(mode: Any) -> GenerativeMode:
    """``mode`` (whatever a caller holds) held to its declaration, :data:`GenerativeMode`.

    >>> check_mode("scored")
    'scored'
    >>> check_mode("greedy")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: mode must be one of 'scored', 'generated'; got str 'greedy'
    """
    return _declared_mode(mode)


@declared
def _declared_mode(mode: GenerativeMode) -> GenerativeMode:
    return mode


TPVariant = Literal["shared", "whole"]
TP_VARIANTS: tuple[str, ...] = get_args(TPVariant)
"""Token-probability scores of sentence scorers: ``shared`` sums the tokens the two sentences share
(CrowS-Pairs, WinoQueer); ``whole`` sums every token of the sentence (lm-evaluation-harness
``crows_pairs``)."""
