"""Read what a report needs from an audit/score or extension run directory; every part optional."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from nlibias.benchmarks.base import Benchmark
from nlibias.errors import NlibiasError
from nlibias.io.jsonl import json_object_or_none
from nlibias.io.results import MetricsDocument, RunInfo
from nlibias.io.run_dir import RunDirectory, RunSamples, read_run
from nlibias.io.run_manifest import no_run_at, run_directory
from nlibias.io.samples import read_samples
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
    """Everything a report can show about one run directory (loaded lazily)."""

    path: Path
    label: str
    metrics: MetricsDocument = field(default_factory=lambda: cast(MetricsDocument, {}))
    """``metrics.json``, checked (empty for an extension run)."""
    run_json: Mapping[str, Any] = field(default_factory=dict)
    card: str | None = None
    input_changes: list[str] = field(default_factory=list)
    """Inputs edited since the run, in words; the report then shows no sample texts."""
    record: RunDirectory | None = field(default=None, repr=False)
    benchmark: Benchmark | None = None
    """The benchmark of its samples (set by the loading job): its units pair comparisons."""
    _samples: list[Sample] | None = field(default=None, repr=False)
    _predictions: list[Prediction] | None = field(default=None, repr=False)

    @property
    def source(self) -> str:
        return self.metrics.get("source", "unknown")

    @property
    def models(self) -> Mapping[str, Mapping[str, Any]]:
        return self.metrics.get("models", {})

    @property
    def run_info(self) -> RunInfo:
        return self.metrics.get("run", {})

    def samples_path(self) -> Path | None:
        """The samples the run was scored on."""
        return self._located().found

    def _located(self) -> RunSamples:
        return self.record.samples if self.record else RunSamples.locate(self.path, self.metrics, None)

    def samples(self) -> list[Sample]:
        """The run's samples; ``[]`` when gone, unreadable or not the ones the run read."""
        if self._samples is None:
            path = self.samples_path()
            if path is None or self.input_changes:
                return []
            self._samples = _or_empty(lambda: read_samples(self._located().check(path)))
        return self._samples

    def predictions(self) -> list[Prediction]:
        """The run's predictions; ``[]`` when ``predictions.jsonl`` is absent or unreadable."""
        if self._predictions is None:
            self._predictions = _or_empty(self.record.predictions) if self.record else []
        return self._predictions

    def dataset_folder(self) -> Path | None:
        """The folder of the run's samples."""
        samples = self.samples_path()
        return None if samples is None else samples if samples.is_dir() else samples.parent

    def card_text(self) -> str | None:
        """The dataset card of the run itself or of the dataset it was audited on."""
        folder = self.dataset_folder()
        return self.card if self.card is not None or folder is None else _read_card(folder)

    def dataset_funnel(self) -> list[FunnelStage]:
        """Per-stage counts (``run.json``) of this extension run, or of the extension dataset the run
        was audited on; ``[]`` without one."""
        own, folder = funnel_stages(self.run_json), self.dataset_folder()
        if own or folder is None or folder.resolve() == self.path.resolve():
            return own
        return funnel_stages(read_json(folder / RUN_JSON))


class SamplesChangedWarning(UserWarning):
    """The samples file of a run was edited after the run: its texts are not the ones audited."""


def _or_empty(read: Callable[[], list[Any]]) -> list[Any]:
    try:
        return read()
    except (OSError, ValueError, NlibiasError):
        return []


def read_json(path: Path) -> Mapping[str, Any]:
    """A JSON object file, ``{}`` when absent, unreadable, damaged (a key twice too) or not an object."""
    return json_object_or_none(path) or {}


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
    ``{"stages": {name: count}}``, ``{"counts": {...}}`` or ``{"funnel": ...}``."""
    for key in ("stages", "funnel", "stage_counts", "counts"):
        raw = run_json.get(key)
        named: list[tuple[Any, Any]] = list(raw.items()) if isinstance(raw, Mapping) else []
        if isinstance(raw, Sequence) and not isinstance(raw, str):
            items = [(i, item) for i, item in enumerate(raw, start=1) if isinstance(item, Mapping)]
            named = [(item.get("name", item.get("stage", f"stage {i}")), item) for i, item in items]
        stages = [
            FunnelStage(str(name), n) for name, value in named if (n := _stage_count(value)) is not None
        ]
        if stages:
            return stages
    return []


def load_run(path: str | Path, *, label: str | None = None) -> Run:
    """Load an audit/scoring run (through :func:`~nlibias.io.run_dir.read_run`) or an extension run
    for reporting; :class:`SourceError` when the path holds neither ``metrics.json`` nor ``run.json``."""
    given, path = path, run_directory(path)
    record = read_run(path) if (path / METRICS_FILE).is_file() else None
    for change in record.input_changes if record else ():
        warnings.warn(
            f"{path}: {change}; the report leaves out its sample texts (rerun the audit on the "
            "edited samples, or restore the file)",
            SamplesChangedWarning,
            stacklevel=2,
        )
    run_json = read_json(path / RUN_JSON)
    if record is None and not run_json and (path.parent / RUN_JSON).is_file() and _read_card(path):
        return load_run(path.parent, label=label)  # RUN/dataset: the extension run it belongs to
    if record is None and not run_json:
        raise no_run_at(
            given,
            "no metrics.json (audit/score run) and no run.json (extension run)",
            fix="pass the output directory of an audit, a scoring or an extension",
        )
    return Run(
        path=path,
        label=label or path.name or str(path),
        metrics=record.metrics if record else cast(MetricsDocument, {}),
        run_json=run_json,
        card=_read_card(path) if run_json else None,
        input_changes=list(record.input_changes) if record else [],
        record=record,
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
