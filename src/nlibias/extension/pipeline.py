"""The ``nlibias extend`` pipeline: masks → masked → fill → filter → validate → counterfactual → export.
A finished stage whose record (:data:`.stages.SPECS`) matches is skipped, so a killed run resumes; a
rerun with other settings is refused unless ``force`` or ``from_stage``; a stage that runs removes
the later stages' outputs, so the directory never mixes two runs."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from nlibias.benchmarks.bbnli import BBNLISubtopic, load_bbnli_dir
from nlibias.benchmarks.bbnli_source import BBNLI_DATA
from nlibias.benchmarks.data_locations import resolve_data
from nlibias.errors import ConfigError, SourceError
from nlibias.extension.config import ExtendConfig, FilterConfig, FilterModelConfig, MLMConfig, dump_config
from nlibias.extension.config_rules import chosen_subtopics, one_of
from nlibias.extension.fill import causal_filler_for, masked_target
from nlibias.extension.filtering import filter_classifier
from nlibias.extension.masked_templates import default_templates_path
from nlibias.extension.stages import SPECS, Factories, judgements_input
from nlibias.extension.validation_handoff import JUDGEMENTS_CSV
from nlibias.io.atomic import atomic_write_text, locked_folder, write_json
from nlibias.io.fingerprint import sha256_file
from nlibias.io.overwrites import refuse_overwrites, refuse_writing_into
from nlibias.io.stages import (
    DONE,
    RUN,
    Stage,
    changes,
    finish_stage,
    read_record,
    record_path,
    record_problem,
    remove_record,
    stage_status,
)
from nlibias.models.base import NLIClassifier
from nlibias.models.fake import FakeNLIClassifier
from nlibias.models.mlm.hf import HFMaskedLMFiller
from nlibias.models.mlm.mask_filler import FakeMaskFiller, MaskFiller
from nlibias.runtime.cache import PredictionCache, default_cache_path
from nlibias.schema.model_ref import ModelRef

STAGES: tuple[str, ...] = tuple(SPECS)
_RUN_FILES = ("run.json", "config.yaml")
"""What the run writes beside its stages' outputs."""
PIPELINE_VERSION = 2


def default_filler(settings: MLMConfig) -> MaskFiller:
    """The fill model: a masked LM, a causal one (docs/extension.md) or, for ``fake:NAME``, a fake."""
    if ModelRef.unread(settings.model).is_fake:
        return FakeMaskFiller(settings.model)
    causal = causal_filler_for(settings)
    if causal is not None:
        return causal
    return HFMaskedLMFiller(masked_target(settings.model), revision=settings.revision, **settings.loading())


def default_classifier(spec: FilterModelConfig, settings: FilterConfig) -> NLIClassifier:
    """The filter model's classifier; ``fake:NAME`` is a fake seeded by its name (two fakes disagree)."""
    if ModelRef.unread(spec.model).is_fake:
        return FakeNLIClassifier(spec.key, seed=int(hashlib.sha256(spec.model.encode()).hexdigest()[:6], 16))
    return filter_classifier(spec, settings)


DEFAULT_FACTORIES = Factories(filler=default_filler, classifier=default_classifier)


@dataclass(frozen=True)
class StageReport:
    name: str
    status: str
    """``ran``, ``skipped`` (finished before, inputs unchanged) or ``waiting`` (for judgements)."""
    seconds: float
    """Duration of the run that produced the outputs (a skipped stage's: the earlier run's)."""
    counts: Mapping[str, Any] = field(default_factory=dict)
    message: str = ""
    """Why the stage waits, or why it ran again (``recomputed: ...`` outputs damaged since)."""


