"""One model's outputs on a benchmark's samples, as columns: what every measure reads (the rows'
numbers and words by name, a mapping flattened with a dot: ``answer_probs.yes``); one run's
resampling units (:class:`RunUnits`, what a benchmark's ``Measures.units`` builds and the paired
bootstrap draws).

>>> units = RunUnits((np.array([[1.0], [0.0]]),), lambda totals: {"x": totals[:, 0]}, np.zeros(2, int))
>>> len(units), units.readable()
(2, 1)
>>> scores = {"score_more": np.array([-2.0, np.nan]), "score_less": np.array([-3.0, -1.0])}
>>> ModelOutputs("sentence-logprob", np.full((2, 3), np.nan), values=scores).answered().tolist()
[True, False]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nlibias.schema import LABEL_INDEX, LABELS, Prediction
from nlibias.schema.columns import ItemSequence

NO_LABEL = -1  # the label code of a row without a label
ANSWER_VALUES = {
    "classifier": (),
    "generative": ("choice",),
    "sentence-logprob": ("score_more", "score_less"),
}
"""The numbers each of nlibias's kinds answers with besides a label or probabilities (all of them:
one answer)."""


@dataclass(frozen=True, eq=False)
class ModelOutputs:
    """One model's outputs in sample order; ``kind`` (the predictor kind) decides which measures apply."""

    kind: str
    probs: np.ndarray
    """``(samples x 3)`` entailment, neutral, contradiction; NaN where the model gave none."""
    labels: np.ndarray | None = None
    """A label code per sample (-1: none); None: each sample's most probable label."""
    values: Mapping[str, np.ndarray] = field(default_factory=dict)
    """Per-sample numbers recorded on the rows, by field name (NaN where a row lacks it)."""
    strings: Mapping[str, Sequence[str | None]] = field(default_factory=dict)
    """Per-sample words recorded on the rows, by field name (None where a row lacks it)."""

    def __len__(self) -> int:
        return len(self.probs)

    def has(self, name: str) -> bool:
        """Whether some row recorded the number or word ``name``."""
        if name in self.values:
            return bool(np.isfinite(self.values[name]).any())
        return name in self.strings and any(s is not None for s in self.strings[name])

    def answered(self) -> np.ndarray:
        """Whether each sample's answer was read: a label (or probabilities), or every number of
        :data:`ANSWER_VALUES` its kind answers with (a chosen option, a sentence pair's scores); for
        a kind from outside nlibias (a plug-in's), any number its row records."""
        read = (self.label_codes() != NO_LABEL) | np.isfinite(self.probs).all(axis=1)
        names = ANSWER_VALUES.get(self.kind)
        if names is None:
            for column in self.values.values():
                read |= np.isfinite(column)
        elif names and all(name in self.values for name in names):
            read |= np.logical_and.reduce([np.isfinite(self.values[name]) for name in names])
        return read

    def label_codes(self) -> np.ndarray:
        """The label code of every sample: the recorded one, else the most probable (-1: none)."""
        if self.labels is not None:
            return self.labels
        codes = np.full(len(self.probs), NO_LABEL, dtype=np.int8)
        known = np.isfinite(self.probs).all(axis=1)
        codes[known] = self.probs[known].argmax(axis=1)
        return codes

    def take(self, positions: np.ndarray) -> ModelOutputs:
        """The outputs of the samples at ``positions``, in that order."""
        at = np.asarray(positions, dtype=np.int64)
        picked = at.tolist()
        return ModelOutputs(
            kind=self.kind,
            probs=self.probs[at],
            labels=None if self.labels is None else self.labels[at],
            values={name: column[at] for name, column in self.values.items()},
            strings={name: tuple(column[i] for i in picked) for name, column in self.strings.items()},
        )

    @classmethod
    def of_predictions(cls, predictions: Sequence[Prediction | None], kind: str) -> ModelOutputs:
        """The outputs held by one model's rows (one per sample, in sample order; None: no row)."""
        n = len(predictions)
        probs = np.full((n, 3), np.nan)
        labels = np.full(n, NO_LABEL, dtype=np.int8)
        numbers: dict[str, np.ndarray] = {}
        words: dict[str, list[str | None]] = {}
        for i, prediction in enumerate(predictions):
            if prediction is None:
                continue
            if prediction.probs is not None:
                probs[i] = prediction.probs
            if prediction.label is not None:
                labels[i] = LABEL_INDEX[prediction.label]
            for name, value in _fields(prediction.extra):
                if isinstance(value, str):
                    words.setdefault(name, [None] * n)[i] = value
                else:
                    numbers.setdefault(name, np.full(n, np.nan))[i] = value
        return cls(
            kind=kind,
            probs=probs,
            labels=labels,
            values=numbers,
            strings={name: tuple(column) for name, column in words.items()},
        )


