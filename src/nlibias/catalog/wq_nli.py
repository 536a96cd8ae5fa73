"""The registered WinoQueer-NLI benchmark (paper 003): M1-M8 for classifiers and generative LMs,
token probability on each row's recovered WinoQueer pair, and, with both kinds in one run, their
item-level agreement (TP preference vs M1) as its extra analysis."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlibias.benchmarks.base import Benchmark, Extra
from nlibias.benchmarks.wq_nli import WQ_NLI_DATA, expand_wq_nli
from nlibias.benchmarks.wq_tp import recover_pair
from nlibias.catalog.kinds import TOKEN_PROBABILITY, generative_measures, nli_measures
from nlibias.metrics.meta import WQ_NLI_MEASURES
from nlibias.metrics.paired_units import wq_nli_units
from nlibias.metrics.pairing import pair_rows
from nlibias.metrics.token_probability import wq_nli_item_agreement
from nlibias.metrics.wq_nli import PROVENANCE_KEYS, score_wq_nli_columns
from nlibias.report.tables import format_tp_nli, format_wq_nli_expansion
from nlibias.report.wq_nli_tables import format_wq_nli_tables
from nlibias.schema.columns import SampleColumns
from nlibias.schema.outputs import ModelOutputs
from nlibias.schema.sentence_pairs import SentencePair


def wq_nli_sentence_pairs(columns: SampleColumns) -> list[SentencePair | None]:
    """One entry per sample: the row's recovered WinoQueer pair on its stereotypical (``pro``)
    sample, None on the counter-stereotypical one and on rows that do not recover (so each row is
    scored once and its TP result sits beside its M1 under the same pair key). Rows are paired as
    the M1-M8 measures pair them (:func:`nlibias.metrics.pairing.pair_rows`)."""
    paired = pair_rows(columns, unit="WQ-NLI row")
    pairs: list[SentencePair | None] = [None] * len(columns)
    for pro, anti in zip(paired.first.tolist(), paired.second.tolist(), strict=True):
        pairs[pro] = recover_pair(columns.premise[pro], columns.premise[anti], columns.hypothesis[pro])
    return pairs


def tp_nli_agreement(columns: SampleColumns, outputs: Mapping[str, ModelOutputs]) -> list[dict[str, Any]]:
    """Item-level agreement of every (sentence scorer, NLI classifier) pair of models in the run
    (empty without both kinds)."""
    return [
        {"tp_model": tp, "nli_model": nli, **wq_nli_item_agreement(columns, outputs[tp], outputs[nli])}
        for tp in outputs
        if outputs[tp].kind == "sentence-logprob"
        for nli in outputs
        if outputs[nli].kind == "classifier"
    ]


_MEASURES = nli_measures(score_wq_nli_columns, format_wq_nli_tables, WQ_NLI_MEASURES.values(), wq_nli_units)

BENCHMARK = Benchmark(
    name="wq-nli",
    description="WinoQueer-NLI (paper 003): stereotypical and counter-stereotypical premises "
    "with a shared hypothesis; measures M1-M8",
    sources=("wq-nli",),
    measures={
        "classifier": _MEASURES,
        "generative": generative_measures(_MEASURES),
        "sentence-logprob": TOKEN_PROBABILITY,
    },
    expand=expand_wq_nli,
    summary_table=format_wq_nli_expansion,
    provenance_keys=PROVENANCE_KEYS,
    sentence_pairs=wq_nli_sentence_pairs,
    extras=(Extra("tp_nli_agreement", tp_nli_agreement, tables=format_tp_nli),),
    pinned_data=(WQ_NLI_DATA,),
)
