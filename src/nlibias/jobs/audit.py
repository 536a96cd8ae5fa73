"""The audit: models over a benchmark's samples → predictions, measures and a run directory.

>>> import tempfile
>>> from nlibias.jobs.expand import expand_to_dir
>>> samples_dir = tempfile.mkdtemp()
>>> _ = expand_to_dir("occupations", samples_dir)
>>> from nlibias.runtime.options import RunOptions
>>> result = run_audit(samples_dir, ["fake:a"], run=RunOptions(cache=False, bootstrap=0, progress=False))
>>> result.metrics["predictor_kinds"], round(result.metrics["models"]["a"]["overall"]["S"], 2)
({'a': 'classifier'}, 49.91)
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace
from os import PathLike
from pathlib import Path
from typing import Annotated, Any, cast

from nlibias.benchmarks.base import BenchmarkSamples
from nlibias.catalog.registry import check_kinds, read_benchmark_samples
from nlibias.io.atomic import locked_folder
from nlibias.io.overwrites import refuse_overwrites
from nlibias.io.samples import SAMPLES_JSONL, SAMPLES_PARQUET, read_samples, write_samples
from nlibias.jobs.results import (
    AuditResult,
    check_predictors,
    finish_run,
    refuse_run_overwrites,
    run_info,
    score_models,
)
from nlibias.jobs.subset import has_pairs, stratified_subset
from nlibias.runtime.build import build_predictors, close_predictors
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.contract import Predictor
from nlibias.runtime.model_set import ModelSet, ModelSpec
from nlibias.runtime.options import (
    DEFAULT_MODEL_OPTIONS,
    DEFAULT_RUN_OPTIONS,
    ModelOptions,
    RunOptions,
    check_bootstrap,
    open_cache,
)
from nlibias.runtime.progress import CommandBar, prepare_progress
from nlibias.schema import Sample
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.declared import Refuse, declared
from nlibias.schema.model_keys import check_classifier_key
from nlibias.schema.outputs import ChainedRows, ModelOutputs
from nlibias.schema.predictor_rows import check_predictor_run

RUN_KEYWORDS = ("out_dir", "extra", "note")  # run_audit's own keywords beside models and options


def audit_settings(
    settings: Mapping[str, Any], **run_defaults: Any
) -> tuple[dict[str, Any], RunOptions, ModelOptions]:
    """An audit's keywords as :func:`run_audit`'s own, :class:`RunOptions` (over ``run_defaults``)
    and :class:`ModelOptions`; an unknown one refused.

    >>> audit_settings({"device": "cpu", "cache": False, "note": "n"})
    ({'note': 'n'}, RunOptions(cache=False, ...), ModelOptions(mode='scored', ..., device='cpu', ...))
    >>> audit_settings({"out": "x"})
    Traceback (most recent call last):
    nlibias.errors.ConfigError: audit takes no argument 'out' (did you mean 'out_dir'?)
    """
    rest, options = ModelOptions.split(
        settings, caller="audit", also={*RUN_KEYWORDS, *RunOptions.model_fields}
    )
    own = {name: value for name, value in rest.items() if name in RUN_KEYWORDS}
    run = RunOptions.of(**{**run_defaults, **{k: v for k, v in rest.items() if k not in RUN_KEYWORDS}})
    return own, run, options


def _object_of(kind: type) -> Refuse:
    """A settings object of ``kind``, not a dict of its settings (checked before any file is read)."""
    return Refuse(
        lambda value: not isinstance(value, kind),
        lambda value: f"is a {type(value).__name__}; pass {kind.__name__}(...) (nlibias.{kind.__name__})",
        before=True,
    )


@declared
def run_audit(
    samples: str | PathLike[str] | Sequence[Sample],
    models: ModelSet | ModelSpec | Sequence[ModelSpec] = (),
    *,
    options: Annotated[ModelOptions, _object_of(ModelOptions)] = DEFAULT_MODEL_OPTIONS,
    run: Annotated[RunOptions, _object_of(RunOptions)] = DEFAULT_RUN_OPTIONS,
    out_dir: str | Path | None = None,
    extra: Mapping[str, Any] | None = None,
    note: str | None = None,
) -> AuditResult:
    """Run ``models`` over ``samples`` (a run directory, a samples file, or Sample objects), score
    them and write ``out_dir`` when given (``extra`` into ``metrics.json``, ``note`` under the tables)."""
    models = ModelSet.of(models)
    prepare_progress(run.progress)
    refuse_run_overwrites(out_dir, run.cache, samples=samples)
    if run.limit is not None and out_dir is not None:  # the subset is written as the run's samples
        subset_files = [Path(out_dir) / name for name in (SAMPLES_JSONL, SAMPLES_PARQUET)]
        given = Path(samples) if isinstance(samples, str | PathLike) else None
        refuse_overwrites({"out_dir": subset_files}, {"samples": given})
    checked = read_benchmark_samples(samples)
    if run.limit is not None:  # refused before the run folder is made or locked
        _refuse_a_limit_of_all(run.limit, len(checked))
    with ExitStack() as stack:
        if run.limit is not None and out_dir is not None:  # another audit into it waits: its subset too
            stack.enter_context(locked_folder(out_dir))
        if run.limit is not None:
            checked, subset = _limited(samples, checked, run.limit, run.seed, out_dir)
            extra = {**(extra or {}), "subset": subset}
        models = models.with_default_prompts(checked.benchmark.prompt_styles)
        check_kinds(checked.benchmark, models)  # before any model loads
        store = open_cache(run.cache, stack)
        predictors = build_predictors(models, options=options)
        stack.callback(close_predictors, predictors)  # worker processes and Ray actors stop, also on error
        return audit_samples(
            checked, predictors, out_dir=out_dir, cache=store, bootstrap=run.bootstrap, seed=run.seed,
            progress=run.progress, extra=extra, note=note,
        )  # fmt: skip


def audit_samples(
    samples: BenchmarkSamples,
    predictors: Sequence[Predictor],
    *,
    out_dir: str | Path | None,
    cache: PredictionCache | None,
    bootstrap: int = 1000,
    seed: int = 0,
    progress: bool = True,
    extra: Mapping[str, Any] | None = None,
    note: str | None = None,
) -> AuditResult:
    """Predict, score and write the run directory of ``samples``: the one audit path.

    >>> from nlibias.catalog.registry import read_benchmark_samples
    >>> from nlibias.models.fake import FakeNLIClassifier
    >>> from nlibias.runtime.classifier import ClassifierPredictor
    >>> from nlibias.schema import Sample
    >>> pair = [Sample(id=f"x:{s}", source="bbnli", domain="d", subtopic="t", premise="P.",
    ...                hypothesis=f"{s} H.", gold="neutral", stereotype=s, pair_key="x")
    ...         for s in ("pro", "anti")]
    >>> result = audit_samples(read_benchmark_samples(pair), [ClassifierPredictor(FakeNLIClassifier())],
    ...                        out_dir=None, cache=None, bootstrap=0, progress=False)
    >>> result.metrics["models"]["fake-nli"]["overall"]["n_pairs"], len(result.predictions)
    (1, 2)
    """
    check_predictors(predictors)
    for predictor in predictors:  # a predictor object's name is its key, checked as a spec's is
        if predictor.kind == "classifier" or not predictor.name:
            check_classifier_key(predictor.name, "models")
    check_bootstrap(bootstrap, seed)
    benchmark, columns = samples.benchmark, samples.columns
    benchmark.check_kinds([("predictors", p.kind) for p in predictors])  # run_audit checked it before loading
    rows, runs = [], {}

    def predicted(bar: CommandBar) -> Iterator[tuple[str, str, ModelOutputs]]:
        for predictor in predictors:
            started = time.perf_counter()
            with bar.slot(len(columns), predictor.name):
                run = predictor.predict(samples, cache, progress=progress)
            check_predictor_run(predictor.name, predictor.kind, run, columns.ids)  # the rows' one gate
            bar.stage(f"{predictor.name} scoring")
            rows.append(run.predictions)
            yield predictor.name, predictor.kind, run.outputs  # scored before the next model runs
            wall = round(time.perf_counter() - started, 3)
            runs[predictor.name] = {**predictor.describe(), "stats": {**run.stats, "wall_seconds": wall}}

    with CommandBar(len(columns) * len(predictors), "audit", "sample", progress) as bar:
        metrics = score_models(benchmark, columns, predicted(bar), bootstrap=bootstrap, seed=seed)
    metrics["run"] = run_info(samples.path, models=runs, cache=None if cache is None else str(cache.path))
    cast(dict[str, Any], metrics).update(extra or {})  # an audit's own additions (the demo's)
    result = finish_run(
        out_dir, ChainedRows(rows), metrics, benchmark, note=note, samples_sha256=samples.sha256
    )
    return replace(result, audited=columns)  # samples_frame() needs no file (expand()'s may be gone)


def _refuse_a_limit_of_all(limit: int, count: int) -> None:
    if limit >= count:  # a "subset" of all would be announced as not the full set's
        raise option_applies_to_nothing(
            "limit", "auditing a subset smaller than the samples", value=limit,
            given=f"there are {count} samples", fix="leave {limit} out to audit them all",
        )  # fmt: skip


def _limited(
    given: str | PathLike[str] | Sequence[Sample],
    checked: BenchmarkSamples,
    limit: int,
    seed: int,
    out_dir: str | Path | None,
) -> tuple[BenchmarkSamples, dict[str, Any]]:
    """The stratified subset of ``checked``, written into ``out_dir`` when given, and its record."""
    everything = read_samples(Path(given)) if isinstance(given, str | PathLike) else list(given)
    subset = stratified_subset(everything, limit, seed=seed)
    info: dict[str, Any] = {"limit": limit, "seed": seed, "samples": len(subset), "of": len(everything)}
    if not has_pairs(subset):  # BBQ's samples: no pairs (its filled templates are kept whole)
        info["pairs_whole"] = False
    info["from"] = str(checked.path) if checked.path is not None else None
    if out_dir is None:
        return read_benchmark_samples(subset), info
    write_samples(out_dir, subset)
    return read_benchmark_samples(out_dir), info
