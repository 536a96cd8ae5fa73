"""What an audit or a scoring produces (:class:`AuditResult`, ``metrics.json``) and how its run
directory is written (read back by :func:`load_run`)."""

from __future__ import annotations

import html
import platform
import shutil
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from nlibias.benchmarks.base import Benchmark
from nlibias.catalog.registry import benchmark_for_source, load_plugins
from nlibias.errors import ConfigError
from nlibias.io.atomic import PendingFile, atomic_write_text, locked_folder, write_json
from nlibias.io.overwrites import file_identity, refuse_overwrites
from nlibias.io.predictions import PREDICTIONS_JSONL, predictions_file, write_predictions
from nlibias.io.results import SCHEMA_VERSION, MetricsDocument, RunInfo, metrics_issues
from nlibias.io.run_dir import OUTPUT_FILES, TABLES_TXT, RunDirectory, RunSamples, read_run
from nlibias.io.run_manifest import MANIFEST_JSON, begin_write, finish_write, read_manifest
from nlibias.io.samples import read_samples, resolve_samples_path
from nlibias.metrics.ranking import most_biased_subtopics
from nlibias.metrics.verdicts import run_verdicts
from nlibias.report.tables import Slice, format_all_tables
from nlibias.report.verdict_block import verdict_block, verdict_table_html
from nlibias.runtime.contract import Predictor
from nlibias.runtime.options import CacheOption, cache_file
from nlibias.schema import Prediction, Sample
from nlibias.schema.columns import SampleColumns
from nlibias.schema.declared import PathArg, declared
from nlibias.schema.measure_info import METRICS_FILE
from nlibias.schema.model_keys import PredictorKind
from nlibias.schema.outputs import ModelOutputs
from nlibias.version import __version__

if TYPE_CHECKING:
    import pandas as pd

    from nlibias.jobs.expand import Samples


def refuse_run_overwrites(
    out_dir: str | Path | None, cache: CacheOption = None, *, rescoring: bool = True, **inputs: object
) -> None:
    """Refuse an ``out_dir`` whose files, or a ``cache`` that, are one of the files the run reads
    (``inputs``, by parameter) or writes; ``rescoring`` a run in place is no clash (its predictions
    are read first), but writing over another kind of file (an answers file) is."""
    written = [Path(out_dir) / name for name in (*OUTPUT_FILES, MANIFEST_JSON)] if out_dir is not None else []
    in_place = file_identity(Path(out_dir) / PREDICTIONS_JSONL) if out_dir is not None and rescoring else None
    files: dict[str, list[Path]] = {}
    for name, given in inputs.items():
        items = given if isinstance(given, list | tuple) else [given]
        paths = [Path(item) for item in items if isinstance(item, str | PathLike)]
        if name == "samples":
            files[name] = [resolve_samples_path(path) if path.is_dir() else path for path in paths]
            continue
        # a folder of predictions is the run directory that wrote them: its predictions file
        files[name] = [file for file in map(predictions_file, paths) if file_identity(file) != in_place]
    refuse_overwrites({"out_dir": written, "cache": cache_file(cache)}, files)


class Tables(str):
    """Text tables that show as themselves in a REPL or notebook (not as a quoted string)."""

    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True)
