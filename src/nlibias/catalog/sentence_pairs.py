"""Sentence-pair benchmarks scored for token-probability bias (CrowS-Pairs, WinoQueer, BBNLI's
pro/anti hypotheses, a user's own pairs): one definition, parametrised by name and reader."""

from __future__ import annotations

from nlibias.benchmarks import sentence_pairs as readers
from nlibias.benchmarks.base import Benchmark, Expander
from nlibias.benchmarks.bbnli_source import BBNLI_DATA
from nlibias.benchmarks.data_locations import PinnedData
from nlibias.catalog.kinds import TOKEN_PROBABILITY
from nlibias.report.tp_tables import format_pairs_expansion
from nlibias.schema.sentence_pairs import premise_hypothesis_pairs


def sentence_pair_benchmark(
    name: str, description: str, expand: Expander, pinned_data: tuple[PinnedData, ...] = ()
) -> Benchmark:
    """A benchmark of (more, less) sentence pairs: every one shares the pairs' reading, measures,
    tables and summary and differs only in its source (and the pinned data it reads, if any).

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


BENCHMARKS: tuple[Benchmark, ...] = (
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
