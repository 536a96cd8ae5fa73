"""The main job, one function per step, called alike by the command line, the demo and Python
(:mod:`nlibias`): :func:`run_audit` (models over a samples file → run directory),
:func:`run_score` (a predictions file from any tool → run directory), :func:`load_run` (a run
directory → the same result object).

>>> import tempfile
>>> from nlibias.jobs.expand import expand_to_dir
>>> samples_dir = tempfile.mkdtemp()
>>> _ = expand_to_dir("occupations", samples_dir)
>>> result = run_audit(samples_dir, ["fake:a"], cache=False, bootstrap=0, progress=False)
>>> result.metrics["predictor_kinds"], round(result.metrics["models"]["a"]["overall"]["S"], 2)
({'a': 'classifier'}, 49.91)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from nlibias.errors import ConfigError, SourceError
from nlibias.io.predictions import PREDICTIONS_JSONL
from nlibias.jobs.audit import METRICS_JSON, OUTPUT_FILES, TABLES_TXT, AuditResult
from nlibias.runtime.cache import PredictionCache

CacheOption = bool | str | Path | PredictionCache | None
"""``True``: the user prediction cache; a path: that SQLite file; a cache object; ``False``/``None``:
no cache."""


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


def _names(value: str | Sequence[str], parameter: str) -> list[str]:
    """A list of names from one name or several (a bare string is one name, not its letters)."""
    if isinstance(value, str):
        return [value]
    names = list(value)
    wrong = [n for n in names if not isinstance(n, str)]
    if wrong:
        raise ConfigError(f"{parameter} must be names (strings), got {wrong[0]!r}", parameter=parameter)
    return names


def run_audit(
    samples: str | Path,
    models: str | Sequence[str] = (),
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
    **model_options: Any,
) -> AuditResult:
    """Run NLI classifiers (``models``) and generative LMs (``generative``, asked with each of
    ``prompts``) over the samples of a run directory or samples file, score them with the
    benchmark's measures and, given ``out_dir``, write ``predictions.jsonl``, ``metrics.json``
    and ``tables.txt`` there. ``mlm`` (masked LMs) and ``causal`` (causal LMs or servers) score
    the samples' sentence pairs for token-probability bias, under each of ``tp_variants``
    (``shared`` tokens, as CrowS-Pairs and WinoQueer; ``whole`` sentences).

    Every line of the samples file is checked before a model is loaded, and so is whether the
    samples' benchmark can score each kind of model asked for (NLI classifiers and generative
    LMs need NLI samples, sentence scorers need sentence pairs; WinoQueer-NLI has both).
    ``model_options`` go to the model builders
    (:func:`nlibias.runtime.predictors.build_predictors`: ``device``, ``label_map``,
    ``max_tokens``, ``mode``, ``concurrency``, ...). ``extra`` is merged into ``metrics.json``;
    ``note`` is appended to the tables.
    """
    from nlibias.jobs.audit import check_bootstrap
    from nlibias.jobs.streamed_audit import audit_samples, read_samples_to_audit
    from nlibias.runtime.predictors import build_predictors, check_specs_for_source, close_predictors

    check_bootstrap(bootstrap, seed)  # before any file is read or model loaded
    specs = {
        "models": _names(models, "models"),
        "generative": _names(generative, "generative"),
        "mlm": _names(mlm, "mlm"),
        "causal": _names(causal, "causal"),
    }
    checked = read_samples_to_audit(samples)
    # a kind of model the samples' benchmark cannot score stops here, before any model loads
    check_specs_for_source(checked.columns.source, **specs)
    with ExitStack() as stack:
        store = _open_cache(cache, stack)
        predictors = build_predictors(
            specs["models"],
            generative=specs["generative"],
            prompts=_names(prompts, "prompts"),
            mlm=specs["mlm"],
            causal=specs["causal"],
            tp_variants=_names(tp_variants, "tp_variants"),
            **model_options,
        )
        try:
            return audit_samples(
                checked,
                predictors,
                out_dir=out_dir,
                cache=store,
                bootstrap=bootstrap,
                seed=seed,
                progress=progress,
                extra=extra,
                note=note,
            )
        finally:
            close_predictors(predictors)


def run_score(
    samples: str | Path,
    predictions: str | Path | Sequence[str | Path],
    *,
    out_dir: str | Path | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> AuditResult:
    """Score a predictions file (nlibias' own, or any tool's JSONL with ``id``, ``label`` and
    optional ``model`` and ``probs``) with the measures of the samples' benchmark, exactly as an
    audit would; given ``out_dir``, write the run directory.

    An lm-evaluation-harness ``--log_samples`` file or an Inspect AI log of an exported nlibias
    task is recognised by its content and read as the answers it holds
    (:mod:`nlibias.io.tool_logs`). ``predictions`` may also be several files or a glob pattern,
    scored together (:mod:`nlibias.jobs.score_several`)."""
    from nlibias.jobs.score_several import score_predictions

    return score_predictions(samples, predictions, out_dir=out_dir, bootstrap=bootstrap, seed=seed)


def load_run(directory: str | Path) -> AuditResult:
    """The result of an audit or a scoring from its run directory (``metrics.json``,
    ``tables.txt``, ``predictions.jsonl``): its files checked against ``manifest.json``
    (:func:`nlibias.io.run_manifest.check_run_directory`), ``metrics.json`` against its schema
    (:func:`nlibias.io.results.read_metrics`)."""
    from nlibias.io.predictions import read_predictions
    from nlibias.io.results import read_metrics
    from nlibias.io.run_manifest import check_run_directory

    path = Path(directory)
    metrics_path = path / METRICS_JSON
    if not metrics_path.is_file():
        raise SourceError(path, None, "no metrics.json here", fix="pass a run directory written by an audit")
    metrics = read_metrics(metrics_path)  # an impossible value is named by its field first
    check_run_directory(path, OUTPUT_FILES)
    tables_path = path / TABLES_TXT
    tables = tables_path.read_text(encoding="utf-8").rstrip("\n") if tables_path.is_file() else ""
    predictions_path = path / PREDICTIONS_JSONL
    predictions = tuple(read_predictions(predictions_path)) if predictions_path.is_file() else ()
    return AuditResult(out_dir=path, metrics=metrics, tables_text=tables, predictions=predictions)
