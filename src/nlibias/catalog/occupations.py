"""The gender-occupation NLI challenge set (paper 004) and the authors' evaluation sets: its
measures S (binary), ΔP, B and S_3way for classifiers and for generative LMs' answers alike."""

from __future__ import annotations

from nlibias.benchmarks.base import Benchmark
from nlibias.benchmarks.occupation_eval_sets import EVAL_SET_DATA
from nlibias.benchmarks.occupations import expand_occupations
from nlibias.catalog.kinds import generative_measures, nli_measures
from nlibias.metrics.meta import OCCUPATION_MEASURES
from nlibias.metrics.occupations import PROVENANCE_KEYS, score_occupations_columns
from nlibias.metrics.paired_units import occupation_units
from nlibias.report.occupation_tables import format_occupations_expansion, format_occupations_tables

_MEASURES = nli_measures(
    score_occupations_columns, format_occupations_tables, OCCUPATION_MEASURES.values(), occupation_units
)

BENCHMARK = Benchmark(
    name="occupations",
    description="Gender-occupation NLI challenge set (paper 004): occupation premises x "
    "female/male hypotheses, or the authors' evaluation sets (snli-eval, mnli-eval, ood-eval); "
    "measures S (binary), dP, B, S_3way",
    sources=("occupations",),
    neutral_gold=("occupations",),
    shared_premises=("occupations",),
    measures={"classifier": _MEASURES, "generative": generative_measures(_MEASURES)},
    expand=expand_occupations,
    expand_options=("balance", "hypothesis_templates", "seed", "strict"),
    summary_table=format_occupations_expansion,
    provenance_keys=PROVENANCE_KEYS,
    pinned_data=tuple(EVAL_SET_DATA.values()),
)
