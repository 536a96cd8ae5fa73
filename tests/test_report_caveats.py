"""The report's caveats box comes from the run's own metadata: the demo flag, unvalidated
samples, a small model, few samples, no intervals, degenerate pairs (issue #29)."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace
from pathlib import Path

from nlibias.io.samples import write_samples
from nlibias.report.html import render_report
from nlibias.report.load import Run, load_run
from nlibias.report.run_notes import parameters_named, run_caveats
from nlibias.testing.report_runs import bbnli_like_samples, write_metrics_run


def _load(run: Path) -> Run:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hand-written run directories have no manifest
        return load_run(run)


def test_a_real_size_run_with_a_large_model_has_no_caveats(tmp_path: Path) -> None:
    doc = {
        "source": "bbnli",
        "n_samples": 2276,
        "bootstrap": {"resamples": 1000, "seed": 0, "confidence": 0.95, "unit": "pair"},
        "models": {"m": {"overall": {"accuracy": 60.0, "misprediction_rate": 40.0}}},
        "run": {"models": {"m": {"model": "meta-llama/Llama-3.1-8B-Instruct"}}},
    }
    run = _load(write_metrics_run(tmp_path, "big", doc))
    assert run_caveats(run) == []
    assert 'id="caveats"' not in render_report([run], plots=False).html


def test_demo_small_model_few_samples_no_intervals_degenerate(tmp_path: Path) -> None:
    doc = {
        "source": "bbnli",
        "n_samples": 480,
        "bootstrap": {"resamples": 0, "seed": 0, "confidence": 0.95, "unit": "pair"},
        "models": {"s": {"overall": {"degenerate_pairs": 10}}},
        "run": {
            "models": {
                "s": {"model": "smollm2", "identity": {"gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf"}}
            }
        },
        "demo": {"disclaimer": "A demonstration, not a verdict."},
    }
    run = _load(write_metrics_run(tmp_path, "demo", doc))
    kinds = [c.kind for c in run_caveats(run)]
    assert kinds == ["demo", "small-model", "few-samples", "no-intervals", "degenerate-pairs"]
    html = render_report([run], plots=False).html
    # The box comes before the navigation and the first section.
    assert html.index('id="caveats"') < html.index("<nav>") < html.index('id="provenance"')
    assert "A demonstration, not a verdict." in html and "135M parameters" in html
    assert "Only 480 samples" in html and "10 degenerate pairs" in html


def test_unvalidated_samples_are_named(tmp_path: Path) -> None:
    samples = bbnli_like_samples()
    unvalidated = {"validation": {"judgement": "unvalidated"}}
    marked = [
        replace(s, provenance={**dict(s.provenance), **unvalidated}) if i < 3 else s
        for i, s in enumerate(samples)
    ]
    write_samples(tmp_path / "samples", marked)
    doc = {
        "source": "bbnli-next",
        "models": {"m": {"overall": {}}},
        "run": {"samples": str(tmp_path / "samples")},
    }
    run = _load(write_metrics_run(tmp_path, "ext", doc))
    [caveat] = [c for c in run_caveats(run) if c.kind == "unvalidated"]
    assert caveat.text.startswith("3 of the samples are UNVALIDATED")  # the three marked above


def test_parameter_counts_from_model_ids() -> None:
    assert parameters_named("Qwen2.5-0.5B-Instruct") == 0.5e9
    assert parameters_named("SmolLM2-1.7B") == 1.7e9
    assert parameters_named("ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli") is None
    assert json.dumps(parameters_named("bert-base-cased")) == "null"
