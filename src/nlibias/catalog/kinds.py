"""The measures built-in benchmarks share per predictor kind.

>>> from nlibias.metrics.bbnli_scorer import score_bbnli_probabilities
>>> from nlibias.report.tables import format_bbnli_tables
>>> from nlibias.metrics.meta import MEASURES
>>> measures = nli_measures(score_bbnli_probabilities, format_bbnli_tables, MEASURES.values())
>>> measures.tables is format_bbnli_tables, measures.score.__name__, measures.infos[0].name
(True, 'score_bbnli_probabilities', 'accuracy')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import partial, update_wrapper
from typing import Any

from nlibias.benchmarks.base import ColumnScorer, Measures, TablesFormatter, UnitsBuilder
from nlibias.metrics.generative import prompt_sensitivity, score_generative_columns
from nlibias.metrics.meta import (
    EXPLANATION_MEASURES,
    GENERATIVE_MEASURES,
    MEASURES,
    TOKEN_PROBABILITY_MEASURES,
)
from nlibias.metrics.paired_units import generative_gap_units, token_probability_units
from nlibias.metrics.token_probability import score_token_probability_columns
from nlibias.report.generative_tables import format_generative_tables
from nlibias.report.tp_tables import format_tp_tables
from nlibias.schema.columns import SampleColumns
from nlibias.schema.measure_info import MeasureInfo
from nlibias.schema.outputs import ModelOutputs


def nli_measures(
    score_probabilities: ColumnScorer,
    tables: TablesFormatter,
    infos: Iterable[MeasureInfo],
    units: UnitsBuilder | None = None,
) -> Measures:
    """Measures from a probability scorer (``score(columns, probs, *, labels=None, model,
    bootstrap, seed)``), the ``infos`` it reports and their resampling ``units``."""
    score = partial(_probability_measures, score_probabilities)
    update_wrapper(score, score_probabilities)
    return Measures(score=score, tables=tables, infos=tuple(infos), units=units)


def _probability_measures(
    scorer: ColumnScorer, columns: SampleColumns, outputs: ModelOutputs, **options: Any
) -> Any:
    if outputs.labels is None:
        return scorer(columns, outputs.probs, **options)
    return scorer(columns, outputs.probs, labels=outputs.labels, **options)


def generative_across(models: Mapping[str, Any]) -> dict[str, Any]:
    return {"generative": {"prompt_sensitivity": prompt_sensitivity(models)}}


def generative_measures(measures: Measures) -> Measures:
    """``measures`` for generative LMs' answers, with the prompt sensitivity across models."""
    return replace(measures, across=generative_across)


GENERATIVE_PAIR_MEASURES = generative_measures(
    Measures(
        score=score_generative_columns,
        tables=format_generative_tables,
        infos=(*MEASURES.values(), *GENERATIVE_MEASURES.values(), *EXPLANATION_MEASURES.values()),
        units=generative_gap_units,
    )
)
"""Generative LMs' yes/no answers on pro/anti pairs: BBNLI's measures, answer rates and the
explanation rates of ``nlibias explain``."""
TOKEN_PROBABILITY = Measures(
    score=score_token_probability_columns,
    tables=format_tp_tables,
    infos=tuple(TOKEN_PROBABILITY_MEASURES.values()),
    units=token_probability_units,
)
"""Language models' sentence scores: token-probability bias (CrowS-Pairs, WinoQueer)."""