class AuditResult:
    """What an audit or a scoring produced (and wrote to ``out_dir``, when given): ``metrics.json``
    and the rows of ``predictions.jsonl``."""

    out_dir: Path | None
    metrics: MetricsDocument
    tables_text: str
    predictions: Sequence[Prediction] = field(repr=False, default=())
    samples_sha256: str | None = field(repr=False, default=None)
    """The SHA-256 of the samples file as the run read it (None: not known)."""
    audited: SampleColumns | None = field(repr=False, default=None, compare=False)
    """The samples an audit held (their file may be gone, as a temporary ``expand()``'s is)."""

    def __post_init__(self) -> None:
        # absolute: the run's files are found from whatever working directory the result is used in
        if self.out_dir is not None:
            object.__setattr__(self, "out_dir", Path(self.out_dir).absolute())

    def summary(self) -> pd.DataFrame:
        """The answer first: per model, the verdict of each headline measure and accuracy, with its
        95% interval and no-bias value."""
        from nlibias.report.display_frame import DisplayFrame

        rows = [
            (
                r.verdict,
                v.model,
                r.measure,
                r.info.display_name,
                r.value,
                *(r.interval or (None, None)),
                r.info.neutral,
            )
            for v in run_verdicts(self.metrics)
            for r in [*v.headline, *([v.accuracy] if v.accuracy is not None else [])]
        ]
        columns = ["verdict", "model", "measure", "title", "value", "ci_low", "ci_high", "no_bias"]
        return DisplayFrame(rows, columns=columns)

    def __repr__(self) -> str:
        """A compact view for a REPL: what was audited and the verdict block (at most 20 lines)."""
        models = self.metrics["models"]
        head = (
            f"AuditResult(source={self.metrics.get('source')!r}, models={len(models)}, "
            f"samples={self.metrics.get('n_samples')}, out_dir={str(self.out_dir) if self.out_dir else None!r})"
        )
        lines = [head, *verdict_block(self.metrics).splitlines()]
        if len(lines) > 20:
            lines = [*lines[:19], f"... ({len(lines) - 19} more lines: .summary(), .tables())"]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The verdict table for a notebook, then what was audited (left-aligned)."""
        head = html.escape(
            f"AuditResult of {self.metrics.get('source')!r}" + (f" in {self.out_dir}" if self.out_dir else "")
        )
        table = verdict_table_html(self.metrics) or "<p>no headline measure</p>"
        left = "<style>.nlibias-result th, .nlibias-result td {text-align: left !important;}</style>"
        return f'<div class="nlibias-result">{left}{table}<p>{head}</p></div>'

    def to_frame(self) -> pd.DataFrame:
        """Every measure as a tidy DataFrame (one row per model, slice and measure)."""
        from nlibias.report.frame import metrics_frame

        return metrics_frame(self.metrics)

    @declared(lazy={"Samples": "nlibias.jobs.expand"})
    def samples_frame(self, samples: Samples | PathArg | Sequence[Sample] | None = None) -> pd.DataFrame:
        """One row per sample and model: the sample's fields and the model's outputs. ``samples``:
        default those the audit held, else the file the run recorded (refused when edited since)."""
        from nlibias.report.frame import samples_frame

        if samples is None and self.audited is not None:
            return samples_frame(self.predictions, self.audited.records())
        if samples is None or isinstance(samples, str | Path):
            located = self.recorded_samples()
            samples = read_samples(located.check(located.file(samples)))
        return samples_frame(self.predictions, samples)

    def recorded_samples(self) -> RunSamples:
        """The samples file the run read (:meth:`nlibias.io.run_dir.RunSamples.locate`)."""
        manifest = read_manifest(self.out_dir) if self.out_dir is not None else None
        return RunSamples.locate(self.out_dir, self.metrics, manifest, sha256=self.samples_sha256)

    @declared
    def tables(self, *, by: Slice = "domain") -> Tables:
        """The text tables in the papers' layouts (``by``: domain or subtopic slices)."""
        return Tables(format_all_tables(self.metrics, benchmark_for_source(self.metrics["source"]), by=by))

    def materialised(self) -> AuditResult:
        """The same result with its predictions held in memory."""
        if isinstance(self.predictions, tuple):
            return self
        return replace(self, predictions=tuple(self.predictions))


def metrics_document(
    source: str,
    benchmark: Benchmark,
    models: dict[str, Any],
    kinds: Mapping[str, str],
    *,
    n_samples: int,
    bootstrap: int,
    seed: int,
    domain_of: Mapping[str, str] | None = None,
) -> MetricsDocument:
    """``metrics.json`` without ``run``: with what each kind's measures add across its models and
    each model's ``most_biased_subtopics`` (``domain_of``: each subtopic's domain)."""
    for model_metrics in models.values():
        by_subtopic = model_metrics.get("by_subtopic")
        if isinstance(by_subtopic, Mapping) and by_subtopic and "most_biased_subtopics" not in model_metrics:
            model_metrics["most_biased_subtopics"] = most_biased_subtopics(by_subtopic, domain_of)
    metrics: MetricsDocument = {
        "schema_version": SCHEMA_VERSION,
        "source": source,
        "n_samples": n_samples,
        "bootstrap": {
            "resamples": bootstrap,
            "seed": seed,
            "confidence": 0.95,
            "unit": benchmark.resampling_unit,
        },
        "models": models,
        "predictor_kinds": {model: cast(PredictorKind, kinds[model]) for model in models},
    }
    for kind, measures in benchmark.measures.items():
        of_kind = {model: m for model, m in models.items() if kinds[model] == kind}
        if of_kind and measures.across is not None:
            cast(dict[str, Any], metrics).update(measures.across(of_kind))
    return metrics


