"""Measures: pure functions over label arrays, their metadata, and one grouped-result object.

>>> from nlibias.metrics import MEASURES, bbnli_measures
>>> MEASURES["accuracy"].direction
'higher'
"""

from nlibias.metrics.bbnli import (
    COUNT_FIELDS,
    BiasCounts,
    PairCounts,
    SliceUnits,
    bbnli_measures,
    bias_counts,
    measures_from_totals,
    pair_counts,
)
from nlibias.metrics.bbnli_scorer import bbnli_frame, compute_bbnli_report
from nlibias.metrics.bootstrap import bootstrap_intervals
from nlibias.metrics.meta import MEASURES, PERCENT_MEASURES, MeasureInfo
from nlibias.metrics.metric_frame import MetricFrame
from nlibias.metrics.pairing import find_pairs

__all__ = [
    "COUNT_FIELDS",
    "MEASURES",
    "PERCENT_MEASURES",
    "BiasCounts",
    "MeasureInfo",
    "MetricFrame",
    "PairCounts",
    "SliceUnits",
    "bbnli_frame",
    "bbnli_measures",
    "bias_counts",
    "bootstrap_intervals",
    "compute_bbnli_report",
    "find_pairs",
    "measures_from_totals",
    "pair_counts",
]
