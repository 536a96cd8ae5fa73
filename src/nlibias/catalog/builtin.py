"""The built-in benchmarks (:data:`BUILTIN`): BBNLI, WinoQueer-NLI, gender-occupation, the
sentence-pair sets and BBQ, and the measures they share per predictor kind; their measures:
docs/design.md."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import partial, update_wrapper
from typing import Any

from nlibias.benchmarks import sentence_pairs as readers
from nlibias.benchmarks.base import (
    Benchmark,
    ColumnScorer,
    Expander,
    Extra,
    Measures,
    SentencePair,
    TablesFormatter,
    UnitsBuilder,
    premise_hypothesis_pairs,
)
from nlibias.benchmarks.bbnli_source import BBNLI_DATA, expand_bbnli_source
from nlibias.benchmarks.bbq import BBQ_COMMIT, BBQ_DATA, PROVENANCE, SOURCE, answer_rows, expand_bbq
from nlibias.benchmarks.data_locations import PinnedData
from nlibias.benchmarks.occupation_eval_sets import EVAL_SET_DATA
from nlibias.benchmarks.occupations import expand_occupations
from nlibias.benchmarks.wq_nli import WQ_NLI_DATA, expand_wq_nli
from nlibias.benchmarks.wq_tp import recover_pair
from nlibias.metrics import occupations as occupation_metrics
from nlibias.metrics import wq_nli as wq_nli_metrics
from nlibias.metrics.bbnli_scorer import score_bbnli_probabilities
from nlibias.metrics.bbq import BBQ_CITATION, BBQ_MEASURES, score_bbq_columns
from nlibias.metrics.generative import prompt_sensitivity, score_generative_columns
from nlibias.metrics.meta import (
    EXPLANATION_MEASURES,
    GENERATIVE_MEASURES,
    MEASURES,
    OCCUPATION_MEASURES,
    TOKEN_PROBABILITY_MEASURES,
    WQ_NLI_MEASURES,
)
from nlibias.metrics.paired_units import (
    bbnli_pair_units,
    bbq_template_units,
    generative_gap_units,
    occupation_units,
    token_probability_units,
    wq_nli_units,
)
from nlibias.metrics.pairing import pair_rows
from nlibias.metrics.token_probability import score_token_probability_columns, wq_nli_item_agreement
from nlibias.report.bbq_tables import format_bbq_expansion, format_bbq_tables
from nlibias.report.generative_tables import format_generative_tables
from nlibias.report.occupation_tables import format_occupations_expansion, format_occupations_tables
from nlibias.report.tables import (
    format_bbnli_expansion,
    format_bbnli_tables,
    format_tp_nli,
    format_wq_nli_expansion,
)
from nlibias.report.tp_tables import format_pairs_expansion, format_tp_tables
from nlibias.report.wq_nli_tables import format_wq_nli_tables
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
    bootstrap, seed)``), the ``infos`` it reports and their resampling ``units``.

    >>> measures = nli_measures(score_bbnli_probabilities, format_bbnli_tables, MEASURES.values())
    >>> measures.tables is format_bbnli_tables, measures.score.__name__, measures.infos[0].name
    (True, 'score_bbnli_probabilities', 'accuracy')
    """
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


BBNLI = Benchmark(
    name="bbnli",
    description="BBNLI (Akyürek et al. 2022): templated pro/anti-stereotype NLI pairs and test "
    "hypotheses, from its JSON directory or its expanded CSV; also BBNLI-next and custom pair sets",
    sources=("bbnli", "bbnli-next", "custom"),
    neutral_gold=("bbnli", "bbnli-next"),
    shared_premises=("bbnli-next",),
    measures={
        "classifier": nli_measures(
            score_bbnli_probabilities, format_bbnli_tables, MEASURES.values(), bbnli_pair_units
        ),
        "generative": GENERATIVE_PAIR_MEASURES,
    },
    expand=expand_bbnli_source,
    summary_table=format_bbnli_expansion,
    provenance_keys=(),  # the BBNLI measures read no provenance: audits do not hold it
    pinned_data=(BBNLI_DATA,),
)


def wq_nli_sentence_pairs(columns: SampleColumns) -> list[SentencePair | None]:
    """One entry per sample: the row's recovered WinoQueer pair on its stereotypical (``pro``)
    sample, None on the other and on rows that do not recover (so each row is scored once, its TP
    result beside its M1 under the same pair key); rows paired as the M1-M8 measures pair them."""
    paired = pair_rows(columns, unit="WQ-NLI row")
    pairs: list[SentencePair | None] = [None] * len(columns)
    for pro, anti in zip(paired.first.tolist(), paired.second.tolist(), strict=True):
        pairs[pro] = recover_pair(columns.premise[pro], columns.premise[anti], columns.hypothesis[pro])
    return pairs


def tp_nli_agreement(columns: SampleColumns, outputs: Mapping[str, ModelOutputs]) -> list[dict[str, Any]]:
    """Item-level agreement of every (sentence scorer, NLI classifier) pair of models in the run."""
    return [
        {"tp_model": tp, "nli_model": nli, **wq_nli_item_agreement(columns, outputs[tp], outputs[nli])}
        for tp in outputs
        if outputs[tp].kind == "sentence-logprob"
        for nli in outputs
        if outputs[nli].kind == "classifier"
    ]


