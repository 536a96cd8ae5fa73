"""One model's resampling units for the paired comparison, built by each benchmark's own scorer code.

:func:`run_units` picks the builder from the headline measures a model's metrics hold (not from
the benchmark's name): BBNLI's pro - anti score of an NLI classifier resamples the scorer's pair
units (:func:`nlibias.metrics.paired.bbnli_units`); a generative LM's biased-answer gap (its
headline, which supersedes pro - anti of its answers) the same pairs, each with its yes counts
(:func:`~nlibias.metrics.generative.gap_rows`); the gender-occupation measures (S, ΔP, B), WinoQueer-NLI's
M1 and the token-probability score are means over units of the values their scorers compute
(:func:`~nlibias.metrics.occupations.pair_value_columns`,
:func:`~nlibias.metrics.wq_nli.wq_conditions`, :func:`~nlibias.metrics.token_probability.tp_unit_values`);
BBQ's bias scores resample filled templates, each with its answers' counts
(:func:`~nlibias.metrics.bbq.example_counts`).

>>> from nlibias.schema import Sample
>>> pair = [Sample(id=s, source="bbnli", domain="d", subtopic="t", premise="P.", hypothesis=f"{s} H.",
...                gold="neutral", stereotype=s, pair_key="k") for s in ("pro", "anti")]
>>> outputs = ModelOutputs("classifier", np.full((2, 3), np.nan), np.array([0, 1]))
>>> units = run_units(SampleColumns.from_samples(pair), outputs, model="m", measures=["bbnli_bias_score"])
>>> len(units), sorted(units.groups)
(1, ['domain', 'subtopic'])
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

import numpy as np

from nlibias.errors import DataError
from nlibias.metrics.bbnli import EncodedSamples
from nlibias.metrics.paired import RunUnits, bbnli_units, mean_units
from nlibias.schema import Prediction
from nlibias.schema.columns import SampleColumns
from nlibias.schema.outputs import ModelOutputs

Builder = Callable[[SampleColumns, ModelOutputs, str], RunUnits]


def _bbnli(columns: SampleColumns, outputs: ModelOutputs, model: str) -> RunUnits:
    encoded = EncodedSamples(
        predicted=outputs.label_codes().astype(np.int64),
        gold=columns.gold,
        stereotype=columns.stereotype,
        pair_code=columns.pair_code,
        pair_keys=columns.pair_keys,
        text_code=None,
        ids=columns.ids,
    )
    groups = {"domain": columns.domain.tolist(), "subtopic": columns.subtopic.tolist()}
    return bbnli_units(encoded, groups=groups)


def _occupations(columns: SampleColumns, outputs: ModelOutputs, model: str) -> RunUnits:
    from nlibias.metrics.occupations import MEASURE_KEYS, pair_value_columns

    values, groups, _ = pair_value_columns(columns, outputs.probs, model=model, labels=outputs.labels)
    return mean_units(values, MEASURE_KEYS, groups=groups)


def _wq_nli(columns: SampleColumns, outputs: ModelOutputs, model: str) -> RunUnits:
    from nlibias.metrics.wq_nli import M_KEYS, arrange_column_rows, wq_conditions

    rows = arrange_column_rows(columns, outputs.probs, model=model)
    return mean_units(wq_conditions(rows.stereo, rows.counter).astype(float), M_KEYS, groups=rows.groups)


def _token_probability(columns: SampleColumns, outputs: ModelOutputs, model: str) -> RunUnits:
    from nlibias.metrics.token_probability import TP_MEASURES, tp_unit_values

    nan = np.full(len(columns), np.nan)
    more, less = outputs.values.get("score_more", nan), outputs.values.get("score_less", nan)
    rows = np.flatnonzero(np.isfinite(more))
    direction = np.where(columns.stereotype[rows] == 1, "antistereo", "stereo").tolist()
    values = tp_unit_values(more[rows].tolist(), less[rows].tolist(), direction=direction)
    return mean_units(values, TP_MEASURES, groups={"domain": columns.domain.take(rows)})


def _generative(columns: SampleColumns, outputs: ModelOutputs, model: str) -> RunUnits:
    from nlibias.metrics.generative import gap_of_totals, gap_rows, yes_values

    rows, first = gap_rows(yes_values(outputs.label_codes()), columns.stereotype, columns.pair_code)
    groups = {
        by: labels.take(first).tolist()
        for by, labels in (("domain", columns.domain), ("subtopic", columns.subtopic))
    }

    def yes_rate_gap(totals: np.ndarray) -> dict[str, np.ndarray]:
        return {"yes_rate_gap": gap_of_totals(totals)["gap"]}

    return RunUnits((rows,), yes_rate_gap, np.zeros(len(rows), dtype=np.int64), groups)


def _bbq(columns: SampleColumns, outputs: ModelOutputs, model: str) -> RunUnits:
    from nlibias.metrics.bbq import COUNTS, BBQExamples, bbq_measures, choices, example_counts

    examples = BBQExamples.of(columns)
    counts = example_counts(choices(outputs), examples)
    _, first = np.unique(examples.unit, return_index=True)  # codes 0..units-1: one first example each
    rows = np.zeros((len(first), len(COUNTS)))
    np.add.at(rows, examples.unit, counts)
    groups = {
        by: labels.take(first).tolist()
        for by, labels in (("domain", columns.domain), ("subtopic", columns.subtopic))
    }

    def bias_scores(totals: np.ndarray) -> dict[str, np.ndarray]:
        measures = bbq_measures(totals)
        return {name: measures[name] for name in ("bbq_s_amb", "bbq_s_dis")}

    return RunUnits((rows,), bias_scores, np.zeros(len(rows), dtype=np.int64), groups)


BUILDERS: tuple[tuple[frozenset[str], Builder], ...] = (
    (frozenset({"bbnli_bias_score"}), _bbnli),
    (frozenset({"yes_rate_gap"}), _generative),
    (frozenset({"S", "delta_p", "B"}), _occupations),
    (frozenset({"M1"}), _wq_nli),
    (frozenset({"tp_bias_score", "tp_tie_split_score"}), _token_probability),
    (frozenset({"bbq_s_amb", "bbq_s_dis"}), _bbq),
)
"""Which builder resamples which headline measures."""


def run_units(
    columns: SampleColumns, outputs: ModelOutputs, *, model: str, measures: Collection[str]
) -> RunUnits:
    """The units of one model's ``outputs`` on ``columns`` that give the headline ``measures``
    (all of them from one builder); DataError naming a measure no builder resamples."""
    for names, builder in BUILDERS:
        if set(measures) <= names:
            return builder(columns, outputs, model)
    unknown = sorted(set(measures) - set().union(*(names for names, _ in BUILDERS)))
    raise DataError(
        f"the paired comparison cannot resample {', '.join(unknown or sorted(measures))} of model {model!r} "
        f"(it resamples {', '.join(sorted(set().union(*(n for n, _ in BUILDERS))))})",
        model=model,
    )


def model_outputs(
    columns: SampleColumns, predictions: Iterable[Prediction], kinds: Mapping[str, Any]
) -> tuple[np.ndarray, dict[str, ModelOutputs]]:
    """Each model's outputs on the samples some model answered: ``(positions, {model: outputs})``
    (``kinds``: each model's predictor kind, default ``classifier``); a prediction of a sample
    that ``columns`` lacks is a DataError naming it.

    >>> from nlibias.schema import Prediction, Sample
    >>> pair = [Sample(id=s, source="bbnli", domain="d", subtopic="t", premise="P.", hypothesis=f"{s} H.",
    ...                gold="neutral", stereotype=s, pair_key="k") for s in ("pro", "anti")]
    >>> kept, outputs = model_outputs(SampleColumns.from_samples(pair), [Prediction(sample_id="anti",
    ...     model="m", label="neutral")], {})
    >>> kept.tolist(), outputs["m"].label_codes().tolist()
    ([1], [1])
    """
    from nlibias.schema.columns import IdPositions

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
