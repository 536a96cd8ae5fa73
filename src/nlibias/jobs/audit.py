"""The audit: models over a benchmark's samples → predictions, measures and a run directory.

Every audit (command line, demo, Python API) runs :func:`run_audit`, which reads the samples once
(:func:`nlibias.catalog.registry.read_benchmark_samples`: every line checked, the benchmark found,
the samples kept as columns), refuses a kind of model the benchmark cannot score before any model
loads, builds the predictors and calls :func:`audit_samples`: each predictor answers through the
prediction cache and returns its rows and outputs (:mod:`nlibias.runtime.contract`); the
benchmark's measures for the predictor's kind score them, its extra analyses look at all models
together, and the run directory is written as a unit (:func:`nlibias.jobs.results.finish_run`).

>>> import tempfile
>>> from nlibias.jobs.expand import expand_to_dir
>>> samples_dir = tempfile.mkdtemp()
>>> _ = expand_to_dir("occupations", samples_dir)
>>> result = run_audit(samples_dir, ["fake:a"], cache=False, bootstrap=0, progress=False)
>>> result.metrics["predictor_kinds"], round(result.metrics["models"]["a"]["overall"]["S"], 2)
({'a': 'classifier'}, 49.91)
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace
from os import PathLike
from pathlib import Path
from typing import Any

from nlibias.benchmarks.base import BenchmarkSamples
from nlibias.catalog.registry import check_kinds, read_benchmark_samples
from nlibias.errors import ConfigError
from nlibias.jobs.results import (
    AuditResult,
    check_bootstrap,
    check_predictors,
    finish_run,
    metrics_document,
    run_section,
    with_extra,
)
from nlibias.runtime.build import ModelSpec, build_predictors, close_predictors, spec_kinds
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.contract import Predictor
from nlibias.runtime.options import DEFAULT_MODEL_OPTIONS, ModelOptions
from nlibias.runtime.progress import CommandBar, prepare_progress
from nlibias.schema import Sample
from nlibias.schema.model_keys import check_classifier_key, check_model_spec
from nlibias.schema.outputs import ChainedRows, ModelOutputs
from nlibias.schema.prediction_rows import check_predictor_run

CacheOption = bool | str | Path | PredictionCache | None
"""``True``: the user prediction cache; a path: that SQLite file; a cache object; ``False``/``None``:
no cache."""


def audit_settings(settings: Mapping[str, Any]) -> tuple[dict[str, Any], ModelOptions]:
    """Keywords of an audit split into :func:`run_audit`'s own (``cache``, ``seed``, ...) and the
    :class:`ModelOptions` of the rest, refusing a keyword that is neither (a misspelt ``out=``
    for ``out_dir=`` would otherwise end in a bare TypeError after the samples are read), naming
    the closest one.

    >>> audit_settings({"device": "cpu", "cache": False})
    ({'cache': False}, ModelOptions(mode='scored', ..., device='cpu', ...))
    >>> audit_settings({"out": "x"})
    Traceback (most recent call last):
    nlibias.errors.ConfigError: audit takes no argument 'out' (did you mean 'out_dir'?)
    """
    import inspect

    own = set(inspect.signature(run_audit).parameters) - {"options", "samples", "models"}
    return ModelOptions.split(settings, caller="audit", also=own)


def run_audit(
    samples: str | PathLike[str] | Sequence[Sample],
    models: ModelSpec | Sequence[ModelSpec] = (),
    generative: str | Sequence[str] = (),
    prompts: str | Sequence[str] = (),
    *,
    mlm: str | Sequence[str] = (),
    causal: str | Sequence[str] = (),
    tp_variants: str | Sequence[str] = ("shared",),
    cache: CacheOption = True,
    out_dir: str | Path | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    progress: bool = True,
    extra: Mapping[str, Any] | None = None,
    note: str | None = None,
    limit: int | None = None,
    options: ModelOptions = DEFAULT_MODEL_OPTIONS,
) -> AuditResult:
    """Run NLI classifiers (``models``: names, or objects keeping the predictor contract) and
    generative LMs (``generative``, asked with each of ``prompts``) over ``samples`` (a run
    directory, a samples file, what :func:`nlibias.expand` returned, or Sample objects), score them
    with the benchmark's measures and, given ``out_dir``, write ``predictions.jsonl``,
    ``metrics.json`` and ``tables.txt`` there. ``mlm`` (masked LMs) and ``causal`` (causal LMs or
    servers) score the samples' sentence pairs for token-probability bias, under each of
    ``tp_variants`` (``shared`` tokens, as CrowS-Pairs and WinoQueer; ``whole`` sentences).

    Every sample is checked before a model is loaded, and so is whether the samples' benchmark can
    score each kind of model asked for. ``options`` say how the models run
    (:class:`~nlibias.runtime.options.ModelOptions`: ``device``, ``label_map``, ``max_tokens``,
    ``mode``, ``concurrency``, ...; :func:`nlibias.runtime.build.build_predictors`). ``extra`` is merged into ``metrics.json``; ``note`` is
    appended to the tables.

    ``limit`` audits a stratified subset of about that many samples instead of all
    (:func:`nlibias.jobs.subset.stratified_subset`: pairs kept whole, every subtopic, drawn with
    ``seed``); the subset is written into ``out_dir`` as its samples, and ``metrics.json`` records
    it under ``subset`` (limit, seed, samples kept, samples given, where from).
    """
    check_bootstrap(bootstrap, seed)  # before any file is read or model loaded
    if not isinstance(options, ModelOptions):
        raise ConfigError(
            f"options is a {type(options).__name__}; pass ModelOptions(...) (nlibias.ModelOptions)",
            parameter="options",
        )
    progress = prepare_progress(progress)  # bars only on a terminal; else the libraries' bars are off too
    specs = {
        "models": _names(models, "models"),
        "generative": _names(generative, "generative"),
        "mlm": _names(mlm, "mlm"),
        "causal": _names(causal, "causal"),
    }
    checked = read_benchmark_samples(samples)
    if limit is not None:
        checked, subset = _limited(samples, checked, limit, seed, out_dir)
        extra = {**(extra or {}), "subset": subset}
    check_kinds(checked.benchmark, spec_kinds(**specs))  # before any model loads
    with ExitStack() as stack:
        store = _open_cache(cache, stack)
        predictors = build_predictors(
            specs["models"],
            generative=specs["generative"],
            prompts=_names(prompts, "prompts"),
            mlm=specs["mlm"],
            causal=specs["causal"],
            tp_variants=_names(tp_variants, "tp_variants"),
            options=options,
        )
        try:
            return audit_samples(
                checked, predictors, out_dir=out_dir, cache=store, bootstrap=bootstrap, seed=seed,
                progress=progress, extra=extra, note=note,
            )  # fmt: skip
        finally:
            close_predictors(predictors)


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

    >>> import tempfile
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
        if not isinstance(predictor.name, str):
            raise ConfigError(
                f"models: a predictor's name is {predictor.name!r}, not a string", parameter="models"
            )
        if predictor.kind == "classifier" or not predictor.name:
            check_classifier_key(predictor.name, "models")
    check_bootstrap(bootstrap, seed)
    benchmark, columns = samples.benchmark, samples.columns
    benchmark.check_kinds([("predictors", p.kind) for p in predictors])  # run_audit checked it before loading
    rows, models, kinds, runs = [], {}, {}, {}
    outputs: dict[str, ModelOutputs] = {}  # kept only for the benchmark's analyses across models
    # one bar for the audit: each model's pass over the samples is a slot of it (no restart at 0)
    bar = CommandBar(len(columns) * len(predictors), "audit", "sample", progress)
    for predictor in predictors:
        started = time.perf_counter()
        with bar.slot(len(columns), predictor.name):
            run = predictor.predict(samples, cache, progress=progress)
        check_predictor_run(predictor.name, predictor.kind, run, columns.ids)  # the rows' one gate
        rows.append(run.predictions)
        measures = benchmark.measures[predictor.kind]
        models[predictor.name] = measures.score(
            columns, run.outputs, model=predictor.name, bootstrap=bootstrap, seed=seed
        )
        kinds[predictor.name] = predictor.kind
        wall = round(time.perf_counter() - started, 3)
        runs[predictor.name] = {**predictor.describe(), "stats": {**run.stats, "wall_seconds": wall}}
        if benchmark.extras:
            outputs[predictor.name] = run.outputs
    bar.close()
    metrics = metrics_document(
        columns.source, benchmark, models, kinds, n_samples=len(columns), bootstrap=bootstrap, seed=seed,
        domain_of=columns.domain_of_subtopic(),
    )  # fmt: skip
    for analysis in benchmark.extras:
        found = analysis.compute(columns, outputs)
        if found:
            metrics[analysis.name] = found  # type: ignore[literal-required]
    metrics["run"] = run_section(samples.path, runs, cache)
    result = finish_run(
        out_dir, ChainedRows(rows), with_extra(metrics, extra), benchmark, note=note,
        samples_sha256=samples.sha256,
    )  # fmt: skip
    return replace(result, audited=columns)  # samples_frame() needs no file (expand()'s may be gone)


def _limited(
    given: str | PathLike[str] | Sequence[Sample],
    checked: BenchmarkSamples,
    limit: int,
    seed: int,
    out_dir: str | Path | None,
) -> tuple[BenchmarkSamples, dict[str, Any]]:
    """The stratified subset of ``checked`` (``limit``), written into ``out_dir`` when there is one,
    and what ``metrics.json`` records of it."""
    from nlibias.io.samples import read_samples, write_samples
    from nlibias.jobs.subset import stratified_subset

    # from a file: every field, as the subset's samples file will hold them
    everything = read_samples(Path(given)) if isinstance(given, str | PathLike) else list(given)
    subset = stratified_subset(everything, limit, seed=seed)
    info: dict[str, Any] = {"limit": limit, "seed": seed, "samples": len(subset), "of": len(everything)}
    info["from"] = str(checked.path) if checked.path is not None else None
    if out_dir is None:
        return read_benchmark_samples(subset), info
    out = Path(out_dir)
    if checked.path is not None and _same_folder(checked.path, out):
        raise ConfigError(
            f"out_dir {out} holds the samples that limit would subset: their subset would replace them; "
            "write the limited audit into another folder",
            parameter="out_dir",
        )
    out.mkdir(parents=True, exist_ok=True)
    write_samples(out, subset)
    return read_benchmark_samples(out), info


def _same_folder(samples: Path, out: Path) -> bool:
    folder = samples if samples.is_dir() else samples.parent
    return folder.resolve() == out.resolve()


def _open_cache(cache: CacheOption, stack: ExitStack) -> PredictionCache | None:
    from nlibias.runtime.cache import default_cache_path

    if cache is None or cache is False:
        return None
    if isinstance(cache, PredictionCache):
        return cache
    if cache is True:
        return stack.enter_context(PredictionCache(default_cache_path()))
    if isinstance(cache, str | Path):
        return stack.enter_context(PredictionCache(cache))
    raise ConfigError(
        f"cache is {cache!r}; pass True, False, a file path or a PredictionCache", parameter="cache"
    )


def _names(value: Any, parameter: str) -> list[Any]:
    """A list of models from one or several (a bare string is one name, not its letters); a
    model may be an object keeping the predictor contract only in ``models``."""
    if isinstance(value, str | Predictor):
        value = [value]
    names = list(value)
    for name in names:
        if isinstance(name, str):
            check_model_spec(name, parameter, classifier=parameter == "models")
    allowed = (str, Predictor) if parameter == "models" else (str,)
    wrong = [n for n in names if not isinstance(n, allowed)]
    if wrong:
        what = "names (strings) or predictors" if parameter == "models" else "names (strings)"
        raise ConfigError(f"{parameter} must be {what}, got {wrong[0]!r}", parameter=parameter)
    return names
