"""BBNLI from either of its layouts: the JSON directory (:mod:`nlibias.benchmarks.bbnli`) or the
expanded CSV of BBNLI's own ``json2csv.py`` (:mod:`nlibias.benchmarks.bbnli_csv`); the
benchmark's :attr:`~nlibias.benchmarks.base.Benchmark.expand`."""

from __future__ import annotations

from pathlib import Path

from nlibias.benchmarks.bbnli import Expansion, expand_bbnli
from nlibias.benchmarks.bbnli_csv import read_bbnli_csv


def expand_bbnli_source(source: str | Path | None = None) -> Expansion:
    """BBNLI's JSON directory (:func:`expand_bbnli`) or expanded CSV (:func:`read_bbnli_csv`) at ``source``, by default BBNLI in the data dir (the benchmark's
    :attr:`~nlibias.benchmarks.base.Benchmark.expand`); the summary names the resolved source."""
    from dataclasses import replace

    from nlibias.benchmarks.data_locations import resolve_benchmark_path

    path = resolve_benchmark_path("bbnli", source)
    expansion = (
        read_bbnli_csv(path) if path.is_file() and path.suffix.lower() == ".csv" else expand_bbnli(path)
    )
    return replace(expansion, origin=str(path))