def scored_metrics(
    benchmark: Benchmark,
    columns: SampleColumns,
    models: dict[str, Any],
    kinds: Mapping[str, str],
    outputs: Mapping[str, ModelOutputs],
    *,
    bootstrap: int,
    seed: int,
) -> MetricsDocument:
    """:func:`metrics_document` of the scored ``columns`` with the benchmark's analyses of each
    model's ``outputs`` (held only when the benchmark has such analyses): audits' and scorings'."""
    source, n, domain_of = columns.source, len(columns), columns.domain_of_subtopic()
    metrics = metrics_document(
        source, benchmark, models, kinds, n_samples=n, bootstrap=bootstrap, seed=seed, domain_of=domain_of
    )
    for analysis in benchmark.extras:
        if found := analysis.compute(columns, outputs):
            cast(dict[str, Any], metrics)[analysis.name] = found
    return metrics


def score_models(
    benchmark: Benchmark,
    columns: SampleColumns,
    outputs: Iterable[tuple[str, str, ModelOutputs]],
    *,
    bootstrap: int,
    seed: int,
    source: str | Path | None = None,
) -> MetricsDocument:
    """The one scoring of audits and scorings: each ``(model, kind, outputs)``, taken one at a time,
    by its kind's measures (the outputs kept only for the benchmark's analyses across models), as
    :func:`scored_metrics`' document; a model none of whose answers the measures read is warned of
    (naming ``source``, the predictions file, when given): its measures are all empty, and its
    answers are kept in the run to show why (a gate refuses such a run)."""
    models, kinds, held = {}, {}, {}
    for model, kind, found in outputs:
        measures = benchmark.measures[kind]
        models[model] = measures.score(columns, found, model=model, bootstrap=bootstrap, seed=seed)
        if not found.answered().any():
            warnings.warn(_nothing_read(model, len(found), source), NothingReadWarning, stacklevel=2)
        kinds[model] = kind
        if benchmark.extras:
            held[model] = found
    return scored_metrics(benchmark, columns, models, kinds, held, bootstrap=bootstrap, seed=seed)


class NothingReadWarning(UserWarning):
    """A model none of whose answers the measures read: every measure of it is empty."""


def _nothing_read(model: str, n_answers: int, source: str | Path | None) -> str:
    """Why a model whose every answer is unreadable has no measure, and what to do."""
    where = f"{source}: " if source is not None else ""
    fix = (
        "give the model's answers as labels, chosen options or sentence scores"
        if source is not None
        else "check its answers in predictions.jsonl (a generative LM: its prompt's answer words, or scored answers)"
    )
    return (
        f"{where}model {model!r}: none of its {n_answers} answers was read (all {n_answers} have no label, "
        f"chosen option or sentence scores), so every measure of it is empty: {fix}"
    )


def write_outputs(
    out_dir: Path,
    predictions: Iterable[Prediction] | PendingFile,
    metrics: MetricsDocument,
    tables: str,
    *,
    samples_sha256: str | None = None,
) -> None:
    """The run directory's files, changed as a unit (:mod:`nlibias.io.run_manifest`): another
    audit or scoring into it at once waits, and the run is one's files, not a mix."""
    with locked_folder(out_dir):
        begin_write(out_dir)
        for derived in (out_dir / name for name in DERIVED_FILES):
            if derived.is_dir():
                shutil.rmtree(derived)
            else:
                derived.unlink(missing_ok=True)
        if isinstance(predictions, PendingFile):
            predictions.commit()
        else:
            write_predictions(out_dir / PREDICTIONS_JSONL, predictions)
        write_json(out_dir / METRICS_FILE, metrics)
        atomic_write_text(out_dir / TABLES_TXT, tables + "\n")
        samples = metrics.get("run", {}).get("samples")
        finish_write(
            out_dir, OUTPUT_FILES, inputs={"samples": samples}, input_sha256={"samples": samples_sha256}
        )


