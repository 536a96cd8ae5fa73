"""Audit: run predictors over samples (through the cache), score them, write the run directory.

A run directory holds ``predictions.jsonl`` (one row per sample and model), ``metrics.json``
(``{"models": {MODEL: {"overall": M, "by_domain": {...}, "by_subtopic": {...}}}}`` plus run
information) and ``tables.txt``. Model outputs live in the prediction cache, so an interrupted
audit rerun with the same command computes only what is missing.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nlibias import __version__
from nlibias.benchmarks.registry import provenance_keys_for, samples_source, scorer_for
from nlibias.errors import ConfigError
from nlibias.io.atomic import atomic_write_text, write_json
from nlibias.io.predictions import PREDICTIONS_JSONL, write_predictions
from nlibias.io.samples import peek_source, read_samples
from nlibias.report.tables import format_all_tables
from nlibias.runtime.base import Predictor
from nlibias.runtime.cache import PredictionCache
from nlibias.schema import Prediction, Sample
from nlibias.schema.model_keys import PredictorKind

if TYPE_CHECKING:
    import pandas as pd

METRICS_JSON = "metrics.json"
TABLES_TXT = "tables.txt"


class Tables(str):
    """Text tables that show as themselves in a REPL or notebook (not as a quoted string)."""

    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True)
class AuditResult:
    """What an audit or a scoring produced: the data written to ``out_dir`` (when one was given).

    ``metrics`` is the content of ``metrics.json``; :meth:`to_frame` gives it as a tidy pandas
    DataFrame, :meth:`tables` as the papers' text layouts; ``predictions`` are the rows of
    ``predictions.jsonl``.
    """

    out_dir: Path | None
    metrics: Mapping[str, Any]
    """The content of ``metrics.json``."""
    tables_text: str
    """The text tables as written to ``tables.txt``."""
    predictions: Sequence[Prediction] = field(repr=False, default=())

    def to_frame(self) -> pd.DataFrame:
        """Every measure as a tidy DataFrame: model, slicing, slice, measure, value, ci_low,
        ci_high, n (one row per model, slice and measure)."""
        from nlibias.report.frame import metrics_frame

        return metrics_frame(self.metrics)

    def tables(self, *, by: str = "domain") -> Tables:
        """The text tables in the papers' layouts (``by``: domain or subtopic slices)."""
        return Tables(format_all_tables(self.metrics, by=by))

    def materialised(self) -> AuditResult:
        """The same result with its predictions held in memory (a streamed run reads them from
        its files on demand)."""
        if isinstance(self.predictions, tuple):
            return self
        return replace(self, predictions=tuple(self.predictions))


def read_samples_to_score(path: str | Path) -> list[Sample]:
    """The samples of a run directory or samples file, with only the provenance keys their
    benchmark's measures read (:func:`nlibias.benchmarks.registry.provenance_keys_for`): the BBNLI measures
    read none, so an audit of an extended run does not hold its samples' provenance records
    (1.8 kB a sample in memory).
    """
    return read_samples(path, provenance_keys=provenance_keys_for(peek_source(path)))


def build_metrics(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """``{"source": ..., "models": {MODEL: metrics}}`` for every model present in ``predictions``."""
    check_bootstrap(bootstrap)
    source = samples_source(samples)
    by_model: dict[str, list[Prediction]] = {}
    kinds: dict[str, PredictorKind] = {}
    for prediction in predictions:
        by_model.setdefault(prediction.model, []).append(prediction)
        kinds.setdefault(prediction.model, prediction.kind)  # type: ignore[arg-type]
    models = {
        model: scorer_for(source, kinds[model])(samples, model_predictions, bootstrap=bootstrap, seed=seed)
        for model, model_predictions in by_model.items()
    }
    metrics = metrics_document(source, len(samples), models, kinds, bootstrap=bootstrap, seed=seed)
    if source == "wq-nli":
        from nlibias.metrics.token_probability import wq_nli_item_agreement

        agreement = [
            {"tp_model": tp, "nli_model": nli, **wq_nli_item_agreement(samples, by_model[tp], by_model[nli])}
            for tp in by_model
            if kinds[tp] == "sentence-logprob"
            for nli in by_model
            if kinds[nli] == "classifier"
        ]
        if agreement:
            metrics["tp_nli_agreement"] = agreement
    return metrics


def check_bootstrap(bootstrap: int) -> None:
    if bootstrap < 0:
        raise ConfigError(
            f"bootstrap is {bootstrap}; pass 0 (no intervals) or a positive number of resamples",
            parameter="bootstrap",
        )


def metrics_document(
    source: str,
    n_samples: int,
    models: dict[str, Any],
    kinds: Mapping[str, str],
    *,
    bootstrap: int,
    seed: int,
) -> dict[str, Any]:
    """``metrics.json`` without its ``run`` section, from each model's metrics and predictor kind."""
    metrics: dict[str, Any] = {
        "source": source,
        "n_samples": n_samples,
        "bootstrap": {"resamples": bootstrap, "seed": seed, "confidence": 0.95, "unit": "pair"},
        "models": models,
        "predictor_kinds": {model: kinds[model] for model in models},
    }
    generative = {k: v for k, v in models.items() if kinds[k] == "generative"}
    if generative:
        from nlibias.metrics.generative import prompt_sensitivity

        metrics["generative"] = {"prompt_sensitivity": prompt_sensitivity(generative)}
    return metrics


def write_outputs(
    out_dir: Path, predictions: Iterable[Prediction] | None, metrics: dict[str, Any], tables: str
) -> None:
    """The run directory's files (each written to a temporary name, then renamed); ``predictions``
    None: ``predictions.jsonl`` is already there."""
    if predictions is not None:
        write_predictions(out_dir / PREDICTIONS_JSONL, predictions)
    write_json(out_dir / METRICS_JSON, metrics)
    atomic_write_text(out_dir / TABLES_TXT, tables + "\n")


def run_info(samples_path: str | Path | None) -> dict[str, Any]:
    """Versions and machine facts recorded with every result."""
    info: dict[str, Any] = {
        "nlibias": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "samples": str(samples_path) if samples_path is not None else None,
    }
    for package in ("torch", "transformers"):
        try:
            from importlib.metadata import version

            info[package] = version(package)
        except Exception:  # not installed: nothing to record
            continue
    return info


def check_predictors(predictors: Sequence[Predictor]) -> None:
    """Refuse no model and model keys given twice (their results would overwrite each other)."""
    if not predictors:
        raise ConfigError(
            "no model given: pass an NLI classifier or a generative LM in models", parameter="models"
        )
    names = [p.name for p in predictors]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"model key(s) given twice: {', '.join(duplicates)}")


