"""The object audit and scoring: the tests' and benchmarks' independent reference.

Samples and predictions held as objects, each model scored with its benchmark's object scorer
(:attr:`nlibias.benchmarks.base.Benchmark.scorer`, or the generative pair measures): what the
library computed before its one columnar path (:func:`nlibias.jobs.streamed_audit.audit_samples`,
:func:`nlibias.jobs.score.score_files`). Tests check that path against this one; ``bench/`` times
it as the naive way. Not part of the library's run path.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlibias.benchmarks.registry import samples_source, scorer_for
from nlibias.errors import ConfigError
from nlibias.io.predictions import read_predictions
from nlibias.io.results import MetricsDocument
from nlibias.jobs.audit import (
    AuditResult,
    check_bootstrap,
    check_predictors,
    finish_run,
    metrics_document,
    read_samples_to_score,
    run_section,
    score_run_section,
)
from nlibias.runtime.base import Predictor
from nlibias.runtime.cache import PredictionCache
from nlibias.schema import Prediction, Sample
from nlibias.schema.model_keys import PredictorKind


def build_metrics(
    samples: Sequence[Sample], predictions: Sequence[Prediction], *, bootstrap: int = 1000, seed: int = 0
) -> MetricsDocument:
    """``metrics.json`` without ``run`` for every model present in ``predictions`` (object scorers)."""
    check_bootstrap(bootstrap)
    source = samples_source(samples)
    by_model: dict[str, list[Prediction]] = {}
    kinds: dict[str, PredictorKind] = {}
    for prediction in predictions:
        by_model.setdefault(prediction.model, []).append(prediction)
        kinds.setdefault(prediction.model, prediction.kind)  # type: ignore[arg-type]
    models = {
        model: scorer_for(source, kinds[model])(samples, rows, bootstrap=bootstrap, seed=seed)
        for model, rows in by_model.items()
    }
    domain_of: dict[str, str] = {}
    for sample in samples:  # each subtopic's first domain, as SampleColumns.domain_of_subtopic
        domain_of.setdefault(sample.subtopic, sample.domain)
    return metrics_document(
        source, len(samples), models, kinds, bootstrap=bootstrap, seed=seed, domain_of=domain_of
    )


def audit_objects(
    samples: Sequence[Sample],
    predictors: Sequence[Predictor],
    *,
    out_dir: str | Path | None,
    cache: PredictionCache | None,
    bootstrap: int = 1000,
    seed: int = 0,
    progress: bool = False,
    samples_path: str | Path | None = None,
) -> AuditResult:
    """Predict every sample with every predictor, score the objects, write ``out_dir``."""
    if not samples:
        raise ConfigError("no samples to audit", parameter="samples")
    check_predictors(predictors)
    predictions: list[Prediction] = []
    model_runs: dict[str, Any] = {}
    for predictor in predictors:
        started = time.perf_counter()
        run = predictor.predict(samples, cache, progress=progress)
        predictions.extend(run.predictions)
        model_runs[predictor.name] = {
            **predictor.describe(),
            "stats": {**run.stats, "wall_seconds": round(time.perf_counter() - started, 3)},
        }
    metrics = build_metrics(samples, predictions, bootstrap=bootstrap, seed=seed)
    metrics["run"] = run_section(samples_path, model_runs, cache)
    return finish_run(out_dir, predictions, metrics)


def score_objects(
    samples_path: str | Path,
    predictions_path: str | Path,
    *,
    out_dir: str | Path | None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> AuditResult:
    """Score a predictions file with samples and predictions as objects (only predicted samples)."""
    samples = read_samples_to_score(samples_path)
    known = {s.id for s in samples}
    predictions = read_predictions(predictions_path, known_ids=known)
    predicted = {p.sample_id for p in predictions}
    subset = [s for s in samples if s.id in predicted]
    metrics = build_metrics(subset, predictions, bootstrap=bootstrap, seed=seed)
    metrics["run"] = score_run_section(samples_path, predictions_path, scored=len(subset), given=len(samples))
    return finish_run(out_dir, predictions, metrics)


def audit_sample_list(
    samples: Sequence[Sample],
    predictors: Sequence[Predictor],
    *,
    out_dir: str | Path | None,
    cache: PredictionCache | None,
    bootstrap: int = 1000,
    seed: int = 0,
    progress: bool = False,
    samples_dir: str | Path | None = None,
) -> AuditResult:
    """The library's audit (:func:`~nlibias.jobs.streamed_audit.audit_samples`) of sample objects,
    written first to ``samples_dir`` (default: a new temporary directory), for tests that build
    their samples in memory."""
    import tempfile

    from nlibias.io.samples import write_samples
    from nlibias.jobs.streamed_audit import audit_samples, read_samples_to_audit

    directory = (
        Path(samples_dir) if samples_dir is not None else Path(tempfile.mkdtemp(prefix="nlibias-test-"))
    )
    if not (directory / "samples.jsonl").exists():
        write_samples(directory, samples)
    return audit_samples(
        read_samples_to_audit(directory),
        predictors,
        out_dir=out_dir,
        cache=cache,
        bootstrap=bootstrap,
        seed=seed,
        progress=progress,
    )
