"""Sample rules are the benchmark's (neutral gold, shared premises): the catalog declares them on
each :class:`~nlibias.benchmarks.base.Benchmark` and the samples reader applies those it is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlibias.benchmarks.base import Benchmark
from nlibias.catalog.registry import get_benchmark, read_benchmark_samples
from nlibias.errors import SourceError
from nlibias.io.samples import read_samples, write_samples
from nlibias.schema import Sample


def _pair(source: str, *, gold: str = "neutral", anti_premise: str = "P.") -> list[Sample]:
    """A pro/anti pair of ``source``; the pro sample has ``gold``, the anti one ``anti_premise``."""
    return [
        Sample("a:pro", source, "gender", "t", "P.", "He can.", gold, stereotype="pro", pair_key="a"),
        Sample(
            "a:anti",
            source,
            "gender",
            "t",
            anti_premise,
            "She can.",
            "neutral",
            stereotype="anti",
            pair_key="a",
        ),
    ]


def test_the_catalog_declares_the_rules_on_its_benchmarks() -> None:
    bbnli, occupations, wq = get_benchmark("bbnli"), get_benchmark("occupations"), get_benchmark("wq-nli")
    assert (bbnli.neutral_gold, bbnli.shared_premises) == (("bbnli", "bbnli-next"), ("bbnli-next",))
    assert (occupations.neutral_gold, occupations.shared_premises) == (("occupations",), ("occupations",))
    assert (wq.neutral_gold, wq.shared_premises) == ((), ())


def test_a_neutral_gold_source_refuses_a_bias_sample_with_another_gold(tmp_path: Path) -> None:
    paths = write_samples(tmp_path, _pair("bbnli", gold="entailment"))
    with pytest.raises(
        SourceError, match=r"a bbnli bias sample \(stereotype pro\) has gold entailment"
    ) as refused:
        read_benchmark_samples(paths["jsonl"])  # the catalog resolves bbnli and passes it down
    assert refused.value.field == "gold" and refused.value.line == 1
    assert [s.gold for s in read_samples(paths["jsonl"])] == [
        "entailment",
        "neutral",
    ]  # no benchmark, no rule


def test_a_shared_premise_source_refuses_a_pair_with_two_premises(tmp_path: Path) -> None:
    rules = Benchmark(name="mine", description="", sources=("mine",), shared_premises=("mine",))
    paths = write_samples(tmp_path, _pair("mine", anti_premise="Q."))
    with pytest.raises(SourceError, match=r"the two samples of pair 'a' differ in premise: 'P\.' on line 1"):
        read_samples(paths["jsonl"], benchmark=rules)
    other = Benchmark(name="mine", description="", sources=("mine",))  # premises may differ
    assert len(read_samples(paths["jsonl"], benchmark=other)) == 2
