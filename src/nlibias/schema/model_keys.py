"""Model keys: the name each predictor's results are reported under in ``predictions.jsonl`` and
``metrics.json``. A classifier's key is its name; a generative LM asked with a prompt style in an
answer mode reports under ``MODEL|prompt=STYLE|MODE``. This is the one parser of that form.

A sentence scorer reports under ``MODEL|tp=VARIANT``. Keys name results; they never decide which
measures apply: that is the predictor kind recorded with the results
(:mod:`nlibias.schema.predictor_kinds`, which holds the answer modes and variants keys name).

>>> model_key("smollm2", "true", "scored")
'smollm2|prompt=true|scored'
>>> split_model_key("openai:x|y|prompt=true|generated")
('openai:x|y', 'true', 'generated')
>>> split_model_key("roberta-large-mnli") is None
True
>>> model_parts("smollm2|prompt=true|scored"), model_parts("roberta-large-mnli")
(('smollm2|scored', 'true'), ('roberta-large-mnli', ''))
"""

from __future__ import annotations

from nlibias.schema.predictor_kinds import MODES, TP_VARIANTS


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
    """``(key without its prompt, prompt style)`` for grouping a report's rows; the style is ''
    for a key that is not a generative one."""
    parts = split_model_key(key)
    if parts is None:
        return key, ""
    model, prompt, mode = parts
    return f"{model}|{mode}", prompt
