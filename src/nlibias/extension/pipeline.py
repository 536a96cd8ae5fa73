"""The ``nlibias extend`` pipeline: masks → masked → fill → filter → validate → counterfactual → export.

Each stage reads named files of the run directory and writes its own; when it finishes it writes
``stages/<name>.done.json`` with a fingerprint of its inputs (file hashes) and settings, and the
hashes of its outputs. A stage whose marker matches is skipped, so a killed run resumes at the
stage it was in, and the prediction cache (committed batch by batch) spares the model calls that
stage had already made. ``run.json`` records per-stage status, counts and durations.

>>> # result = run_pipeline(load_config("configs/bbnli-next.yaml"), until="filter")
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nlibias.benchmarks.bbnli import BBNLISubtopic
from nlibias.errors import ConfigError, SourceError
from nlibias.extension.config import ExtendConfig, FilterConfig, MLMConfig, ModelSpec, dump_config
from nlibias.io.atomic import atomic_write_text, write_json
from nlibias.models.base import NLIClassifier
from nlibias.models.mlm.mask_filler import MaskFiller
from nlibias.runtime.cache import PredictionCache, default_cache_path

STAGES: tuple[str, ...] = ("masks", "masked", "fill", "filter", "validate", "counterfactual", "export")
PIPELINE_VERSION = 1

OUTPUTS: dict[str, tuple[str, ...]] = {
    "masks": ("masks/templates.jsonl", "masks/counts.json"),
    "masked": ("masked/samples.jsonl", "masked/counts.json"),
    "fill": ("fill/candidates.jsonl", "fill/stats.json"),
    "filter": ("filter/candidates.jsonl", "filter/kept.jsonl", "filter/summary.json"),
    "validate": ("validation/queue.csv", "validation/accepted.jsonl", "validation/summary.json"),
    "counterfactual": ("counterfactual/samples.jsonl", "counterfactual/stats.json"),
    "export": (
        "dataset/README.md",
        "dataset/samples.jsonl",
        "dataset/samples.parquet",
        "dataset/data/train.parquet",
        "dataset/data/train.jsonl",
        "dataset/data/train.csv",
    ),
}
INPUTS: dict[str, tuple[str, ...]] = {
    "masks": (),
    "masked": ("masks/templates.jsonl",),
    "fill": ("masked/samples.jsonl",),
    "filter": ("fill/candidates.jsonl",),
    "validate": ("filter/kept.jsonl",),
    "counterfactual": ("validation/accepted.jsonl", "filter/candidates.jsonl"),
    "export": (
        "counterfactual/samples.jsonl",
        "counterfactual/stats.json",
        "masks/counts.json",
        "masked/counts.json",
        "fill/stats.json",
        "filter/summary.json",
        "validation/summary.json",
    ),
}


@dataclass(frozen=True)
class Factories:
    """How the pipeline builds its models (tests pass fakes)."""

    filler: Callable[[MLMConfig], MaskFiller]
    classifier: Callable[[ModelSpec, FilterConfig], NLIClassifier]


def default_filler(settings: MLMConfig) -> MaskFiller:
    """An :class:`~nlibias.models.mlm.hf.HFMaskedLMFiller`; ``fake`` / ``fake:NAME`` gives a dry-run fake."""
    if settings.model == "fake" or settings.model.startswith("fake:"):
        from nlibias.models.mlm.mask_filler import FakeMaskFiller

        return FakeMaskFiller(settings.model)
    from nlibias.models.mlm.hf import HFMaskedLMFiller

    return HFMaskedLMFiller(
        settings.model,
        revision=settings.revision,
        device=settings.device,
        dtype=settings.dtype,
        max_tokens=settings.max_tokens,
        max_batch_size=settings.max_batch_size,
        threads=settings.threads,
    )


def default_classifier(spec: ModelSpec, settings: FilterConfig) -> NLIClassifier:
    """An :class:`~nlibias.models.nli.hf.HFNLIClassifier`; ``fake:NAME`` gives a dry-run fake."""
    if spec.model.startswith("fake:"):
        from nlibias.models.fake import FakeNLIClassifier

        return FakeNLIClassifier(spec.key, seed=int(hashlib.sha256(spec.model.encode()).hexdigest()[:6], 16))
    from nlibias.models.nli.hf import HFNLIClassifier

    return HFNLIClassifier(
        spec.model,
        revision=spec.revision,
        device=settings.device,
        dtype=settings.dtype,
        label_map=spec.label_map,
        max_tokens=settings.max_tokens,
        max_batch_size=settings.max_batch_size,
        name=spec.key,
        quantize=spec.quantize,
        compile=spec.compile,
        threads=settings.threads,
    )


DEFAULT_FACTORIES = Factories(filler=default_filler, classifier=default_classifier)


@dataclass(frozen=True)
class StageReport:
    name: str
    status: str
    """``ran``, ``skipped`` (finished before, inputs unchanged) or ``waiting`` (needs judgements)."""
    seconds: float
    """Duration of the run that produced the outputs (for a skipped stage: of the earlier run)."""
    counts: Mapping[str, Any] = field(default_factory=dict)
    message: str = ""


@dataclass(frozen=True)
class PipelineResult:
    run_dir: Path
    status: str
    """``complete``, ``stopped`` (``--until``) or ``awaiting_judgements``."""
    stages: list[StageReport]
    message: str = ""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _model_fingerprint(model: str, revision: str | None) -> str:
    from nlibias.models.hf_common import hash_local_model, is_local_model

    return hash_local_model(model) if is_local_model(model) else f"{model}@{revision or 'main'}"


class Pipeline:
    """One extension run over a run directory (see module doc)."""

    def __init__(
        self,
        config: ExtendConfig,
        *,
        factories: Factories = DEFAULT_FACTORIES,
        progress: bool = True,
        on_stage: Callable[[StageReport], None] | None = None,
    ) -> None:
        self.config = config
        self.run_dir = Path(config.run_dir)
        self.factories = factories
        self.progress = progress
        self.on_stage = on_stage
        self._subtopics: list[BBNLISubtopic] | None = None
        self._cache: PredictionCache | None = None

    # -- inputs ---------------------------------------------------------------------------------

    @property
    def all_subtopics(self) -> list[BBNLISubtopic]:
        if self._subtopics is None:
            from nlibias.benchmarks.bbnli import load_bbnli_dir
            from nlibias.benchmarks.data_locations import resolve_benchmark_path

            self._subtopics = load_bbnli_dir(resolve_benchmark_path("bbnli", self.config.source))
        return self._subtopics

    @property
    def subtopics(self) -> list[BBNLISubtopic]:
        """The selected subtopics (all when the config names none); unknown names are refused."""
        import difflib

        by_id = {s.subtopic: s for s in self.all_subtopics}
        lowered = {k.lower(): k for k in by_id}
        chosen: list[BBNLISubtopic] = []
        for name in self.config.subtopics:
            key = name if name in by_id else lowered.get(name.lower())
            if key is None:
                close = difflib.get_close_matches(name, list(by_id), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ConfigError(
                    f"unknown subtopic {name!r}{hint}; known: {', '.join(sorted(by_id))}",
                    parameter="subtopics",
                )
            chosen.append(by_id[key])
        return chosen or list(self.all_subtopics)

    def _source_hashes(self) -> dict[str, str]:
        return {Path(s.path).name: sha256_file(Path(s.path)) for s in self.subtopics}

    def templates_path(self) -> Path | None:
        from nlibias.extension.masks import default_templates_path

        curated = self.config.templates.curated
        if curated is None:
            return None
        return default_templates_path() if curated == "default" else Path(curated)

    def judgements_path(self) -> Path:
        from nlibias.extension.validation_handoff import JUDGEMENTS_CSV

        configured = self.config.validation.judgements
        return Path(configured) if configured else self.run_dir / JUDGEMENTS_CSV

    @property
    def cache(self) -> PredictionCache:
        if self._cache is None:
            self._cache = PredictionCache(self.config.cache or default_cache_path())
        return self._cache

    def _settings(self, stage: str) -> dict[str, Any]:
        """What, besides its input files, determines a stage's outputs."""
        config = self.config
        if stage == "masks":
            path = self.templates_path()
            from nlibias.extension.masks import default_stopwords_path

            stopwords = (
                Path(config.templates.stopwords) if config.templates.stopwords else default_stopwords_path()
            )
            return {
                "templates": sha256_file(path) if path is not None and path.exists() else str(path),
                "derive": config.templates.derive,
                "stopwords": sha256_file(stopwords) if config.templates.derive else None,
                "subtopics": sorted(s.subtopic for s in self.subtopics),
                "source": self._source_hashes(),
            }
        if stage in ("masked", "counterfactual"):
            settings: dict[str, Any] = {"source": self._source_hashes()}
            if stage == "counterfactual":
                settings["validation"] = self._settings("validate")
            return settings
        if stage == "fill":
            mlm = config.mlm
            return {
                "mlm": _model_fingerprint(mlm.model, mlm.revision),
                "top_k": mlm.top_k,
                "block": sorted(mlm.block_list),
            }
        if stage == "filter":
            return {
                "models": [
                    # speed flags that change outputs are appended only when set, so runs
                    # without them keep their fingerprints (and resume)
                    [m.key, _model_fingerprint(m.model, m.revision), m.label_map]
                    + ([f"quantize={m.quantize}"] if m.quantize else [])
                    + (["compile"] if m.compile else [])
                    for m in config.filter.models
                ],
                "policy": config.filter.policy_text,
            }
        if stage == "validate":
            judgements = self.judgements_path()
            return {
                "judgements": sha256_file(judgements) if judgements.exists() else None,
                "unvalidated": config.validation.unvalidated,
            }
        return {"config": config.model_dump()}

    def fingerprint(self, stage: str) -> str:
        inputs = {}
        for rel in INPUTS[stage]:
            path = self.run_dir / rel
            if not path.exists():
                raise SourceError(
                    path, None, f"missing: stage {stage} needs the outputs of the earlier stages"
                )
            inputs[rel] = sha256_file(path)
        payload = {
            "stage": stage,
            "version": PIPELINE_VERSION,
            "settings": self._settings(stage),
            "inputs": inputs,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()

    def _marker(self, stage: str) -> Path:
        return self.run_dir / "stages" / f"{stage}.done.json"

    def finished(self, stage: str, fingerprint: str) -> dict[str, Any] | None:
        """The stage's marker when it matches ``fingerprint`` and its outputs are intact, else None."""
        path = self._marker(stage)
        if not path.exists():
            return None
        try:
            marker = json.loads(path.read_bytes())
        except ValueError:  # a damaged marker (not UTF-8, not JSON): the stage runs again
            return None
        if not isinstance(marker, dict) or marker.get("fingerprint") != fingerprint:
            return None
        outputs = marker.get("outputs", {})
        for rel, digest in outputs.items() if isinstance(outputs, dict) else [("", None)]:
            output = self.run_dir / rel
            if not output.exists() or sha256_file(output) != digest:
                return None
        return dict(marker)

    # -- running --------------------------------------------------------------------------------

    def run(self, *, from_stage: str | None = None, until: str | None = None) -> PipelineResult:
        for name, value in (("from_stage", from_stage), ("until", until)):
            if value is not None and value not in STAGES:
                raise ConfigError(
                    f"{name} {value!r}: unknown stage (stages: {', '.join(STAGES)})", parameter=name
                )
        first_forced = STAGES.index(from_stage) if from_stage else len(STAGES)
        last = STAGES.index(until) if until else len(STAGES) - 1
        if first_forced <= len(STAGES) - 1 and first_forced > last:
            raise ConfigError(f"from_stage {from_stage} comes after until {until}", parameter="from_stage")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.run_dir / "config.yaml", dump_config(self.config))
        reports: list[StageReport] = []
        status, message = "complete" if last == len(STAGES) - 1 else "stopped", ""
        started = datetime.now(UTC).isoformat(timespec="seconds")
        try:
            for index, stage in enumerate(STAGES[: last + 1]):
                fingerprint = self.fingerprint(stage)
                marker = None if index >= first_forced else self.finished(stage, fingerprint)
                if marker is not None:
                    report = StageReport(
                        stage, "skipped", float(marker.get("seconds", 0.0)), marker.get("counts", {})
                    )
                else:
                    if from_stage is not None and index < first_forced:
                        raise ConfigError(
                            f"from_stage {from_stage}: the earlier stage {stage!r} has not finished or its inputs "
                            "changed; run without from_stage",
                            parameter="from_stage",
                        )
                    report = self._run_stage(stage, fingerprint)
                reports.append(report)
                if self.on_stage is not None:
                    self.on_stage(report)
                if report.status == "waiting":
                    status, message = "awaiting_judgements", report.message
                    break
        finally:
            self._write_run_json(reports, status, started)
            if self._cache is not None:
                self._cache.close()
                self._cache = None
        return PipelineResult(self.run_dir, status, reports, message)

    def _run_stage(self, stage: str, fingerprint: str) -> StageReport:
        began = time.perf_counter()
        from nlibias.extension import stages

        handler: Callable[[Pipeline], dict[str, Any] | str] = getattr(stages, f"run_{stage}")
        outcome = handler(self)
        seconds = round(time.perf_counter() - began, 3)
        if isinstance(outcome, str):
            return StageReport(stage, "waiting", seconds, {}, outcome)
        marker = {
            "stage": stage,
            "fingerprint": fingerprint,
            "outputs": {rel: sha256_file(self.run_dir / rel) for rel in OUTPUTS[stage]},
            "counts": outcome,
            "seconds": seconds,
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        write_json(self._marker(stage), marker)
        return StageReport(stage, "ran", seconds, outcome)

    def _write_run_json(self, reports: Sequence[StageReport], status: str, started: str) -> None:
        write_json(
            self.run_dir / "run.json",
            {
                "status": status,
                "started_at": started,
                "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "stages": [asdict(r) for r in reports],
                "config": self.config.model_dump(),
            },
        )

    def card_config(self) -> dict[str, Any]:
        """The configuration recorded in the card's YAML header."""
        config = self.config
        path = self.templates_path()
        return {
            "source": str(Path(self.all_subtopics[0].path).parent.parent) if self.all_subtopics else None,
            "subtopics": sorted(s.subtopic for s in self.subtopics),
            "templates_file": str(path) if path else None,
            "templates_sha256": sha256_file(path) if path is not None and path.exists() else None,
            "derived_templates": config.templates.derive,
            "mlm": config.mlm.model,
            "mlm_revision": config.mlm.revision,
            "top_k": config.mlm.top_k,
            "block_list": list(config.mlm.block_list),
            "filter_models": [m.key for m in config.filter.models],
            "policy": config.filter.policy_text,
            "holdout_models": [m.key for m in config.filter.holdout],
            "seed": config.seed,
            "annotation_rounds": 0
            if config.validation.unvalidated and not self.judgements_path().exists()
            else 1,
            "pipeline_version": PIPELINE_VERSION,
        }


def run_pipeline(
    config: ExtendConfig,
    *,
    from_stage: str | None = None,
    until: str | None = None,
    factories: Factories = DEFAULT_FACTORIES,
    progress: bool = True,
    on_stage: Callable[[StageReport], None] | None = None,
) -> PipelineResult:
    """Run (or resume) the extension pipeline described by ``config``; see :class:`Pipeline`."""
    return Pipeline(config, factories=factories, progress=progress, on_stage=on_stage).run(
        from_stage=from_stage, until=until
    )
