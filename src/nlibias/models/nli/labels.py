"""Map a model's label ids (``config.id2label``) to entailment / neutral / contradiction; an
unmappable model is refused, showing its labels and the ``label_map`` to pass.

>>> resolve_label_order({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"})  # roberta-large-mnli
[2, 1, 0]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from nlibias.errors import ConfigError, LabelMappingError
from nlibias.schema import LABELS

#: Spellings of each label, lower-cased, letters only.
LABEL_SYNONYMS: dict[str, str] = {
    **dict.fromkeys(["entailment", "entail", "entails", "entailed"], "entailment"),
    "neutral": "neutral",
    **dict.fromkeys(
        ["contradiction", "contradict", "contradicts", "contradicted", "contradictory"], "contradiction"
    ),
}


def canonical_label(name: str) -> str | None:
    """The canonical label a model's label name stands for, or ``None``.

    >>> canonical_label("ENTAILMENT"), canonical_label("Contradict"), canonical_label("LABEL_0")
    ('entailment', 'contradiction', None)
    >>> canonical_label("not_entailment") is None
    True
    """
    key = re.sub(r"[^a-z]", "", str(name).lower())
    return LABEL_SYNONYMS.get(key)


def example_label_map(ids: list[int] | None = None) -> str:
    """A ``--label-map`` value in the right syntax, for the model's ids when there are three.

    >>> example_label_map([0, 1, 2])
    '0=entailment,1=neutral,2=contradiction'
    """
    ids = ids if ids is not None and len(ids) == len(LABELS) else list(range(len(LABELS)))
    return ",".join(f"{i}={label}" for i, label in zip(ids, LABELS, strict=True))


def parse_label_map(text: str) -> dict[int, str]:
    """Parse ``"0=entailment,1=neutral,2=contradiction"``, each label once, ids distinct.

    >>> parse_label_map("2=ENTAILMENT, 1=neutral, 0=contradiction")
    {2: 'entailment', 1: 'neutral', 0: 'contradiction'}
    """
    fix = f"write it as ID=LABEL pairs separated by commas, e.g. {example_label_map()!r}"
    entries = [part.strip() for part in text.split(",") if part.strip()]
    mapping: dict[int, str] = {}
    problem = None if entries else "is empty"
    for entry in entries:
        key, sep, value = (part.strip() for part in entry.partition("="))
        label = canonical_label(value)
        problem = (
            f"entry {entry!r} has no '='" if not sep
            else f"entry {entry!r}: {key!r} is not an integer id" if not re.fullmatch(r"[+-]?\d+", key)
            else f"entry {entry!r}: {value!r} is not one of {', '.join(LABELS)}" if label is None
            else f"gives id {int(key)} twice" if int(key) in mapping
            else None
        )  # fmt: skip
        if problem is not None or label is None:
            break
        mapping[int(key)] = label
    if problem is not None:  # the syntax of one entry, the first wrong one named
        raise ConfigError(f"{{label_map}} {problem}; {fix}", parameter="label_map")
    _check_complete(
        mapping, what="label_map", fix=fix, error=lambda message: ConfigError(message, parameter="label_map")
    )
    return mapping


def _check_complete(
    mapping: Mapping[int, str], *, what: str, fix: str, error: Callable[[str], Exception] = LabelMappingError
) -> None:
    named = list(mapping.values())
    duplicated = sorted({label for label in named if named.count(label) > 1})
    missing = [label for label in LABELS if label not in named]
    problems = [f"names {', '.join(duplicated)} more than once"] if duplicated else []
    problems += [f"does not name {', '.join(missing)}"] if missing else []
    if problems:
        raise error(f"{what} {' and '.join(problems)}; {fix}")


def resolve_label_order(
    id2label: Mapping[int | str, str],
    override: Mapping[int, str] | None = None,
    *,
    model_name: str = "the model",
) -> list[int]:
    """For each of :data:`~nlibias.schema.LABELS`, the output column holding it; ``override``
    replaces the model's own names. An unmappable model is refused (LabelMappingError).

    >>> resolve_label_order({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"},
    ...                     override={0: "contradiction", 1: "entailment", 2: "neutral"})
    [1, 2, 0]
    """
    try:
        model_labels = {int(k): str(v) for k, v in id2label.items()}
    except (TypeError, ValueError):
        raise LabelMappingError(
            f"{model_name}: config.id2label has keys that are not integer ids: {dict(id2label)!r}"
        ) from None
    ids = sorted(model_labels)
    shown = ", ".join(f"{i}: {model_labels[i]!r}" for i in ids)
    fix = (
        f"pass the mapping from the model's ids to entailment/neutral/contradiction, e.g. "
        f"label_map={example_label_map(ids)!r} (the command line's --label-map)"
    )
    if len(ids) != len(LABELS) or ids != list(range(len(LABELS))):
        raise LabelMappingError(
            f"{model_name} has {len(ids)} output label(s) {{{shown}}}; nlibias needs a 3-way NLI "
            f"classifier with ids 0, 1, 2 (entailment, neutral, contradiction)"
            + ("; a 2-way entailment model cannot be audited" if len(ids) == 2 else "")
        )
    if override is not None:
        mapping: dict[int, str] = {}
        for key, value in override.items():
            label = canonical_label(value)
            if label is None or int(key) not in model_labels:
                raise LabelMappingError(
                    f"{model_name}: label map entry {key}={value} does not fit the model's labels "
                    f"{{{shown}}}; {fix}"
                )
            mapping[int(key)] = label
        if set(mapping) != set(ids):
            raise LabelMappingError(
                f"{model_name}: the label map covers ids {sorted(mapping)} but the model has {ids}; {fix}"
            )
        _check_complete(mapping, what=f"{model_name}: the label map", fix=fix)
    else:
        found = {i: canonical_label(model_labels[i]) for i in ids}
        mapping = {i: label for i, label in found.items() if label is not None}
        unknown = [repr(model_labels[i]) for i in ids if i not in mapping]
        if unknown:
            raise LabelMappingError(
                f"cannot map the labels of {model_name} {{{shown}}} to entailment/neutral/contradiction "
                f"({', '.join(unknown)} unknown); {fix}"
            )
        _check_complete(mapping, what=f"{model_name}: its labels {{{shown}}}", fix=fix)
    column_of = {label: i for i, label in mapping.items()}
    return [column_of[label] for label in LABELS]


KINDS_WITHOUT_LABEL_IDS = frozenset({"fake", "prompt"})
"""Classifier kinds whose outputs are not ids a label map could name."""
