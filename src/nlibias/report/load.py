"""Read what a report needs from run directories, tolerating every optional part being absent.

A *run* is an audit/score directory (``metrics.json``, ``predictions.jsonl``) or an extension
dataset directory (``run.json`` with per-stage counts, a card ``README.md``, samples). Nothing
here raises on a missing optional file or key; a directory with neither metrics nor
``run.json`` is refused, and so is a ``metrics.json`` that contradicts itself
(:mod:`nlibias.report.metrics_checks`). A samples file edited after the audit is not shown beside
the audit's answers: :attr:`Run.input_changes` says what changed, the report's example pairs are
left out and a :class:`SamplesChangedWarning` is raised.

>>> import json, tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "metrics.json").write_text(json.dumps({"source": "bbnli", "models": {"m": {"overall": {}}}}))
>>> load_run(d).source
'bbnli'
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from nlibias.benchmarks.base import Benchmark
from nlibias.errors import NlibiasError, SourceError
from nlibias.io.results import MetricsDocument, read_metrics
from nlibias.io.run_manifest import changed_inputs, check_run_directory
from nlibias.report.metrics_checks import check_consistent, check_unique_keys
from nlibias.schema import Prediction, Sample
from nlibias.schema.measure_info import METRICS_FILE

RUN_JSON = "run.json"
CARD_FILES = ("README.md", "CARD.md", "card.md")


@dataclass(frozen=True)
class FunnelStage:
    """One stage of an extension run with the number of items it kept."""

    name: str
    count: int


@dataclass
class Run:
    """Everything a report can show about one run directory (loaded lazily where costly)."""

    path: Path
    label: str
    metrics: MetricsDocument = field(default_factory=lambda: _no_metrics())
    """``metrics.json``, checked against its schema (empty for an extension run)."""
    run_json: Mapping[str, Any] = field(default_factory=dict)
    card: str | None = None
    input_changes: list[str] = field(default_factory=list)
    """Inputs of the run (its samples file) edited since the run was written, in words; the
    report then shows no sample texts (they would sit beside answers to other texts)."""
    benchmark: Benchmark | None = None
    """The benchmark of its samples, set by the job that loads it: its units pair the comparisons."""
    _samples: list[Sample] | None = field(default=None, repr=False)
    _predictions: list[Prediction] | None = field(default=None, repr=False)

    @property
    def source(self) -> str:
        return str(self.metrics.get("source", "unknown"))

    @property
    def models(self) -> Mapping[str, Mapping[str, Any]]:
        models = self.metrics.get("models")
        if not isinstance(models, Mapping):
            return {}
        return {str(k): v for k, v in models.items() if isinstance(v, Mapping)}

    @property
    def run_info(self) -> Mapping[str, Any]:
        info = self.metrics.get("run")
        return info if isinstance(info, Mapping) else {}

    def samples_path(self) -> Path | None:
        """The samples the run was scored on: ``metrics["run"]["samples"]`` or the run dir itself."""
        candidates: list[Path] = []
        given = self.run_info.get("samples")
        if isinstance(given, str) and given:
            candidates.append(Path(given))
            if not Path(given).is_absolute():
                candidates.append(self.path / given)
        candidates.append(self.path)
        for candidate in candidates:
            if candidate.is_file():
                return candidate
            if candidate.is_dir() and any(
                (candidate / n).exists() for n in ("samples.jsonl", "samples.parquet")
            ):
                return candidate
        return None

    def samples(self) -> list[Sample]:
        """The run's samples, or ``[]`` when the samples file is gone or unreadable."""
        if self._samples is None:
            path = self.samples_path()
            self._samples = []
            if path is not None and not self.input_changes:
                from nlibias.io.samples import read_samples

                try:
                    self._samples = list(read_samples(path))
                except (OSError, ValueError, NlibiasError):
                    self._samples = []
        return self._samples

    def predictions(self) -> list[Prediction]:
        """The run's predictions, or ``[]`` when ``predictions.jsonl`` is absent or unreadable."""
        if self._predictions is None:
            self._predictions = []
            path = self.path / "predictions.jsonl"
            if path.exists():
                from nlibias.io.predictions import read_predictions

                try:
                    self._predictions = read_predictions(path)
                except (OSError, ValueError, NlibiasError):
                    self._predictions = []
        return self._predictions

    def funnel(self) -> list[FunnelStage]:
        """Per-stage counts of an extension run (``run.json``), in order; ``[]`` when absent."""
        return funnel_stages(self.run_json)

    def card_text(self) -> str | None:
        """The dataset card of the run itself or of the dataset it was audited on."""
        if self.card is not None:
            return self.card
        samples = self.samples_path()
        if samples is not None:
            folder = samples if samples.is_dir() else samples.parent
            return _read_card(folder)
        return None

    def dataset_funnel(self) -> list[FunnelStage]:
        """Funnel of this run, or of the extension dataset the run was audited on."""
        own = self.funnel()
        if own:
            return own
        samples = self.samples_path()
        if samples is None:
            return []
        folder = samples if samples.is_dir() else samples.parent
        if folder.resolve() == self.path.resolve():
            return []
        return funnel_stages(_read_json(folder / RUN_JSON))


