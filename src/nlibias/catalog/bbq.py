"""The registered BBQ benchmark, for answers read as options (imported or generated); measures:
docs/design.md, "BBQ"."""

from __future__ import annotations

from nlibias.benchmarks.base import Benchmark, Measures
from nlibias.benchmarks.bbq import BBQ_COMMIT, BBQ_DATA, PROVENANCE, SOURCE, answer_rows, expand_bbq
from nlibias.metrics.bbq import BBQ_CITATION, BBQ_MEASURES, score_bbq_columns
from nlibias.metrics.paired_units import bbq_template_units
from nlibias.report.bbq_tables import format_bbq_expansion, format_bbq_tables

BENCHMARK = Benchmark(
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
