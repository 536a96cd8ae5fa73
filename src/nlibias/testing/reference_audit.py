"""The audit and scoring over objects: the tests' independent reference and ``bench/``'s naive way."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from nlibias.benchmarks.base import BenchmarkSamples
from nlibias.catalog.registry import benchmark_of, read_benchmark_samples
from nlibias.errors import ConfigError
from nlibias.io.predictions import read_predictions
from nlibias.io.results import MetricsDocument
from nlibias.io.samples import read_samples, write_samples
from nlibias.jobs import results
from nlibias.jobs.audit import audit_samples
from nlibias.jobs.results import AuditResult
from nlibias.metrics.bbnli_scorer import score_bbnli
from nlibias.metrics.generative import score_generative
from nlibias.metrics.occupations import score_occupations
from nlibias.metrics.token_probability import score_token_probability
from nlibias.metrics.wq_nli import score_wq_nli
from nlibias.runtime.contract import Predictor
from nlibias.runtime.options import check_bootstrap
from nlibias.schema import Prediction, Sample
from nlibias.schema.columns import SampleColumns
from nlibias.schema.outputs import ModelOutputs

ObjectScorer = Callable[..., dict[str, Any]]
OBJECT_SCORERS: dict[tuple[str, str], ObjectScorer] = {
    ("bbnli", "classifier"): score_bbnli,
    ("bbnli", "generative"): score_generative,
    ("wq-nli", "classifier"): score_wq_nli,
    ("wq-nli", "generative"): score_wq_nli,
    ("occupations", "classifier"): score_occupations,
    ("occupations", "generative"): score_occupations,
}
"""Each built-in benchmark's measures over objects, by predictor kind (sentence scorers: TP)."""


def _object_scorer(benchmark: str, kind: str) -> ObjectScorer:
    if kind == "sentence-logprob":
        return score_token_probability
    return OBJECT_SCORERS[(benchmark, kind)]


def build_metrics(
    samples: Sequence[Sample], predictions: Sequence[Prediction], *, bootstrap: int = 1000, seed: int = 0
) -> MetricsDocument:
    """``metrics.json`` without ``run`` for every model present in ``predictions`` (object scorers),
    with the benchmark's analyses across models (:func:`nlibias.jobs.results.scored_metrics`)."""
    check_bootstrap(bootstrap)
    benchmark = benchmark_of(samples)
    position = {sample.id: i for i, sample in enumerate(samples)}
    by_model: dict[str, list[Prediction]] = {}
    kinds: dict[str, str] = {}
    rows: dict[str, list[Prediction | None]] = {}
    for prediction in predictions:
        by_model.setdefault(prediction.model, []).append(prediction)
        kinds.setdefault(prediction.model, prediction.kind)
        rows.setdefault(prediction.model, [None] * len(samples))[position[prediction.sample_id]] = prediction
    models = {
        model: _object_scorer(benchmark.name, kinds[model])(samples, found, bootstrap=bootstrap, seed=seed)
        for model, found in by_model.items()
    }
    outputs = {model: ModelOutputs.of_predictions(found, kinds[model]) for model, found in rows.items()}
    columns = SampleColumns.from_samples(samples, provenance_keys=benchmark.provenance() or ())
    return results.scored_metrics(benchmark, columns, models, kinds, outputs, bootstrap=bootstrap, seed=seed)


def audit_objects(
    samples: Sequence[Sample],
    predictors: Sequence[Predictor],
    *,
    samples_path: str | Path | None = None,
    **options: Any,
) -> AuditResult:
    """Predict every sample with every predictor, score the objects, write ``out_dir`` (options as
    the library's audit)."""
    out_dir, cache = options["out_dir"], options["cache"]
    bootstrap, seed = options.get("bootstrap", 1000), options.get("seed", 0)
    progress = options.get("progress", False)
    if not samples:
        raise ConfigError("no samples to audit", parameter="samples")
    results.check_predictors(predictors)
    benchmark = benchmark_of(samples)
    columns = SampleColumns.from_samples(samples, provenance_keys=benchmark.provenance() or ())
    given = BenchmarkSamples(benchmark, columns)
    predictions: list[Prediction] = []
    model_runs: dict[str, Any] = {}
    for predictor in predictors:
        started = time.perf_counter()
        run = predictor.predict(given, cache, progress=progress)
        predictions.extend(run.predictions)
        wall = round(time.perf_counter() - started, 3)
        model_runs[predictor.name] = {**predictor.describe(), "stats": {**run.stats, "wall_seconds": wall}}
    metrics = build_metrics(samples, predictions, bootstrap=bootstrap, seed=seed)
    cache_path = None if cache is None else str(cache.path)
    metrics["run"] = results.run_info(samples_path, models=model_runs, cache=cache_path)
    return results.finish_run(out_dir, list(predictions), metrics, benchmark)


def score_objects(
    samples_path: str | Path,
    predictions_path: str | Path,
    *,
    out_dir: str | Path | None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> AuditResult:
    """Score a predictions file with samples and predictions as objects (only predicted samples)."""
    benchmark = read_benchmark_samples(samples_path).benchmark
    samples = read_samples(samples_path, provenance_keys=benchmark.provenance(), benchmark=benchmark)
    known = {s.id for s in samples}
    predictions = read_predictions(predictions_path, known_ids=known)
    predicted = {p.sample_id for p in predictions}
    subset = [s for s in samples if s.id in predicted]
    metrics = build_metrics(subset, predictions, bootstrap=bootstrap, seed=seed)
    metrics["run"] = results.run_info(
        samples_path,
        predictions=str(predictions_path),
        samples_scored=len(subset),
        samples_given=len(samples),
    )
    return results.finish_run(out_dir, predictions, metrics, benchmark)


def audit_sample_list(
    samples: Sequence[Sample],
    predictors: Sequence[Predictor],
    *,
    samples_dir: str | Path | None = None,
    **options: Any,
) -> AuditResult:
    """The library's audit of sample objects, written first to ``samples_dir`` (default: temporary)."""
    directory = Path(samples_dir or tempfile.mkdtemp(prefix="nlibias-test-"))
    if not (directory / "samples.jsonl").exists():
        write_samples(directory, samples)
    return audit_samples(read_benchmark_samples(directory), predictors, **{"progress": False, **options})
