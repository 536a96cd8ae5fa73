"""Each built-in benchmark's resampling units (its ``Measures.units``), as its scorer builds them,
and a run's outputs as a paired comparison (``nlibias gate``, ``nlibias report --compare``) reads them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nlibias.errors import DataError
from nlibias.metrics.bbnli import EncodedSamples
from nlibias.metrics.bbq import COUNTS, BBQExamples, bbq_measures, choices, example_counts
from nlibias.metrics.generative import gap_of_totals, gap_rows, yes_values
from nlibias.metrics.occupations import MEASURE_KEYS, pair_value_columns
from nlibias.metrics.paired import bbnli_units, mean_units
from nlibias.metrics.token_probability import TP_MEASURES, scored_pairs, tp_unit_values
from nlibias.metrics.wq_nli import M_KEYS, arrange_column_rows, wq_conditions
from nlibias.schema import Prediction
from nlibias.schema.columns import IdPositions, SampleColumns
from nlibias.schema.outputs import ModelOutputs, RunUnits


def bbnli_pair_units(columns: SampleColumns, outputs: ModelOutputs, model: str) -> RunUnits:
    """A classifier's BBNLI units: pairs, unpaired bias samples and test samples."""
    encoded = EncodedSamples.of_columns(columns, outputs.label_codes().astype(np.int64))
    return bbnli_units(encoded, groups=_first_labels(columns, None))


def occupation_units(columns: SampleColumns, outputs: ModelOutputs, model: str) -> RunUnits:
    """The occupation pairs, each with its S, ΔP and B values."""
    values, groups, _ = pair_value_columns(columns, outputs.probs, model=model, labels=outputs.labels)
    return mean_units(values, MEASURE_KEYS, groups=groups)


def wq_nli_units(columns: SampleColumns, outputs: ModelOutputs, model: str) -> RunUnits:
    """WinoQueer-NLI's rows, each with its conditions M1..M8."""
    rows = arrange_column_rows(columns, outputs.probs, model=model)
    return mean_units(wq_conditions(rows.stereo, rows.counter).astype(float), M_KEYS, groups=rows.groups)


def token_probability_units(columns: SampleColumns, outputs: ModelOutputs, model: str) -> RunUnits:
    """The scored sentence pairs, each with its token-probability values."""
    rows, more, less, direction = scored_pairs(columns, outputs)
    values = tp_unit_values(more, less, direction=direction)
    return mean_units(values, TP_MEASURES, groups={"domain": columns.domain.take(rows)})


def generative_gap_units(columns: SampleColumns, outputs: ModelOutputs, model: str) -> RunUnits:
    """A generative LM's pro/anti pairs, each with its yes counts (the biased-answer gap)."""
    rows, first = gap_rows(yes_values(outputs.label_codes()), columns.stereotype, columns.pair_code)

    def yes_rate_gap(totals: np.ndarray) -> dict[str, np.ndarray]:
        return {"yes_rate_gap": gap_of_totals(totals)["gap"]}

    return RunUnits((rows,), yes_rate_gap, np.zeros(len(rows), dtype=np.int64), _first_labels(columns, first))


def bbq_template_units(columns: SampleColumns, outputs: ModelOutputs, model: str) -> RunUnits:
    """BBQ's filled templates, each with its answers' counts (the bias scores)."""
    examples = BBQExamples.of(columns)
    counts = example_counts(choices(outputs), examples)
    _, first = np.unique(examples.unit, return_index=True)  # codes 0..units-1: one first example each
    rows = np.zeros((len(first), len(COUNTS)))
    np.add.at(rows, examples.unit, counts)

    def bias_scores(totals: np.ndarray) -> dict[str, np.ndarray]:
        measures = bbq_measures(totals)
        return {name: measures[name] for name in ("bbq_s_amb", "bbq_s_dis")}

    return RunUnits((rows,), bias_scores, np.zeros(len(rows), dtype=np.int64), _first_labels(columns, first))


def _first_labels(columns: SampleColumns, first: np.ndarray | None) -> dict[str, list[Any]]:
    """Each unit's domain and subtopic, from its first sample (``first``; None: one per sample)."""
    return {
        by: (labels if first is None else labels.take(first)).tolist()
        for by, labels in (("domain", columns.domain), ("subtopic", columns.subtopic))
    }


