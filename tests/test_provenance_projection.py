"""An audit loads only the provenance its measures read, and scores exactly as with all of it.

The benchmarks declare the provenance keys their measures read (``Benchmark.provenance_keys``); a
scorer that starts reading another key without declaring it makes these tests fail, because
the metrics of the trimmed samples then differ from those of the full ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import nlibias.catalog.registry as scoring
from nlibias.benchmarks.base import Benchmark
from nlibias.benchmarks.bbnli_source import BBNLI_DATA
from nlibias.benchmarks.data_locations import resolve_data
from nlibias.catalog.builtin import BBNLI
from nlibias.catalog.registry import get_benchmark, read_benchmark_samples, register_benchmark
from nlibias.io.samples import read_samples, write_samples
from nlibias.models.fake import FakeNLIClassifier
from nlibias.runtime.classifier import ClassifierPredictor
from nlibias.schema import LABELS, Prediction, Sample
from nlibias.testing.reference_audit import build_metrics


def _samples(source: str) -> list[Sample]:
    if source == "bbnli":
        from nlibias.benchmarks.bbnli import expand_bbnli

        return list(expand_bbnli(resolve_data(BBNLI_DATA)).samples)
    if source == "wq-nli":
        from nlibias.benchmarks.wq_nli import expand_wq_nli

        samples = list(expand_wq_nli().samples)
        # The first 3,000 rows (every grouping appears) and the 128 rows repeating earlier ones.
        return samples[:6000] + [s for s in samples[6000:] if s.provenance.get("repeat_of") is not None]
    from nlibias.benchmarks.occupations import expand_occupations

    return list(expand_occupations().samples)


@pytest.mark.parametrize("source", ["bbnli", "wq-nli", "occupations"])
def test_scores_of_trimmed_samples_equal_scores_of_full_samples(source: str, tmp_path: Path) -> None:
    full = _samples(source)
    write_samples(tmp_path, full)
    checked = read_benchmark_samples(tmp_path)
    trimmed = checked.records()
    kept = get_benchmark(source).provenance()
    assert kept is not None
    assert all(set(s.provenance) <= kept for s in trimmed)
    assert any(s.provenance for s in full)  # there was something to leave out
    predictions = list(
        ClassifierPredictor(FakeNLIClassifier()).predict(checked, None, progress=False).predictions
    )
    if source == "bbnli":  # a generative model's answers are scored too (its own measures)
        predictions += [
            Prediction(s.id, "lm|prompt=true|scored", LABELS[i % 2 * 2], extra={"answer": "yes"})
            for i, s in enumerate(full)
        ]
    expected = build_metrics(read_samples(tmp_path), predictions, bootstrap=40, seed=3)
    got = build_metrics(trimmed, predictions, bootstrap=40, seed=3)
    assert got == expected
    assert json.dumps(expected, sort_keys=True) == json.dumps(got, sort_keys=True)


def test_bbnli_audits_hold_no_provenance_and_undeclared_keys_keep_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scoring, "_BY_NAME", scoring._BY_NAME.copy())
    monkeypatch.setattr(scoring, "_BY_SOURCE", scoring._BY_SOURCE.copy())
    register_benchmark(
        Benchmark("my-bench", "keeps all", ("my-bench",), BBNLI.measures, provenance_keys=None)
    )
    sample = Sample(
        id="a", source="my-bench", domain="d", subtopic="t", premise="P.", hypothesis="H.",
        gold="neutral", provenance={"row": 1, "note": "kept"},
    )  # fmt: skip
    write_samples(tmp_path / "mine", [sample])
    assert read_benchmark_samples(tmp_path / "mine").records()[0].provenance == {"row": 1, "note": "kept"}
    write_samples(tmp_path / "bbnli", [Sample(**{**sample.to_dict(), "source": "bbnli"})])
    assert read_benchmark_samples(tmp_path / "bbnli").records()[0].provenance == {}


def test_a_registered_scorer_can_declare_its_provenance_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # leave no registration behind
    monkeypatch.setattr(scoring, "_BY_NAME", scoring._BY_NAME.copy())
    monkeypatch.setattr(scoring, "_BY_SOURCE", scoring._BY_SOURCE.copy())
    register_benchmark(
        Benchmark(
            name="declared-bench",
            description="a test benchmark",
            sources=("declared-bench",),
            measures=BBNLI.measures,
            provenance_keys=["row"],
        )
    )
    sample = Sample(
        id="a", source="declared-bench", domain="d", subtopic="t", premise="P.", hypothesis="H.",
        gold="neutral", provenance={"row": 1, "note": "dropped"},
    )  # fmt: skip
    write_samples(tmp_path, [sample])
    assert read_benchmark_samples(tmp_path).records()[0].provenance == {"row": 1}
