"""What an audit or a scoring produces, and how it is written: :class:`AuditResult`, the
``metrics.json`` document and the run directory.

A run directory holds ``predictions.jsonl`` (one row per sample and model), ``metrics.json``
(``{"models": {MODEL: {"overall": M, "by_domain": {...}, "by_subtopic": {...}}}}`` plus run
information; typed as :class:`nlibias.io.results.MetricsDocument`), ``tables.txt`` and, written
last, ``manifest.json`` (:mod:`nlibias.io.run_manifest`: readers refuse a half-replaced
directory). Model outputs live in the prediction cache, so an interrupted audit rerun with the
same command computes only what is missing.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from nlibias.benchmarks.base import Benchmark
from nlibias.errors import ConfigError
from nlibias.io.atomic import PendingFile, atomic_write_text, write_json
from nlibias.io.predictions import PREDICTIONS_JSONL, write_predictions
from nlibias.io.results import SCHEMA_VERSION, MetricsDocument, RunInfo
from nlibias.io.run_manifest import begin_write, finish_write
from nlibias.io.samples import read_samples
from nlibias.report.tables import format_all_tables
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.contract import Predictor
from nlibias.schema import Prediction, Sample
from nlibias.schema.columns import SampleColumns
from nlibias.schema.measure_info import METRICS_FILE
from nlibias.schema.predictor_kinds import PredictorKind
from nlibias.version import __version__

if TYPE_CHECKING:
    import pandas as pd

TABLES_TXT = "tables.txt"
OUTPUT_FILES = (PREDICTIONS_JSONL, METRICS_FILE, TABLES_TXT)
"""What an audit or a scoring writes into its run directory (listed in ``manifest.json``)."""


def refuse_run_overwrites(out_dir: str | Path | None, **inputs: object) -> None:
    """Before an audit or a scoring computes anything: refuse an ``out_dir`` whose files
    (:data:`OUTPUT_FILES`, the manifest) are one of the files it reads (``inputs``, by parameter:
    a path, a run directory's samples, or several paths; anything else, e.g. Sample objects, is
    no file). Rescoring a run in place (``predictions`` its own ``predictions.jsonl``, or the run
    directory) is no clash: the predictions are read to the end before their file is replaced."""
    from nlibias.io.overwrites import file_identity, refuse_overwrites
    from nlibias.io.run_manifest import MANIFEST_JSON
    from nlibias.io.samples import resolve_samples_path

    if out_dir is None:
        return
    written = [Path(out_dir) / name for name in (*OUTPUT_FILES, MANIFEST_JSON)]
    in_place = file_identity(Path(out_dir) / PREDICTIONS_JSONL)
    files: dict[str, list[Path]] = {}
    for name, given in inputs.items():
        items = given if isinstance(given, list | tuple) else [given]
        paths = [Path(item) for item in items if isinstance(item, str | PathLike)]
        if name == "samples":
            files[name] = [resolve_samples_path(path) if path.is_dir() else path for path in paths]
            continue
        # a folder of predictions is the run directory that wrote them: its predictions file
        found = [path / PREDICTIONS_JSONL if path.is_dir() else path for path in paths]
        files[name] = [path for path in found if file_identity(path) != in_place]
    refuse_overwrites({"out_dir": written}, files)


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
    metrics: MetricsDocument
    """The content of ``metrics.json`` (typed: :class:`nlibias.io.results.MetricsDocument`)."""
    tables_text: str
    """The text tables as written to ``tables.txt``."""
    predictions: Sequence[Prediction] = field(repr=False, default=())
    samples_sha256: str | None = field(repr=False, default=None)
    """The SHA-256 of the samples file as the run read it (None: not known)."""
    audited: SampleColumns | None = field(repr=False, default=None, compare=False)
    """The samples audited, held by an audit's result (:meth:`samples_frame` reads them: their file
    may be gone, as a temporary ``expand()``'s is)."""

    def __post_init__(self) -> None:
        # absolute from the start: the run's manifest, and the samples path it recorded relative
        # to the run, are found from whatever working directory the result is used in later
        if self.out_dir is not None:
            object.__setattr__(self, "out_dir", Path(self.out_dir).absolute())

    def summary(self) -> pd.DataFrame:
        """The answer first, as a DataFrame: per model, the verdict (``pro-stereotype bias``,
        ``anti-stereotype bias``, ``no evidence of bias``; empty for a magnitude measure and for
        accuracy), then each headline bias measure and accuracy with its 95% interval and its
        no-bias value. Built by :func:`nlibias.metrics.verdicts.run_verdicts`, as every output's
        verdict is. Printed with two decimals, as the tables; the values keep full precision
        (:class:`nlibias.report.display_frame.DisplayFrame`)."""
        from nlibias.metrics.verdicts import run_verdicts
        from nlibias.report.display_frame import DisplayFrame

        rows = []
        for verdict in run_verdicts(self.metrics):
            readings = [*verdict.headline, *([verdict.accuracy] if verdict.accuracy is not None else [])]
            for reading in readings:
                rows.append(
                    {
                        "verdict": reading.verdict,
                        "model": verdict.model,
                        "measure": reading.measure,
                        "title": reading.info.display_name,
                        "value": reading.value,
                        "ci_low": None if reading.interval is None else reading.interval[0],
                        "ci_high": None if reading.interval is None else reading.interval[1],
                        "no_bias": reading.info.neutral,
                    }
                )
        columns = ["verdict", "model", "measure", "title", "value", "ci_low", "ci_high", "no_bias"]
        return DisplayFrame(rows, columns=columns)

    def __repr__(self) -> str:
        """A compact view for a REPL: what was audited and the verdict block (at most 20 lines;
        the whole metrics are in :attr:`metrics`, the tables in :meth:`tables`)."""
        from nlibias.report.verdict_block import verdict_block

        models = list(self.metrics.get("models") or {})
        head = (
            f"AuditResult(source={self.metrics.get('source')!r}, models={len(models)}, "
            f"samples={self.metrics.get('n_samples')}, out_dir={str(self.out_dir) if self.out_dir else None!r})"
        )
        lines = [head, *verdict_block(self.metrics).splitlines()]
        if len(lines) > 20:
            lines = [*lines[:19], f"... ({len(lines) - 19} more lines: .summary(), .tables())"]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The verdict table for a notebook (the same rows as :meth:`summary`), first, then what
        was audited; left-aligned (Jupyter right-aligns table cells, which set the verdicts'
        words adrift from their headers)."""
        import html

        from nlibias.report.verdict_block import verdict_table_html

        head = html.escape(
            f"AuditResult of {self.metrics.get('source')!r}" + (f" in {self.out_dir}" if self.out_dir else "")
        )
        table = verdict_table_html(self.metrics) or "<p>no headline measure</p>"
        left = "<style>.nlibias-result th, .nlibias-result td {text-align: left !important;}</style>"
        return f'<div class="nlibias-result">{left}{table}<p>{head}</p></div>'

    def to_frame(self) -> pd.DataFrame:
        """Every measure as a tidy DataFrame: model, slicing, slice, measure, value, ci_low,
        ci_high, n (one row per model, slice and measure)."""
        from nlibias.report.frame import metrics_frame

        return metrics_frame(self.metrics)

    def samples_frame(self, samples: str | Path | Sequence[Sample] | None = None) -> pd.DataFrame:
        """The predictions as a pandas DataFrame with one row per sample and model: ``id``,
        ``model``, the sample's fields (domain, subtopic, premise, hypothesis, gold, stereotype,
        pair_key, ...), ``kind``, ``label``, ``p_entailment``/``p_neutral``/``p_contradiction``
        and the backend's fields (a generative answer's ``answer``, ``answer_probs.yes``, ...).
        ``samples``: the samples audited (default: those the audit held, else the samples file the
        run recorded). A samples file that is not the one the run read (edited since, or another
        folder's) is refused: its texts would sit beside answers to other texts."""
        from nlibias.report.frame import samples_frame

        if samples is None and self.audited is not None:
            return samples_frame(self.predictions, self.audited.records())
        path = self._recorded_samples() if samples is None else samples
        if isinstance(path, str | Path):
            self.check_samples_file(Path(path))
        records = read_samples(path) if isinstance(path, str | Path) else path
        return samples_frame(self.predictions, records)

    def _recorded_samples(self) -> Path:
        """The samples file the run read: the manifest's absolute path, else ``run.samples`` as
        given or relative to the run directory."""
        entry = self._samples_input()
        recorded = self.metrics.get("run", {}).get("samples")
        candidates = [Path(str(entry["path"]))] if entry.get("path") else []
        if recorded:
            candidates.append(Path(recorded))
            if self.out_dir is not None and not Path(recorded).is_absolute():
                candidates.append(self.out_dir / recorded)
        found = next((c for c in candidates if c.exists()), None)
        if found is None:
            raise ConfigError(
                f"the run's samples are not at {recorded!r}: pass the samples it audited", parameter="samples"
            )
        return found

    def check_samples_file(self, path: Path) -> None:
        """Refuse a samples file whose bytes are not those the run read (its recorded SHA-256)."""
        from nlibias.io.fingerprint import sha256_file
        from nlibias.io.samples import resolve_samples_path

        expected = self.samples_sha256 or self._samples_input().get("sha256")
        if not expected:
            return  # a run written before the checksum was recorded
        file = resolve_samples_path(path)
        now = sha256_file(file)
        if now != expected:
            raise ConfigError(
                f"the samples file {file} is not the one the run audited (SHA-256 {expected[:12]} when "
                f"audited, now {now[:12]}): it was edited after the run, or it is another folder's; pass "
                "the samples the run audited",
                parameter="samples",
            )

    def _samples_input(self) -> dict[str, Any]:
        """The samples entry of the run directory's manifest (path and SHA-256; {}: none)."""
        from nlibias.io.run_manifest import read_manifest

        manifest: Any = read_manifest(self.out_dir) if self.out_dir is not None else None
        inputs = manifest.get("inputs") if isinstance(manifest, dict) else None
        entry = inputs.get("samples") if isinstance(inputs, dict) else None
        return entry if isinstance(entry, dict) else {}

    def tables(self, *, by: str = "domain") -> Tables:
        """The text tables in the papers' layouts (``by``: domain or subtopic slices)."""
        from nlibias.catalog.registry import benchmark_for_source

        return Tables(format_all_tables(self.metrics, benchmark_for_source(self.metrics["source"]), by=by))

    def materialised(self) -> AuditResult:
        """The same result with its predictions held in memory (a streamed run reads them from
        its files on demand)."""
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
    """``metrics.json`` without its ``run`` section, from each model's metrics and predictor kind
    (:class:`~nlibias.io.results.MetricsDocument`, version :data:`~nlibias.io.results.SCHEMA_VERSION`),
    with what the benchmark's measures of each kind add across its models.
    A model with subtopic slices and no ranking of them yet gets its ``most_biased_subtopics``
    (:func:`nlibias.metrics.ranking.most_biased_subtopics`; ``domain_of``: each subtopic's
    domain), which the reports read back."""
    from nlibias.metrics.ranking import most_biased_subtopics

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


def with_extra(metrics: MetricsDocument, extra: Mapping[str, Any] | None) -> MetricsDocument:
    """``metrics`` with the keys of ``extra`` merged in (an audit's own additions, e.g. ``demo``)."""
    cast(dict[str, Any], metrics).update(extra or {})
    return metrics


def write_outputs(
    out_dir: Path,
    predictions: Iterable[Prediction] | PendingFile,
    metrics: MetricsDocument,
    tables: str,
    *,
    samples_sha256: str | None = None,
) -> None:
    """The run directory's files, changed as a unit (:mod:`nlibias.io.run_manifest`): stale
    ``.part`` files removed and the manifest marked incomplete, each file written to a temporary
    name and renamed, then the manifest with every file's checksum. ``predictions`` may be a
    :class:`~nlibias.io.atomic.PendingFile` already holding ``predictions.jsonl``'s rows."""
    pending = predictions if isinstance(predictions, PendingFile) else None
    begin_write(out_dir, OUTPUT_FILES, keep=[pending.temporary_path] if pending is not None else [])
    remove_derived(out_dir)
    if pending is not None:
        pending.commit()
    else:
        write_predictions(out_dir / PREDICTIONS_JSONL, cast(Iterable[Prediction], predictions))
    write_json(out_dir / METRICS_FILE, metrics)
    atomic_write_text(out_dir / TABLES_TXT, tables + "\n")
    samples = (metrics.get("run") or {}).get("samples")
    finish_write(out_dir, OUTPUT_FILES, inputs={"samples": samples}, input_sha256={"samples": samples_sha256})


#: What other commands derive from a run directory's outputs at its default places (``nlibias
#: report RUN``: report.html and its figures; ``report --debias``: the comparison). A new write
#: of the outputs makes them stale, so it removes them: the directory never shows an old report
#: beside new metrics.
DERIVED_FILES = ("report.html", "report_files", "debias_comparison.json")


def remove_derived(out_dir: Path) -> None:
    import shutil

    for name in DERIVED_FILES:
        path = out_dir / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


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
    fields = ("generative", "mlm", "causal")  # beside models: every field that names a model
    if not predictors:
        raise ConfigError(
            "no model given: name one in {models}, {generative}, {mlm} or {causal}",
            parameter="models",
            names=fields,
        )
    names = [p.name for p in predictors]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if not duplicates:
        return
    # two different models under one key (smollm2 in process and openai:URL#smollm2): "name each
    # model once" would blame the user for what the keys do
    different = [
        n
        for n in duplicates
        if len({repr(sorted(p.describe().items())) for p in predictors if p.name == n}) > 1
    ]
    if different:
        raise ConfigError(
            f"two different models share the key {', '.join(different)}: a key is the model's name without "
            "its backend, so give one of them another name (a server's model is named after '#', as the "
            "server knows it: serve it under an alias)",
            parameter="models",
            names=fields,
        )
    raise ConfigError(
        f"model key(s) given twice: {', '.join(duplicates)}; name each model once in {{models}}, "
        "{generative}, {mlm} and {causal}",
        parameter="models",
        names=fields,
    )


def run_section(
    samples_path: str | Path | None, model_runs: dict[str, Any], cache: PredictionCache | None
) -> RunInfo:
    """``metrics.json``'s ``run``: versions, machine, each model's description and stats, cache."""
    section = {
        **run_info(samples_path),
        "models": model_runs,
        "cache": str(cache.path) if cache is not None else None,
    }
    return cast(RunInfo, section)


def score_run_section(
    samples_path: str | Path | None, predictions_path: str | Path | None, *, scored: int, given: int
) -> RunInfo:
    """``metrics.json``'s ``run`` for a scoring of existing predictions."""
    section = {
        **run_info(samples_path),
        "predictions": str(predictions_path) if predictions_path else None,
        "samples_scored": scored,
        "samples_given": given,
    }
    return cast(RunInfo, section)


def check_measures(metrics: MetricsDocument, benchmark: Benchmark) -> None:
    """Refuse ``metrics`` when a measure is outside the range it is declared with (or not a finite
    number): a scorer's fault, stopped before anything is written, as ``load_run`` would refuse
    the file afterwards."""
    from nlibias.io.results import metrics_issues

    problems = metrics_issues(metrics)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ConfigError(
            f"the measures of benchmark {benchmark.name!r} gave {problems[0]}{more}: outside what the "
            "measure declares (its MeasureInfo range); nothing was written. Fix the scorer or the declaration"
        )


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
    """The tables of ``metrics`` (``note`` appended), and the run directory written when ``out_dir``
    is given: the last step of every audit and scoring. ``predictions_file``: ``predictions.jsonl``
    already written under a temporary name (while the predictions were read), renamed in with
    the other files."""
    check_measures(metrics, benchmark)
    tables = format_all_tables(metrics, benchmark)
    if note:
        tables = f"{tables}\n\nNote: {note}"
    out_path = Path(out_dir) if out_dir is not None else None
    if out_path is not None:
        write_outputs(
            out_path, predictions_file or predictions, metrics, tables, samples_sha256=samples_sha256
        )
    return AuditResult(
        out_dir=out_path,
        metrics=metrics,
        tables_text=tables,
        predictions=predictions,
        samples_sha256=samples_sha256,
    )


def load_run(directory: str | Path) -> AuditResult:
    """The result of an audit or a scoring from its run directory (``metrics.json``,
    ``tables.txt``, ``predictions.jsonl``): its files checked against ``manifest.json``
    (:func:`nlibias.io.run_manifest.check_run_directory`), ``metrics.json`` against its schema
    (:func:`nlibias.io.results.read_metrics`)."""
    from nlibias.catalog.registry import load_plugins
    from nlibias.errors import SourceError
    from nlibias.io.predictions import read_predictions
    from nlibias.io.results import read_metrics
    from nlibias.io.run_manifest import check_run_directory

    load_plugins()  # a plug-in benchmark's measures are declared: their ranges are checked
    path = Path(directory)
    metrics_path = path / METRICS_FILE
    if not metrics_path.is_file():
        raise SourceError(path, None, "no metrics.json here", fix="pass a run directory written by an audit")
    metrics = read_metrics(metrics_path)  # an impossible value is named by its field first
    check_run_directory(path, OUTPUT_FILES)
    tables_path = path / TABLES_TXT
    tables = tables_path.read_text(encoding="utf-8").rstrip("\n") if tables_path.is_file() else ""
    predictions_path = path / PREDICTIONS_JSONL
    predictions = tuple(read_predictions(predictions_path)) if predictions_path.is_file() else ()
    return AuditResult(out_dir=path, metrics=metrics, tables_text=tables, predictions=predictions)
