"""The overall rows of bench/bbq_unifiedqa.py (``--data``): measures pooled over categories from
nlibias' BBQ counts, on hand-made counts (the full BBQ data and answers are not in CI)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from nlibias.metrics.bbq import COUNTS

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bbq_unifiedqa.py"


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bbq_unifiedqa", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def counts(*values: int) -> dict[str, int]:
    return dict(zip(COUNTS, values, strict=True))


A = counts(10, 6, 4, 3, 10, 9, 10, 5, 5, 5, 5, 4)
B = counts(10, 4, 6, 3, 10, 7, 9, 5, 5, 4, 5, 3)


def test_overall_pools_the_counts() -> None:
    # pooled: ambiguous 20 (10 correct, 10 person answers of which 6 biased), disambiguated 20
    # (16 correct); aligned 10 (9 correct), non-aligned 10 (7 correct)
    # accuracy (10 + 16) / 40 = 65; ambiguous 10/20 = 50; disambiguated 16/20 = 80
    # ambiguous errors aligned with the bias 6/10 = 60 (per category 3/4 and 3/6: their mean, 62.5,
    # is not the pooled rate); cost 7/10 - 9/10 = -20 points
    found = bench().overall([A, B])
    expected = {"accuracy": 65.0, "accuracy_ambig": 50.0, "accuracy_disambig": 80.0}
    expected |= {"errors_aligned": 60.0, "cost": -20.0}
    assert found == pytest.approx(expected)


def test_overall_rows_name_the_population(capsys: pytest.CaptureFixture[str]) -> None:
    # one category per format, not intersectional: one row each, flagged as not the paper's population
    module = bench()
    module.print_overall({"RACE": {"Age": {"counts": A}}, "ARC": {"Age": {"counts": B}}})
    out = capsys.readouterr().out
    assert "1 of 9 (the figures')" in out and " of 11" not in out.split("paper:")[0]
    assert "77.8" in out and "76.0" in out and "77.0" in out
    assert "not all 11 categories present" in out