@dataclass(frozen=True)
class PipelineResult:
    run_dir: Path
    status: str
    """``complete``, ``stopped`` (``--until``) or ``awaiting_judgements`` (``run.json`` also says
    ``running`` or ``failed``)."""
    stages: list[StageReport]
    message: str = ""


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
        self.config: ExtendConfig = config
        self.run_dir, self.factories = Path(config.run_dir), factories
        self.progress, self.on_stage = progress, on_stage
        self._cache: PredictionCache | None = None
        self._settings_memo: dict[str, dict[str, Any]] = {}

    @cached_property
    def source_dir(self) -> Path:
        """The BBNLI JSON folder the run reads (``source``, else the resolved data dir)."""
        return resolve_data(BBNLI_DATA, self.config.source)

    @cached_property
    def all_subtopics(self) -> list[BBNLISubtopic]:
        return load_bbnli_dir(self.source_dir)

    @property
    def subtopics(self) -> list[BBNLISubtopic]:
        """The selected subtopics (all when the config names none); unknown names are refused."""
        return chosen_subtopics(self.all_subtopics, self.config.subtopics)

    def templates_path(self) -> Path | None:
        curated = self.config.templates.curated
        if curated is None:
            return None
        return default_templates_path() if curated == "default" else Path(curated)

    def judgements_path(self) -> Path:
        configured = self.config.validation.judgements
        return Path(configured) if configured else self.run_dir / JUDGEMENTS_CSV

    @property
    def cache(self) -> PredictionCache:
        if self._cache is None:
            self._cache = PredictionCache(self.config.cache or default_cache_path())
        return self._cache

    def settings(self, stage: str) -> dict[str, Any]:
        """What, besides its input files, determines a stage's outputs (:attr:`.stages.StageSpec.settings`)."""
        if stage not in self._settings_memo:
            self._settings_memo[stage] = SPECS[stage].settings(self)
        return self._settings_memo[stage]

    def inputs(self, stage: str) -> dict[str, Any]:
        """The hashes of the files a stage reads."""
        inputs: dict[str, Any] = {}
        for rel in SPECS[stage].inputs:
            path = self.run_dir / rel
            if not path.exists():
                reason = f"missing: stage {stage} needs the outputs of the earlier stages"
                raise SourceError(path, None, reason)
            inputs[rel] = sha256_file(path)
        if SPECS[stage].judged:
            inputs.update(judgements_input(self))
        return inputs

    def stage(self, stage: str) -> Stage:
        """The stage as :mod:`nlibias.io.stages` sees it: done when its record says it finished."""
        inputs = {"version": PIPELINE_VERSION, "settings": self.settings(stage), "files": self.inputs(stage)}
        record = record_path(self.run_dir, stage)
        return Stage(stage, self.run_dir / SPECS[stage].outputs[0], record, inputs, recorded=True)

    def _checked(self, stage: str) -> tuple[dict[str, Any] | None, list[str]]:
        """The stage's record when it is done, else None; and its recorded outputs that no longer
        check out (damaged or replaced since: it runs again for them)."""
        status, problems = stage_status(self.run_dir, self.stage(stage))
        if status == DONE:
            return read_record(self.run_dir, stage), []
        untrusted = record_problem(self.run_dir, stage) is not None  # its record damaged or foreign
        return None, problems if status == RUN or untrusted else []

    def _refuse_other_settings(self, rerun_from: int) -> None:
        """Refuse to go on over a finished stage before ``rerun_from`` whose recorded settings differ."""
        found = []
        for stage in STAGES[:rerun_from]:
            record = read_record(self.run_dir, stage)
            inputs = record.get("inputs") if record is not None and "finished_at" in record else None
            if not isinstance(inputs, dict) or not isinstance(inputs.get("settings"), dict):
                continue  # not finished, or written before markers recorded settings: it reruns
            if changed := changes(inputs["settings"], self.settings(stage)):
                found.append((stage, changed))
        if not found:
            return
        described = "; ".join(f"stage {stage}: {', '.join(lines)}" for stage, lines in found)
        raise ConfigError(
            f"{{run_dir}} {str(self.run_dir)!r} holds an extend run with other settings ({described}); "
            "nothing was changed. To go on: recompute the stages whose settings changed and the later "
            f"ones ({{parameter force}}, or {{parameter from_stage}} {found[0][0]}), or choose a new run directory",
            parameter="run_dir",
            names=("force", "from_stage"),
        )

    def _finished_before(self, from_stage: str, until: str | None) -> dict[str, dict[str, Any]]:
        """The records of the stages before ``from_stage``, which must all have finished (and
        ``from_stage`` must not come after ``until``)."""
        first = STAGES.index(from_stage)
        if until and first > STAGES.index(until):
            problem = f" comes after until {until}"
        else:
            found: dict[str, dict[str, Any]] = {}
            for stage in STAGES[:first]:
                record = self._checked(stage)[0]
                if record is None:
                    problem = f": the earlier stage {stage!r} has not finished or its inputs changed"
                    break
                found[stage] = record
            else:
                return found
        reason = f"{{from_stage}} {from_stage}{problem}; run without {{from_stage}}"
        raise ConfigError(reason, parameter="from_stage")

    def _invalidate_after(self, stage: str) -> None:
        """Before ``stage`` runs: its marker and every later stage's marker and outputs go."""
        for later in STAGES[STAGES.index(stage) :]:
            remove_record(self.run_dir, later)
            if later != stage:
                for rel in SPECS[later].outputs:
                    (self.run_dir / rel).unlink(missing_ok=True)

    def run(
        self, *, from_stage: str | None = None, until: str | None = None, force: bool = False
    ) -> PipelineResult:
        if from_stage is not None:
            from_stage = one_of(from_stage, STAGES, "stage", "from_stage")
        if until is not None:
            until = one_of(until, STAGES, "stage", "until")
        first_forced = STAGES.index(from_stage) if from_stage else len(STAGES)
        last = STAGES.index(until) if until else len(STAGES) - 1
        self._refuse_overwriting_inputs()
        _ = self.subtopics  # an unknown subtopic is refused before anything is written
        # another extend into this run at once waits, then finds the first's stages (and settings)
        with locked_folder(self.run_dir, parameter="run_dir"):
            return self._run(first_forced, from_stage, last, until, force)

    def _run(
        self, first_forced: int, from_stage: str | None, last: int, until: str | None, force: bool
    ) -> PipelineResult:
        if not force:
            self._refuse_other_settings(first_forced)
        finished = self._finished_before(from_stage, until) if from_stage else {}
        atomic_write_text(self.run_dir / "config.yaml", dump_config(self.config))
        reports: list[StageReport] = []
        status, message = "complete" if last == len(STAGES) - 1 else "stopped", ""
        started = datetime.now(UTC).isoformat(timespec="seconds")
        self._write_run_json(reports, "running", started)
        try:
            for stage in STAGES[: last + 1]:
                marker, damaged = (finished.get(stage), []) if from_stage else self._checked(stage)
                if marker is not None:
                    report = StageReport(
                        stage, "skipped", float(marker.get("seconds", 0.0)), marker.get("counts", {})
                    )
                else:
                    report = self._run_stage(stage, damaged)
                reports.append(report)
                if self.on_stage is not None:
                    self.on_stage(report)
                if report.status == "waiting":
                    status, message = "awaiting_judgements", report.message
                    break
        except BaseException:  # an error or an interrupt: run.json must not say complete
            status = "failed"
            raise
        finally:
            self._write_run_json(reports, status, started)
            if self._cache is not None:
                self._cache.close()
                self._cache = None
        return PipelineResult(self.run_dir, status, reports, message)

    def _refuse_overwriting_inputs(self) -> None:
        """Refuse, before anything is written, a run directory that is (or lies inside) the source
        folder, and an output (the cache too) that is a file the run reads."""
        written = [
            self.run_dir / rel for rel in (*_RUN_FILES, *(r for s in SPECS.values() for r in s.outputs))
        ]
        templates = self.config.templates
        inputs = {
            "source": self.source_dir,
            "templates": self.templates_path(),
            "templates.stopwords": templates.stopwords,
            "mlm.stopwords": self.config.mlm.stopwords,
            "judgements": self.judgements_path(),
        }
        refuse_writing_into("out_dir", self.run_dir, {"source": self.source_dir})
        refuse_overwrites({"out_dir": written, "cache": self.config.cache}, inputs)

    def _run_stage(self, stage: str, damaged: Sequence[str] = ()) -> StageReport:
        self._invalidate_after(stage)
        began = time.perf_counter()
        outcome = SPECS[stage].run(self)
        seconds = round(time.perf_counter() - began, 3)
        if isinstance(outcome, str):
            return StageReport(stage, "waiting", seconds, {}, outcome)
        # settings again: a hub model downloaded by the stage now resolves to its commit
        self._settings_memo.pop(stage, None)
        finish_stage(self.run_dir, self.stage(stage), SPECS[stage].outputs, counts=outcome, seconds=seconds)
        redone = f"recomputed: {'; '.join(damaged)}" if damaged else ""
        return StageReport(stage, "ran", seconds, outcome, redone)

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
    force: bool = False,
) -> PipelineResult:
    """Run (or resume) the extension pipeline described by ``config``."""
    return Pipeline(config, factories=factories, progress=progress, on_stage=on_stage).run(
        from_stage=from_stage, until=until, force=force
    )