DERIVED_FILES = ("report.html", "report_files", "debias_comparison.json")
"""What other commands derive from a run's outputs: a new write of the outputs removes them."""


def run_info(samples_path: str | Path | None, **fields: Any) -> RunInfo:
    """``metrics.json``'s ``run``: versions, machine facts and the samples file, then ``fields``: an
    audit's ``models`` (each one's description and stats) and ``cache``; a scoring's ``predictions``
    file, ``samples_scored`` and ``samples_given``."""
    info: dict[str, Any] = {
        "nlibias": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "samples": str(samples_path) if samples_path is not None else None,
    }
    for package in ("torch", "transformers"):
        try:
            info[package] = version(package)
        except PackageNotFoundError:  # not installed: nothing to record
            continue
    return cast(RunInfo, info | fields)


def check_predictors(predictors: Sequence[Predictor]) -> None:
    """Refuse no model, a name that is not a string and model keys given twice."""
    names = [p.name for p in predictors]
    unnamed = [name for name in names if not isinstance(name, str)]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    # two different models under one key (smollm2 in process and openai:URL#smollm2)
    different = [
        n
        for n in duplicates
        if len({repr(sorted(p.describe().items())) for p in predictors if p.name == n}) > 1
    ]
    if not predictors:
        reason = "no model given: name one in {models}, {generative}, {mlm} or {causal}"
    elif unnamed:
        reason = f"{{models}}: a predictor's name is {unnamed[0]!r}, not a string"
    elif different:
        reason = (
            f"two different models share the key {', '.join(different)}: a key is the model's name without "
            "its backend, so give one of them another name (a server's model is named after '#', as the "
            "server knows it: serve it under an alias)"
        )
    elif duplicates:
        reason = (
            f"model key(s) given twice: {', '.join(duplicates)}; name each model once in {{models}}, "
            "{generative}, {mlm} and {causal}"
        )
    else:
        return
    raise ConfigError(reason, parameter="models", names=("generative", "mlm", "causal"))


def finish_run(
    out_dir: str | Path | None,
    predictions: Sequence[Prediction],
    metrics: MetricsDocument,
    benchmark: Benchmark,
    *,
    note: str | None = None,
    predictions_file: PendingFile | None = None,
    samples_sha256: str | None = None,
) -> AuditResult:
    """The last step of every audit and scoring: the tables and, given ``out_dir``, the run
    directory (``predictions_file``: the rows already written aside). A measure outside its
    declared range (a scorer's fault) is refused before anything is written."""
    problems = metrics_issues(metrics)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ConfigError(
            f"the measures of benchmark {benchmark.name!r} gave {problems[0]}{more}: outside what the "
            "measure declares (its MeasureInfo range); nothing was written. Fix the scorer or the declaration"
        )
    tables = format_all_tables(metrics, benchmark)
    if note:
        tables = f"{tables}\n\nNote: {note}"
    out_path = Path(out_dir) if out_dir is not None else None
    if out_path is not None:
        write_outputs(
            out_path, predictions_file or predictions, metrics, tables, samples_sha256=samples_sha256
        )
    return AuditResult(out_path, metrics, tables, predictions, samples_sha256=samples_sha256)


def read_checked_run(path: str | Path) -> RunDirectory:
    """:func:`~nlibias.io.run_dir.read_run` with the plug-ins' measures declared (ranges checked)."""
    load_plugins()
    return read_run(path)


def load_run(directory: str | Path) -> AuditResult:
    """The result of an audit or a scoring from its run directory (:func:`read_checked_run`)."""
    run = read_checked_run(directory)
    return AuditResult(run.path, run.metrics, run.tables, tuple(run.predictions()))