_WQ_NLI_MEASURES = nli_measures(
    wq_nli_metrics.score_wq_nli_columns, format_wq_nli_tables, WQ_NLI_MEASURES.values(), wq_nli_units
)

WQ_NLI = Benchmark(
    name="wq-nli",
    description="WinoQueer-NLI (paper 003): stereotypical and counter-stereotypical premises "
    "with a shared hypothesis; measures M1-M8",
    sources=("wq-nli",),
    measures={
        "classifier": _WQ_NLI_MEASURES,
        "generative": generative_measures(_WQ_NLI_MEASURES),
        "sentence-logprob": TOKEN_PROBABILITY,
    },
    expand=expand_wq_nli,
    summary_table=format_wq_nli_expansion,
    provenance_keys=wq_nli_metrics.PROVENANCE_KEYS,
    sentence_pairs=wq_nli_sentence_pairs,
    extras=(Extra("tp_nli_agreement", tp_nli_agreement, tables=format_tp_nli),),
    pinned_data=(WQ_NLI_DATA,),
)

_OCCUPATION_MEASURES = nli_measures(
    occupation_metrics.score_occupations_columns,
    format_occupations_tables,
    OCCUPATION_MEASURES.values(),
    occupation_units,
)

OCCUPATIONS = Benchmark(
    name="occupations",
    description="Gender-occupation NLI challenge set (paper 004): occupation premises x "
    "female/male hypotheses, or the authors' evaluation sets (snli-eval, mnli-eval, ood-eval); "
    "measures S (binary), dP, B, S_3way",
    sources=("occupations",),
    neutral_gold=("occupations",),
    shared_premises=("occupations",),
    measures={"classifier": _OCCUPATION_MEASURES, "generative": generative_measures(_OCCUPATION_MEASURES)},
    expand=expand_occupations,
    expand_options=("balance", "hypothesis_templates", "seed", "strict"),
    summary_table=format_occupations_expansion,
    provenance_keys=occupation_metrics.PROVENANCE_KEYS,
    pinned_data=tuple(EVAL_SET_DATA.values()),
)


def sentence_pair_benchmark(
    name: str, description: str, expand: Expander, pinned_data: tuple[PinnedData, ...] = ()
) -> Benchmark:
    """A benchmark of (more, less) sentence pairs, differing from the others only in its source.

    >>> sentence_pair_benchmark("mine", "my pairs", readers.expand_user_pairs).kinds()
    ('sentence-logprob',)
    """
    return Benchmark(
        name=name,
        description=description,
        sources=(name,),
        measures={"sentence-logprob": TOKEN_PROBABILITY},
        expand=expand,
        summary_table=format_pairs_expansion,
        sentence_pairs=premise_hypothesis_pairs,
        provenance_keys=("direction",),
        pinned_data=pinned_data,
    )


SENTENCE_PAIRS: tuple[Benchmark, ...] = (
    sentence_pair_benchmark(
        "crows-pairs",
        "CrowS-Pairs (Nangia et al. 2020): 1,508 sentence pairs, 9 bias types, stereo and "
        "antistereo directions; token-probability bias of masked and causal LMs",
        readers.expand_crows_pairs,
        (readers.CROWS_PAIRS_DATA,),
    ),
    sentence_pair_benchmark(
        "winoqueer",
        "WinoQueer (Felkner et al. 2023): LGBTQ+ vs counterfactual sentence pairs "
        "(winoqueer_final.csv, pinned by git blob id); token-probability bias",
        readers.expand_winoqueer,
        (readers.WINOQUEER_DATA,),
    ),
    sentence_pair_benchmark(
        "bbnli-tp",
        "BBNLI's pro vs anti hypotheses as sentence pairs (token-probability bias)",
        readers.expand_bbnli_pairs,
        (BBNLI_DATA,),
    ),
    sentence_pair_benchmark(
        "sentence-pairs",
        "Your own (more, less) sentence pairs from a CSV or JSONL file (columns more, less, "
        "optional group); token-probability bias",
        readers.expand_user_pairs,
    ),
)

BBQ = Benchmark(
    name="bbq",
    description="BBQ (Parrish et al. 2022): questions about two people with an 'unknown' option, "
    "in ambiguous and disambiguated contexts; bias scores s_AMB and s_DIS per category",
    sources=(SOURCE,),
    measures={
        "generative": Measures(
            score=score_bbq_columns, tables=format_bbq_tables, infos=BBQ_MEASURES, units=bbq_template_units
        )
    },
    expand=expand_bbq,
    answer_rows=answer_rows,
    resampling_unit="filled template",
    prompt_styles=("race", "arc"),
    summary_table=format_bbq_expansion,
    provenance_keys=PROVENANCE,
    pinned_data=(BBQ_DATA,),
    citation=BBQ_CITATION + " (Findings of ACL 2022)",
    data={"licence": "CC BY 4.0", "commit": BBQ_COMMIT},
)

BUILTIN: tuple[Benchmark, ...] = (BBNLI, WQ_NLI, OCCUPATIONS, *SENTENCE_PAIRS, BBQ)
