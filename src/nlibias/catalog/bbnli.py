"""The registered BBNLI benchmark (also BBNLI-next and custom pair sets); measures: docs/design.md,
"NLI classifiers on BBNLI" and "Generative LMs on BBNLI"."""

from __future__ import annotations

from nlibias.benchmarks.base import Benchmark
from nlibias.benchmarks.bbnli_source import BBNLI_DATA, expand_bbnli_source
from nlibias.catalog.kinds import GENERATIVE_PAIR_MEASURES, nli_measures
from nlibias.metrics.bbnli_scorer import score_bbnli_probabilities
from nlibias.metrics.meta import MEASURES
from nlibias.metrics.paired_units import bbnli_pair_units
from nlibias.report.tables import format_bbnli_expansion, format_bbnli_tables

BENCHMARK = Benchmark(
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
