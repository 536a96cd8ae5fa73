"""Immutable records exchanged between pipeline stages: samples and predictions.

Labels are always the strings ``entailment``, ``neutral`` and ``contradiction``; probability
vectors are always in that order (:data:`LABELS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from nlibias.textio.text_door import enter_text, is_plain

Label = Literal["entailment", "neutral", "contradiction"]
Stereotype = Literal["pro", "anti"]

#: Canonical label order of every probability vector in nlibias.
LABELS: tuple[Label, Label, Label] = ("entailment", "neutral", "contradiction")
LABEL_INDEX: dict[str, int] = {label: i for i, label in enumerate(LABELS)}


@dataclass(frozen=True, slots=True)
class Sample:
    """One premise/hypothesis pair of a bias benchmark (its texts through the text door:
    :func:`~nlibias.textio.text_door.enter_text`, NFC, format characters removed with a warning).

    >>> s = Sample(id="x", source="bbnli", domain="gender", subtopic="t", premise="P.",
    ...            hypothesis="H.", gold="neutral", stereotype="pro", pair_key="k")
    >>> s.is_bias_sample
    True
    """

    id: str
    """Stable identifier, unique within a dataset (same source files give the same ids)."""
    source: str
    """Benchmark the sample comes from: ``bbnli``, ``bbnli-next``, ``wq-nli``, ..."""
    domain: str
    """Bias domain: ``gender``, ``race``, ``religion`` (or the benchmark's own)."""
    subtopic: str
    """Subtopic id, e.g. ``man_is_to_programmer``."""
    premise: str
    hypothesis: str
    gold: Label
    """Ground-truth label; ``neutral`` for every BBNLI bias-audit sample."""
    stereotype: Stereotype | None = None
    """``pro`` / ``anti`` for bias-audit hypotheses, ``None`` for non-bias test hypotheses."""
    pair_key: str | None = None
    """Identical for a sample and its group-swapped twin; ``None`` for test samples."""
    group: str | None = None
    """The group rendered in the stereotyped-group slot of this sample (BBNLI: GROUP1's slot)."""
    counterfactual_group: str | None = None
    """The group it is contrasted with (BBNLI: the value in GROUP2's slot)."""
    provenance: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """Where the sample comes from: premise index, template id, words, fill word, ..."""

    def __post_init__(self) -> None:
        # the text door (NFC, format characters removed with a warning): a Sample built in Python
        # holds the texts a file's sample would; readers pass their texts first, naming the line
        for name in ("premise", "hypothesis"):
            value = getattr(self, name)
            if type(value) is str and not is_plain(value):
                where = f"sample {self.id!r} {name}"
                object.__setattr__(self, name, enter_text(value, where, stacklevel=4))

    @property
    def is_bias_sample(self) -> bool:
        """True for pro/anti-stereotype hypotheses, False for the benchmark's test hypotheses."""
        return self.stereotype is not None

    def to_dict(self) -> dict[str, Any]:
        # Not dataclasses.asdict: its recursive deep copy made writing 76k samples take ~10 s.
        record = {name: getattr(self, name) for name in self.__dataclass_fields__}
        record["provenance"] = dict(self.provenance)
        return record

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Sample:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in record.items() if k in known})


def row_kind(raw: Mapping[str, Any]) -> str:
    """The predictor kind of a row: its built-in ``kind``, else ``generative`` for a row with an
    answer word, else ``classifier``.

    >>> row_kind({"id": "a", "label": "neutral"}), row_kind({"id": "a", "label": None, "answer": "maybe"})
    ('classifier', 'generative')
    """
    recorded = raw.get("kind")
    if recorded in ("classifier", "generative", "sentence-logprob"):
        return str(recorded)
    return "generative" if "answer" in raw else "classifier"


@dataclass(frozen=True, slots=True)
class Prediction:
    """One model's answer on one sample: ``probs`` in :data:`LABELS` order, or ``None`` for a
    label alone; ``label`` ``None`` only for a generated answer that could not be parsed."""

    sample_id: str
    model: str
    """Model key as it appears in ``metrics.json`` (a generative model's key includes the prompt)."""
    label: Label | None
    probs: tuple[float, float, float] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """Backend-specific details kept for the record (generated text, raw answer, ...)."""

    @property
    def kind(self) -> str:
        """The predictor kind that made it (:func:`row_kind` of ``extra``)."""
        return row_kind(self.extra)

    def to_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {"id": self.sample_id, "model": self.model, "label": self.label}
        if self.probs is not None:
            record["probs"] = dict(zip(LABELS, self.probs, strict=True))
        if self.extra:
            record.update({k: v for k, v in self.extra.items() if k not in record})
        return record
