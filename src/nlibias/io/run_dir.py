"""One run directory read and checked once (:func:`read_run`), for every command that reads runs.

>>> import json, tempfile, pathlib
>>> from nlibias.io.run_manifest import finish_write
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> metrics = {"source": "bbnli", "models": {"m": {"overall": {}}}, "run": {"samples": "gone"}}
>>> _ = (d / "metrics.json").write_text(json.dumps(metrics))
>>> finish_write(d, ["metrics.json"])
>>> run = read_run(d)
>>> run.source, run.samples.recorded, run.samples.found, run.kinds
('bbnli', 'gone', None, {})
>>> run.samples.file()  # doctest: +ELLIPSIS
Traceback (most recent call last):
nlibias.errors.SourceError: .../metrics.json: field run.samples: the samples this run scored are not at 'gone' (...)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, SkipValidation

from nlibias.errors import ConfigError, DataError, SourceError
from nlibias.io.fingerprint import sha256_file
from nlibias.io.predictions import PREDICTIONS_JSONL, read_predictions
from nlibias.io.results import MetricsDocument, ModelRun, check_consistent, read_metrics
from nlibias.io.run_manifest import RunManifest, changed_inputs, check_run_directory, no_run_at, run_directory
from nlibias.io.samples import SAMPLES_JSONL, SAMPLES_PARQUET, read_sample_columns, resolve_samples_path
from nlibias.io.stages import read_record
from nlibias.metrics.paired_units import asked_difference
from nlibias.schema import Prediction
from nlibias.schema.columns import SampleColumns
from nlibias.schema.measure_info import METRICS_FILE

TABLES_TXT = "tables.txt"
OUTPUT_FILES = (PREDICTIONS_JSONL, METRICS_FILE, TABLES_TXT)  # listed in manifest.json


def _holds_samples(path: Path) -> bool:
    return path.is_file() or any((path / name).is_file() for name in (SAMPLES_JSONL, SAMPLES_PARQUET))


class RunSamples(BaseModel):
    """The samples file a run scored: as recorded, where it is now (None: nowhere), its SHA-256."""

    model_config = ConfigDict(frozen=True)

    run: Path | None
    recorded: str | None = None
    found: Path | None = None
    sha256: str | None = None

    @classmethod
    def locate(
        cls,
        run: Path | None,
        metrics: Mapping[str, Any],
        manifest: RunManifest | None,
        *,
        sha256: str | None = None,
    ) -> RunSamples:
        """A run's samples: the manifest's path, then ``run.samples`` of ``metrics.json`` (relative:
        from the working directory, the run and each folder above it), then the run itself."""
        entry = manifest.get("inputs", {}).get("samples") if manifest else None
        recorded = metrics.get("run", {}).get("samples")
        candidates = [Path(entry["path"])] if entry else []
        if recorded:
            given = Path(recorded).expanduser()
            bases = [Path.cwd(), *([run.absolute(), *run.absolute().parents] if run else [])]
            candidates += [given] if given.is_absolute() else [base / given for base in bases]
        candidates += [run] if run is not None else []
        found = next((path for path in candidates if _holds_samples(path)), None)
        return cls(
            run=run,
            recorded=recorded or (entry["path"] if entry else None),
            found=found,
            sha256=sha256 or (entry["sha256"] if entry else None),
        )

    def file(self, given: str | Path | None = None) -> Path:
        """``given`` when given, else the samples file found."""
        if given is not None:
            return Path(given)
        if self.found is not None:
            return self.found
        reason = "this run records no samples file"
        if self.recorded:
            reason = (
                f"the samples this run scored are not at {self.recorded!r} (looked for from the working "
                "directory, the run directory and each folder above it)"
            )
        raise SourceError(
            (self.run or Path()) / METRICS_FILE,
            "run.samples",
            reason,
            fix="pass the samples file the run audited ({parameter samples})",
            names=("samples",),
        )

    def check(self, path: str | Path, *, given: bool = True) -> Path:
        """The samples file of ``path``, refused when its bytes are not those the run read
        (``given``: named by the caller's ``samples``; else the file the run records)."""
        file = resolve_samples_path(path)
        now = sha256_file(file)
        if self.sha256 is not None and now != self.sha256:
            run = f"run {self.run}: " if self.run is not None else ""
            words = (
                f"the samples file {file} is not the one the run audited ({run}SHA-256 {self.sha256[:12]} "
                f"when audited, now {now[:12]}): it was edited after the run, or it is another folder's"
            )
            if not given:
                raise DataError(words, fix="restore the samples the run audited, or audit again on these")
            raise ConfigError(
                f"{words}; pass the samples the run audited ({{parameter samples}})", parameter="samples"
            )
        return file

    def check_texts(self, path: str | Path, columns: SampleColumns, sha256: str | None) -> None:
        """Refuse samples (``columns`` of ``path``, hashed ``sha256``) other than those the run audited:
        the same bytes, or the same texts under each id as the audited file, where that file is still
        as audited (the samples reordered or converted)."""
        if self.sha256 is None or sha256 == self.sha256:
            return
        audited = read_sample_columns(self.found) if self.found is not None else None
        if audited is not None and audited.sha256 == self.sha256:
            texts = dict(zip(audited.columns.ids, audited.columns.text_code.tolist(), strict=True))
            if all(
                texts.get(i, t) == t for i, t in zip(columns.ids, columns.text_code.tolist(), strict=True)
            ):
                return
        self.check(path)


class RunDirectory(BaseModel):
    """A run directory as :func:`read_run` read and checked it."""

    model_config = ConfigDict(frozen=True)

    path: Path
    metrics: SkipValidation[MetricsDocument]
    manifest: SkipValidation[RunManifest | None]
    samples: RunSamples
    input_changes: tuple[str, ...] = ()
    """Inputs edited since the run, in words."""
    tables: str = ""
    predictions_path: Path | None = None

    @property
    def source(self) -> str:
        return self.metrics["source"]

    @property
    def kinds(self) -> dict[str, str]:
        """Each model's predictor kind as recorded (``{}`` in files written before it was)."""
        return dict(self.metrics.get("predictor_kinds", {}))

    def model_run(self, model: str) -> ModelRun:
        """How model ``model`` ran (``run.models.MODEL``; ``{}`` when not recorded)."""
        return self.metrics.get("run", {}).get("models", {}).get(model, {})

    def predictions(self) -> list[Prediction]:
        return read_predictions(self.predictions_path) if self.predictions_path is not None else []

    def stage(self, name: str) -> dict[str, Any] | None:
        return read_record(self.path, name)


ASKED = ("option_score",)
"""How a generative model was asked that its key does not show (a per-byte option choice measures
something else than a total one; the prompt style and the mode are in the key)."""


COMPARED = ("kind", *ASKED)
"""What two models compared with each other must share (the gate's pair, a report's column and its
reference): their predictor kind and how they were asked."""


def refuse_unlike(
    first: tuple[str, Path, Mapping[str, str]],
    second: tuple[str, Path, Mapping[str, str]],
    *,
    roles: tuple[str, str],
    verb: str,
    fix: Callable[[str], str],
) -> None:
    """Refuse two models, each ``(model, run, settings)``, that differ in a :data:`COMPARED`
    setting: their measures are of different things. ``roles`` name them, ``verb`` what compares."""
    differ = asked_difference(first[2], second[2], COMPARED)
    if differ is None:
        return
    setting, a, b = differ
    other = f"{roles[1]} model {second[0]!r} ({second[1]})"
    words = (
        f"is a {a} model and {other} a {b} one"
        if setting == "kind"
        else f"has {setting} {a!r} and {other} {b!r}"
    )
    raise DataError(
        f"{roles[0]} model {first[0]!r} ({first[1]}) {words}: their measures are of different things; "
        f"{verb} models of one {setting}",
        model=first[0],
        field=setting,
        fix=fix(setting),
    )


def asked_settings(rows: Iterable[Prediction]) -> dict[str, dict[str, str]]:
    """Each model's :data:`ASKED` settings, as its prediction rows record them (rows imported from
    another tool's log record them too; ``metrics.json`` may not)."""
    asked: dict[str, dict[str, str]] = {}
    for row in rows:
        asked.setdefault(row.model, {}).update({k: str(row.extra[k]) for k in ASKED if k in row.extra})
    return asked


def read_run(path: str | Path) -> RunDirectory:
    """The run directory at ``path`` (or of a ``metrics.json``), checked."""
    directory = run_directory(path)
    metrics_path = directory / METRICS_FILE
    if not metrics_path.is_file():
        raise no_run_at(path, "no metrics.json", fix="pass a run directory written by an audit or a scoring")
    metrics = read_metrics(metrics_path)  # an impossible value is named by its field first
    manifest = check_run_directory(directory, OUTPUT_FILES)
    check_consistent(metrics, path=metrics_path)
    tables, predictions = directory / TABLES_TXT, directory / PREDICTIONS_JSONL
    return RunDirectory(
        path=directory,
        metrics=metrics,
        manifest=manifest,
        samples=RunSamples.locate(directory, metrics, manifest),
        input_changes=tuple(changed_inputs(directory)),
        tables=tables.read_text(encoding="utf-8").rstrip("\n") if tables.is_file() else "",
        predictions_path=predictions if predictions.is_file() else None,
    )