def model_outputs(
    columns: SampleColumns, predictions: Iterable[Prediction], kinds: Mapping[str, Any]
) -> tuple[np.ndarray, dict[str, ModelOutputs]]:
    """``(positions, {model: outputs})`` on the samples some model answered (``kinds``: default classifier)."""
    positions = IdPositions(columns.ids)
    by_model: dict[str, list[Prediction | None]] = {}
    for prediction in predictions:
        try:
            at = positions(prediction.sample_id)
        except KeyError:
            raise DataError(
                f"sample {prediction.sample_id!r} of model {prediction.model!r} is not among the samples read",
                sample=prediction.sample_id, fix="pass the samples the run audited",
            ) from None  # fmt: skip
        by_model.setdefault(prediction.model, [None] * len(columns))[at] = prediction
    predicted = np.zeros(len(columns), dtype=bool)
    for rows in by_model.values():
        predicted |= np.fromiter((r is not None for r in rows), dtype=bool, count=len(rows))
    kept = np.flatnonzero(predicted)
    outputs = {
        model: ModelOutputs.of_predictions([rows[i] for i in kept], str(kinds.get(model, "classifier")))
        for model, rows in by_model.items()
    }
    return kept, outputs


@dataclass(frozen=True, eq=False)
class ScoredRun:
    """One run as a paired comparison reads it: the samples some model answered (as columns, in id
    order: the bootstrap draws follow the units' order) and each model's outputs on them."""

    path: Path
    metrics: Mapping[str, Any]
    columns: SampleColumns
    outputs: Mapping[str, ModelOutputs]
    asked: Mapping[str, Mapping[str, str]]
    """How each model was asked, as its rows record it (``nlibias.io.run_dir.ASKED``)."""

    @classmethod
    def of(
        cls,
        path: Path,
        metrics: Mapping[str, Any],
        columns: SampleColumns,
        rows: Sequence[Prediction],
        asked: Any,
    ) -> ScoredRun:
        """The run's outputs on ``columns``, the samples it was scored on."""
        kept, outputs = model_outputs(columns, rows, metrics.get("predictor_kinds", {}))
        ids = [columns.ids[i] for i in kept]
        by_id = np.array(sorted(range(len(ids)), key=ids.__getitem__), dtype=np.int64)
        if not np.array_equal(by_id, np.arange(len(ids))):
            outputs = {model: out.take(by_id) for model, out in outputs.items()}
        if not np.array_equal(kept[by_id], np.arange(len(columns))):
            columns = columns.take(kept[by_id])
        return cls(path, metrics, columns, outputs, asked)

    def kind_of(self, model: str) -> str:
        """The model's predictor kind (``classifier`` where the run records none)."""
        return str(self.metrics.get("predictor_kinds", {}).get(model, "classifier"))

    def settings(self, model: str) -> dict[str, str]:
        """The model's predictor kind and how it was asked."""
        return {"kind": self.kind_of(model), **self.asked.get(model, {})}

    def units(self, measures: Any, model: str, names: Sequence[str]) -> RunUnits:
        """The model's resampling units of ``names`` (``measures``: its kind's ``Measures``)."""
        return measures.resampling_units(self.columns, self.outputs[model], model=model, measures=names)


def asked_difference(
    first: Mapping[str, str], second: Mapping[str, str], settings: Sequence[str]
) -> tuple[str, str, str] | None:
    """``(setting, first's, second's)`` of the first of ``settings`` both record differently, else None.

    >>> asked_difference({"kind": "generative", "option_score": "total"}, {"option_score": "per-byte"}, ["kind", "option_score"])
    ('option_score', 'total', 'per-byte')
    """
    differ = [
        (s, first[s], second[s]) for s in settings if s in first and s in second and first[s] != second[s]
    ]
    return differ[0] if differ else None


def sample_difference(a: SampleColumns, b: SampleColumns) -> tuple[int, str, Any, Any] | None:
    """The first position where as many samples in the same order differ: ``(position, field, a's,
    b's)`` (id, premise or hypothesis); None where they are the same samples."""
    fields = (
        ("id", a.ids, b.ids),
        ("premise", a.premise, b.premise),
        ("hypothesis", a.hypothesis, b.hypothesis),
    )
    return next(((i, name, x[i], y[i]) for i in range(len(a)) for name, x, y in fields if x[i] != y[i]), None)


def aligned_positions(a: SampleColumns, b: SampleColumns) -> np.ndarray | None:
    """Where each of ``b``'s samples sits in ``a`` when both hold the same samples, else None."""
    if len(a) != len(b):
        return None
    in_a, in_b = (np.array(sorted(range(len(c)), key=c.ids.__getitem__), dtype=np.intp) for c in (a, b))
    if sample_difference(a.take(in_a), b.take(in_b)) is not None:
        return None
    positions = np.empty(len(b), dtype=np.intp)
    positions[in_b] = in_a
    return positions