def _fields(extra: Mapping[str, Any]) -> list[tuple[str, float | str]]:
    """The numbers and words of a row's backend fields (but ``kind``)."""
    found: list[tuple[str, float | str]] = []
    for name, value in extra.items():
        if name == "kind":
            continue
        if isinstance(value, str):
            found.append((name, value))
        elif _is_number(value):
            found.append((name, float(value)))
        elif isinstance(value, Mapping):
            found += [(f"{name}.{key}", float(v)) for key, v in value.items() if _is_number(v)]
    return found


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return True  # a flag (``no_pair``) counts 1.0 / 0.0
    return isinstance(value, int | float) and math.isfinite(value)


class ProbabilityRows(ItemSequence[Prediction]):
    """A classifier's rows made on demand (``slot[i]``: sample ``i``'s row of ``distinct_probs``).

    >>> rows = ProbabilityRows("m", ["a", "b"], np.array([0, 0]), np.array([[0.2, 0.7, 0.1]]))
    >>> rows[1].sample_id, rows[1].label, rows[1].probs
    ('b', 'neutral', (0.2, 0.7, 0.1))
    """

    def __init__(self, model: str, ids: Sequence[str], slot: np.ndarray, distinct_probs: np.ndarray) -> None:
        self.model = model
        self.ids = ids
        self.slot = slot
        self.distinct_probs = distinct_probs
        self.best = distinct_probs.argmax(axis=1) if len(distinct_probs) else np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.ids)

    def _item(self, index: int) -> Prediction:
        slot = int(self.slot[index])
        row = self.distinct_probs[slot]
        return Prediction(
            sample_id=self.ids[index],
            model=self.model,
            label=LABELS[int(self.best[slot])],
            probs=(float(row[0]), float(row[1]), float(row[2])),
        )


class ChainedRows(ItemSequence[Prediction]):
    """Several models' rows one after the other, as ``predictions.jsonl`` holds them."""

    def __init__(self, parts: Sequence[Sequence[Prediction]]) -> None:
        self.parts = list(parts)
        self._starts = np.cumsum([0, *(len(part) for part in self.parts)])

    def __len__(self) -> int:
        return int(self._starts[-1])

    def _item(self, index: int) -> Prediction:
        part = int(np.searchsorted(self._starts, index, side="right")) - 1
        return self.parts[part][index - int(self._starts[part])]


@dataclass(frozen=True, eq=False)
class RunUnits:
    """``(units x columns)`` blocks, the statistic of their totals, each unit's stratum (drawn among
    themselves; non-decreasing) and each grouping's label per unit."""

    blocks: tuple[np.ndarray, ...]
    statistic: Callable[..., Mapping[str, np.ndarray]]
    stratum: np.ndarray
    groups: Mapping[str, Sequence[Any]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.stratum)

    def shape_problem(self) -> str | None:
        """What breaks its shape (None: nothing): every block is ``(units x columns)`` with one row
        per unit of ``stratum`` (non-decreasing), and each grouping holds one label per unit.

        >>> RunUnits((np.ones((2, 1)), np.ones((1, 1))), dict, np.zeros(2, int)).shape_problem()
        'blocks of [2, 1] rows for 2 units (stratum): every block holds one row per unit'
        """
        stratum = np.asarray(self.stratum)
        if not self.blocks or stratum.ndim != 1 or np.any(np.diff(stratum) < 0):
            return "its stratum must be one non-decreasing code per unit, with at least one block"
        rows = [np.shape(block)[0] if np.ndim(block) == 2 else None for block in self.blocks]
        if any(n != len(stratum) for n in rows):
            shown = [
                n if n is not None else f"{np.ndim(b)}-d" for n, b in zip(rows, self.blocks, strict=True)
            ]
            return f"blocks of {shown} rows for {len(stratum)} units (stratum): every block holds one row per unit"
        wrong = [(name, len(labels)) for name, labels in self.groups.items() if len(labels) != len(stratum)]
        if wrong:
            return (
                f"grouping {wrong[0][0]!r} labels {wrong[0][1]} units of {len(stratum)}: one label per unit"
            )
        return None

    def readable(self) -> int:
        """How many units hold an answer that was read (not a row of zeros)."""
        return int(np.count_nonzero(np.any(np.hstack(self.blocks) != 0, axis=1)))

    def take(self, index: np.ndarray | None) -> tuple[list[np.ndarray], tuple[int, ...]]:
        """The blocks of the units at ``index`` (ascending; None: all) and their strata sizes."""
        blocks = list(self.blocks) if index is None else [block[index] for block in self.blocks]
        codes = self.stratum if index is None else self.stratum[index]
        _, sizes = np.unique(codes, return_counts=True)
        return blocks, tuple(int(s) for s in sizes)

    def point(self, index: np.ndarray | None = None) -> Mapping[str, np.ndarray]:
        """Every measure on the units at ``index`` (None: all), each a one-value array."""
        blocks, _ = self.take(index)
        return self.statistic(*(block.sum(axis=0, keepdims=True) for block in blocks))