class SamplesChangedWarning(UserWarning):
    """The samples file of a run was edited after the run: its texts are not the ones audited."""


def _no_metrics() -> MetricsDocument:
    return cast(MetricsDocument, {})


def _read_json(path: Path) -> Mapping[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: nested too deep
        return {}
    return data if isinstance(data, Mapping) else {}


def _read_card(folder: Path) -> str | None:
    for name in CARD_FILES:
        path = folder / name
        if path.is_file():
            try:
                return path.read_text(encoding="utf-8")
            except OSError:
                return None
    return None


def _stage_count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, Mapping):
        for key in ("count", "n", "kept", "out", "n_out", "output", "samples", "total"):
            if key in value:
                return _stage_count(value[key])
    return None


def funnel_stages(run_json: Mapping[str, Any]) -> list[FunnelStage]:
    """Stage counts from ``run.json`` in any of the shapes ``{"stages": [{"name", "count"}]}``,
    ``{"stages": {name: count}}``, ``{"counts": {...}}`` or ``{"funnel": ...}``.

    >>> funnel_stages({"stages": [{"name": "masked", "count": 10}, {"name": "kept", "n_out": 4}]})
    [FunnelStage(name='masked', count=10), FunnelStage(name='kept', count=4)]
    >>> funnel_stages({"stages": {"a": 3, "b": {"kept": 2}}})
    [FunnelStage(name='a', count=3), FunnelStage(name='b', count=2)]
    >>> funnel_stages({})
    []
    """
    for key in ("stages", "funnel", "stage_counts", "counts"):
        raw = run_json.get(key)
        stages: list[FunnelStage] = []
        if isinstance(raw, Mapping):
            for name, value in raw.items():
                count = _stage_count(value)
                if count is not None:
                    stages.append(FunnelStage(str(name), count))
        elif isinstance(raw, Sequence) and not isinstance(raw, str):
            for i, item in enumerate(raw):
                if isinstance(item, Mapping):
                    name = item.get("name", item.get("stage", f"stage {i + 1}"))
                    count = _stage_count(item)
                    if count is not None:
                        stages.append(FunnelStage(str(name), count))
        if stages:
            return stages
    return []


def load_run(path: str | Path, *, label: str | None = None) -> Run:
    """Load a run directory (or a ``metrics.json`` file) for reporting.

    ``metrics.json`` is checked against its schema (:func:`nlibias.io.results.read_metrics`:
    impossible values are refused with their field path, a damaged file with its parse error) and
    the run directory's files against its manifest (:func:`nlibias.io.run_manifest.check_run_directory`).
    Raises :class:`SourceError` when the path holds neither ``metrics.json`` nor ``run.json``.
    """
    path = Path(path)
    metrics_path = path if path.is_file() else path / METRICS_FILE
    path = metrics_path.parent
    metrics = _no_metrics()
    changes: list[str] = []
    if metrics_path.is_file():
        metrics = read_metrics(metrics_path)  # an impossible value is named by its field first
        check_unique_keys(metrics_path)
        check_consistent(metrics, path=metrics_path)
        check_run_directory(path)
        changes = changed_inputs(path)
        for change in changes:
            warnings.warn(
                f"{path}: {change}; the report leaves out its sample texts (rerun the audit on the "
                "edited samples, or restore the file)",
                SamplesChangedWarning,
                stacklevel=2,
            )
    run_json = _read_json(path / RUN_JSON)
    if not metrics and not run_json and (path.parent / RUN_JSON).is_file() and _read_card(path):
        return load_run(path.parent, label=label)  # RUN/dataset: the extension run it belongs to
    if not metrics and not run_json:
        raise SourceError(
            path,
            None,
            "no metrics.json (audit/score run) and no run.json (extension run) here",
            fix="pass the output directory of an audit, a scoring or an extension",
        )
    card = _read_card(path) if run_json else None
    return Run(
        path=path,
        label=label or path.name or str(path),
        metrics=metrics,
        run_json=run_json,
        card=card,
        input_changes=changes,
    )


def load_runs(paths: Sequence[str | Path]) -> list[Run]:
    """Load several runs; labels are the directory names, made unique when two collide."""
    runs = [load_run(p) for p in paths]
    seen: dict[str, int] = {}
    for run in runs:
        if run.label in seen:
            seen[run.label] += 1
            run.label = f"{run.label} ({seen[run.label]})"
        else:
            seen[run.label] = 1
    return runs
