"""Predictor kinds (what a predictor's outputs are, which decides their measures), their variants,
and model keys, the names results are reported under: a classifier's name, a generative LM's
``MODEL|prompt=STYLE|MODE``, a sentence scorer's ``MODEL|tp=VARIANT``.

>>> PREDICTOR_KINDS
('classifier', 'generative', 'sentence-logprob')
>>> MODES, TP_VARIANTS
(('scored', 'generated'), ('shared', 'whole'))
"""

from __future__ import annotations

from typing import Any, Literal, NoReturn, get_args

from nlibias.errors import ConfigError
from nlibias.schema.declared import declared
from nlibias.schema.model_ref import ModelRef, refuse_spaces

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


def tp_model_key(model: str, variant: str) -> str:
    """The key of a sentence scorer: ``MODEL|tp=VARIANT``.

    >>> tp_model_key("bert-base-uncased", "shared"), split_tp_key("gpt2|tp=whole")
    ('bert-base-uncased|tp=shared', ('gpt2', 'whole'))
    """
    return f"{model}|tp={variant}"


def split_tp_key(key: str) -> tuple[str, str] | None:
    """``(model, variant)`` of a sentence scorer's key, ``None`` for other keys."""
    model, sep, variant = key.rpartition("|tp=")
    if not sep or variant not in TP_VARIANTS:
        return None
    return model, variant


def model_key(model: str, prompt: str, mode: str) -> str:
    """The key of a generative predictor: ``MODEL|prompt=STYLE|MODE``."""
    return f"{model}|prompt={prompt}|{mode}"


def split_model_key(key: str) -> tuple[str, str, str] | None:
    """``(model, prompt style, mode)`` of a generative model key, ``None`` for other keys."""
    parts = key.rsplit("|", 2)
    if len(parts) != 3 or not parts[1].startswith("prompt=") or parts[2] not in MODES:
        return None
    return parts[0], parts[1][len("prompt=") :], parts[2]


def model_parts(key: str) -> tuple[str, str]:
    """``(key without its prompt, prompt style)``; the style is '' for a non-generative key."""
    parts = split_model_key(key)
    if parts is None:
        return key, ""
    model, prompt, mode = parts
    return f"{model}|{mode}", prompt


def check_model_spec(spec: str, parameter: str, *, classifier: bool = False) -> None:
    """Refuse a model spec that names no model (``''``, ``fake:``) or has spaces around it and, for
    an NLI ``classifier``, one written as another kind's key (:func:`check_classifier_key`).
    """
    ref = ModelRef.unread(spec)
    if not spec.strip():
        _refuse(f"{spec!r} names no model", parameter)
    refuse_spaces(spec, parameter)
    if ref.kind.isidentifier() and not ref.name.strip():
        _refuse(
            f"{spec!r} names no model after {ref.kind + ':'!r} (a model's name is the key its results are "
            "reported under)",
            parameter,
        )
    if classifier:
        check_classifier_key(spec, parameter)


def check_classifier_key(key: str, parameter: str) -> None:
    """Refuse an empty NLI classifier name, or one in another kind's key syntax: its results would
    be reported as another kind of model's."""
    if not key:
        _refuse("a model's name is empty (it is the key its results are reported under)", parameter)
    if split_model_key(key) is not None or split_tp_key(key) is not None:
        what = "a generative LM's key" if split_model_key(key) is not None else "a sentence scorer's key"
        _refuse(
            f"{key!r} is written as {what} (MODEL|prompt=STYLE|MODE, MODEL|tp=VARIANT), but it is an NLI "
            "classifier: its results would be reported as another kind of model's",
            parameter,
        )


def _refuse(problem: str, parameter: str) -> NoReturn:
    raise ConfigError(f"{{{parameter}}}: {problem}", parameter=parameter)
