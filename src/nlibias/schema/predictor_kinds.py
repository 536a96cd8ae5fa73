"""Predictor kinds (what a predictor's outputs are, which decides their measures) and their variants.

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
"""3-way NLI probabilities; yes/no answers of a prompted LM; log-likelihoods of a sentence pair."""

GenerativeMode = Literal["scored", "generated"]
MODES: tuple[str, ...] = get_args(GenerativeMode)
"""Answer words scored in one forward pass, or generated text."""


def check_mode(mode: Any) -> GenerativeMode:
    """``mode`` held to :data:`GenerativeMode`."""
    return _declared_mode(mode)


@declared
def _declared_mode(mode: GenerativeMode) -> GenerativeMode:
    return mode


TPVariant = Literal["shared", "whole"]
TP_VARIANTS: tuple[str, ...] = get_args(TPVariant)
"""``shared``: sum over the tokens both sentences share (CrowS-Pairs); ``whole``: every token (lm-eval)."""