def run_section(
    samples_path: str | Path | None, model_runs: dict[str, Any], cache: PredictionCache | None
) -> dict[str, Any]:
    """``metrics.json``'s ``run``: versions, machine, each model's description and stats, cache."""
    return {
        **run_info(samples_path),
        "models": model_runs,
        "cache": str(cache.path) if cache is not None else None,
    }


def audit(
    samples: Sequence[Sample],
    predictors: Sequence[Predictor],
    *,
    out_dir: str | Path | None,
    cache: PredictionCache | None,
    bootstrap: int = 1000,
    seed: int = 0,
    progress: bool = True,
    samples_path: str | Path | None = None,
    extra: Mapping[str, Any] | None = None,
    note: str | None = None,
) -> AuditResult:
    """Predict every sample with every predictor, score, and write the run directory.

    ``extra`` is merged into ``metrics.json``; ``note`` is appended to ``tables.txt``.

    >>> from nlibias.models.fake import FakeNLIClassifier
    >>> from nlibias.runtime.predict import ClassifierPredictor
    >>> from nlibias.schema import Sample
    >>> pair = [Sample(id=f"x:{s}", source="bbnli", domain="d", subtopic="t", premise="P.",
    ...                hypothesis=f"{s} H.", gold="neutral", stereotype=s, pair_key="x")
    ...         for s in ("pro", "anti")]
    >>> result = audit(pair, [ClassifierPredictor(FakeNLIClassifier())], out_dir=None, cache=None,
    ...                bootstrap=0, progress=False)
    >>> result.metrics["models"]["fake-nli"]["overall"]["n"]
    2
    """
    if not samples:
        raise ConfigError("no samples to audit")
    check_predictors(predictors)
    samples_source(samples)  # refuse mixed benchmarks before any compute starts

    predictions: list[Prediction] = []
    model_runs: dict[str, Any] = {}
    for predictor in predictors:
        started = time.perf_counter()
        run = predictor.predict(samples, cache, progress=progress)
        if len(run.predictions) != len(samples):
            raise RuntimeError(
                f"{predictor.name}: expected {len(samples)} predictions, got {len(run.predictions)}"
            )
        predictions.extend(run.predictions)
        model_runs[predictor.name] = {
            **predictor.describe(),
            "stats": {**run.stats, "wall_seconds": round(time.perf_counter() - started, 3)},
        }

    metrics = build_metrics(samples, predictions, bootstrap=bootstrap, seed=seed)
    metrics["run"] = run_section(samples_path, model_runs, cache)
    metrics.update(extra or {})
    return finish_run(out_dir, predictions, metrics, note=note)


def score(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    *,
    out_dir: str | Path | None,
    bootstrap: int = 1000,
    seed: int = 0,
    samples_path: str | Path | None = None,
    predictions_path: str | Path | None = None,
) -> AuditResult:
    """Score existing predictions (e.g. from another tool) exactly as ``audit`` would."""
    known = {s.id for s in samples}
    unknown = [p.sample_id for p in predictions if p.sample_id not in known]
    if unknown:
        raise ConfigError(f"{len(unknown)} predictions refer to unknown sample ids (first: {unknown[0]!r})")
    predicted_ids = {p.sample_id for p in predictions}
    # Score only the samples that were predicted: a user may have run a subset.
    subset = [s for s in samples if s.id in predicted_ids]
    metrics = build_metrics(subset, predictions, bootstrap=bootstrap, seed=seed)
    metrics["run"] = score_run_section(samples_path, predictions_path, scored=len(subset), given=len(samples))
    return finish_run(out_dir, predictions, metrics)


def score_run_section(
    samples_path: str | Path | None, predictions_path: str | Path | None, *, scored: int, given: int
) -> dict[str, Any]:
    """``metrics.json``'s ``run`` for a scoring of existing predictions."""
    return {
        **run_info(samples_path),
        "predictions": str(predictions_path) if predictions_path else None,
        "samples_scored": scored,
        "samples_given": given,
    }


def finish_run(
    out_dir: str | Path | None,
    predictions: Sequence[Prediction],
    metrics: dict[str, Any],
    *,
    note: str | None = None,
    predictions_written: bool = False,
) -> AuditResult:
    """The tables of ``metrics`` (``note`` appended), and the run directory written when ``out_dir``
    is given: the last step of every audit and scoring. ``predictions_written``: its
    ``predictions.jsonl`` is already in place (written while the predictions were read)."""
    tables = format_all_tables(metrics)
    if note:
        tables = f"{tables}\n\nNote: {note}"
    out_path = Path(out_dir) if out_dir is not None else None
    if out_path is not None:
        write_outputs(out_path, None if predictions_written else predictions, metrics, tables)
    return AuditResult(out_dir=out_path, metrics=metrics, tables_text=tables, predictions=predictions)
