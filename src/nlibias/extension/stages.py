"""The seven stages of the extension pipeline, each a function of the run (:class:`StageContext`)
that reads its predecessor's files, writes its own and returns its counts (or a message to wait)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from nlibias.benchmarks.bbnli import BBNLISubtopic
from nlibias.errors import ConfigError, SourceError
from nlibias.extension.config import ExtendConfig, FilterConfig, FilterModelConfig, MLMConfig
from nlibias.extension.counterfactual import expand_counterfactuals
from nlibias.extension.dataset import export_dataset, local_model_names, renamed
from nlibias.extension.fill import fill_masked_samples
from nlibias.extension.fill_compare import compare_fills
from nlibias.extension.filtering import filter_candidates, misprediction_table, policy_counts
from nlibias.extension.masked_samples import MaskedSample, expand_masked_templates, masked_counts
from nlibias.extension.masked_templates import (
    MaskedTemplate,
    combine_templates,
    derive_masked_templates,
    load_masked_templates,
    load_stopwords,
    template_counts,
)
from nlibias.extension.validation_handoff import (
    QUEUE_CSV,
    Judgement,
    apply_judgements,
    disagreed_hypotheses,
    read_judgements,
    read_queue,
    resolution_record,
    write_validation_queue,
)
from nlibias.io.atomic import write_json, write_jsonl
from nlibias.io.jsonl import iter_jsonl, read_json_file
from nlibias.models.base import NLIClassifier
from nlibias.models.mlm.mask_filler import MaskFiller
from nlibias.models.mlm.model_names import loading_as
from nlibias.runtime.cache import PredictionCache
from nlibias.schema import Sample

T = TypeVar("T")


@dataclass(frozen=True)
class Factories:
    """How the pipeline builds its models (tests pass fakes)."""

    filler: Callable[[MLMConfig], MaskFiller]
    classifier: Callable[[FilterModelConfig, FilterConfig], NLIClassifier]


class StageContext(Protocol):
    """One run as its stages and fingerprints see it (:class:`~.pipeline.Pipeline` implements it);
    ``subtopics``: those the run extends, ``templates_path``: None for derived templates only."""

    config: ExtendConfig
    run_dir: Path
    factories: Factories
    progress: bool

    @property
    def all_subtopics(self) -> list[BBNLISubtopic]: ...

    @property
    def subtopics(self) -> list[BBNLISubtopic]: ...

    @property
    def cache(self) -> PredictionCache: ...

    def templates_path(self) -> Path | None: ...

    def judgements_path(self) -> Path: ...

    def card_config(self) -> dict[str, Any]: ...


def write_records(path: Path, records: Sequence[Any]) -> None:
    """Records with a ``to_dict()`` (samples, masked samples, templates) as JSONL, atomically."""
    write_jsonl(path, [r.to_dict() for r in records])


def read_records(path: Path, make: Callable[[dict[str, Any]], T]) -> list[T]:
    """The records of a stage file this pipeline wrote, each through ``make`` (checked for shape only)."""
    records = []
    for line, value in iter_jsonl(path):
        try:
            if not isinstance(value, dict):
                raise TypeError("expected a JSON object")
            records.append(make(value))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            reason = f"not a record of this stage ({exc})"
            fix = "the run directory was edited or damaged: rerun from that stage ({parameter from_stage})"
            raise SourceError(path, None, reason, line=line, fix=fix, names=("from_stage",)) from None
    return records


def run_masks(p: StageContext) -> dict[str, Any]:
    selected = {s.subtopic for s in p.subtopics}
    path = p.templates_path()
    curated = load_masked_templates(path, p.all_subtopics) if path is not None else []
    derived = []
    if p.config.templates.derive:
        stopwords = load_stopwords(p.config.templates.stopwords)
        for subtopic in p.subtopics:
            derived.extend(derive_masked_templates(subtopic, stopwords=stopwords))
    templates = [t for t in combine_templates(curated, derived) if t.subtopic in selected]
    if not templates:
        raise ConfigError(
            "no masked templates for the selected subtopics (set templates.curated to a file or templates.derive: true)",
            parameter="templates",
        )
    write_records(p.run_dir / "masks/templates.jsonl", templates)
    rows = template_counts(templates, p.subtopics)
    write_json(
        p.run_dir / "masks/counts.json", {"subtopics": rows, "templates_file": str(path) if path else None}
    )
    origins = Counter(t.origin for t in templates)
    return {"templates": len(templates), "curated": origins["curated"], "derived": origins["derived"]}


def run_masked(p: StageContext) -> dict[str, Any]:
    templates = read_records(p.run_dir / "masks/templates.jsonl", MaskedTemplate.from_dict)
    masked = expand_masked_templates(templates, p.subtopics)
    write_records(p.run_dir / "masked/samples.jsonl", masked)
    rows = masked_counts(masked, p.subtopics)
    write_json(p.run_dir / "masked/counts.json", {"subtopics": rows})
    return {"masked_samples": len(masked), "unique_masked_hypotheses": len({m.hypothesis for m in masked})}


def run_fill(p: StageContext) -> dict[str, Any]:
    masked = read_records(p.run_dir / "masked/samples.jsonl", MaskedSample.from_dict)
    with loading_as("fill_model", p.config.mlm.model):
        filler = p.factories.filler(p.config.mlm)
    run = fill_masked_samples(
        masked,
        filler,
        p.cache,
        top_k=p.config.mlm.top_k,
        block_list=p.config.mlm.block_list,
        progress=p.progress,
    )
    write_records(p.run_dir / "fill/candidates.jsonl", run.candidates)
    stats = {**run.stats(), "mlm": p.config.mlm.model, "top_k": p.config.mlm.top_k}
    write_json(p.run_dir / "fill/stats.json", stats)
    return run.stats()


def run_filter(p: StageContext) -> dict[str, Any]:
    candidates = read_records(p.run_dir / "fill/candidates.jsonl", Sample.from_dict)
    settings = p.config.filter
    classifiers = []
    for spec in settings.models:
        with loading_as("classifiers", spec.model):
            classifiers.append(p.factories.classifier(spec, settings))
    run = filter_candidates(
        candidates,
        classifiers,
        p.cache,
        policy=settings.policy,
        holdout=[m.key for m in settings.holdout] + [m.model for m in settings.holdout],
        progress=p.progress,
    )
    write_records(p.run_dir / "filter/candidates.jsonl", run.candidates)
    write_records(p.run_dir / "filter/kept.jsonl", run.kept)
    summary = {
        "models": run.models,
        "holdout": [m.key for m in settings.holdout],
        "policy": run.policy.describe(),
        "candidates": len(run.candidates),
        "kept": len(run.kept),
        "mispredicted": misprediction_table(run.candidates, run.models),
        "policy_counts": policy_counts(run.candidates, len(run.models)),
        "model_stats": run.model_stats,
    }
    write_json(p.run_dir / "filter/summary.json", summary)
    write_json(p.run_dir / "filter/fill_compare.json", compare_run_fills(p, classifiers))
    return {"candidates": len(run.candidates), "kept": len(run.kept), "policy": run.policy.describe()}


def compare_run_fills(p: StageContext, classifiers: Sequence[NLIClassifier]) -> dict[str, Any]:
    """The run's fill and each of ``filter.compare_fills`` compared on its masked samples (the first
    filter model judges); ``{"rows": []}`` without any."""
    others = p.config.filter.compare_fills
    if not others:
        return {"rows": []}
    masked = read_records(p.run_dir / "masked/samples.jsonl", MaskedSample.from_dict)
    mlm = p.config.mlm
    fillers = {mlm.model: p.factories.filler(mlm)}
    for spec in others:
        with loading_as("compare_fill", spec):
            fillers.setdefault(spec, p.factories.filler(mlm.model_copy(update={"model": spec})))
    rows = compare_fills(
        masked,
        fillers,
        p.subtopics,
        judge=classifiers[0],
        filters=classifiers,
        cache=p.cache,
        top_k=mlm.top_k,
        block_list=mlm.block_list,
        policy=p.config.filter.policy,
        progress=p.progress,
    )
    return {
        "rows": rows,
        "judge": classifiers[0].name,
        "filters": [c.name for c in classifiers],
        "top_k": mlm.top_k,
        "masked_samples": len(masked),
    }


def load_judgements(p: StageContext) -> dict[str, Judgement] | None:
    """The run's judgements (validated against its queue), or None when there is no judgements file."""
    path = p.judgements_path()
    if not path.exists():
        return None
    return read_judgements(path, read_queue(p.run_dir / QUEUE_CSV))


def run_validate(p: StageContext) -> dict[str, Any] | str:
    kept = read_records(p.run_dir / "filter/kept.jsonl", Sample.from_dict)
    queue = write_validation_queue(p.run_dir, kept)
    judgements = load_judgements(p)
    if judgements is None and not p.config.validation.unvalidated:
        hypotheses = len({(s.subtopic, s.hypothesis) for s in kept})
        return (
            f"{hypotheses} generated hypotheses await judgement in {queue}. Copy it to "
            f"{p.judgements_path()}, fill the judgement (valid/invalid/incoherent) and stereotype "
            "(pro/anti for valid ones) columns, and rerun the same command; or rerun with --unvalidated."
        )
    dropped = disagreed_hypotheses(p.judgements_path()) if judgements is not None else frozenset()
    result = apply_judgements(kept, judgements, dropped=dropped)
    write_records(p.run_dir / "validation/accepted.jsonl", result.accepted)
    summary = {
        **result.summary,
        "judgements_file": str(p.judgements_path()) if judgements is not None else None,
        "resolution": resolution_record(p.judgements_path()) if judgements is not None else None,
    }
    write_json(p.run_dir / "validation/summary.json", summary)
    categories = result.summary["categories"]
    return {
        "status": result.summary["status"],
        "queued_hypotheses": len({(s.subtopic, s.hypothesis) for s in kept}),
        "unjudged_hypotheses": categories.get("unjudged", {}).get("hypotheses", 0),
        "dropped_hypotheses": categories.get("dropped", {}).get("hypotheses", 0),
        "accepted_samples": len(result.accepted),
    }


def run_counterfactual(p: StageContext) -> dict[str, Any]:
    accepted = read_records(p.run_dir / "validation/accepted.jsonl", Sample.from_dict)
    candidates = read_records(p.run_dir / "filter/candidates.jsonl", Sample.from_dict)
    validated = read_json_file(p.run_dir / "validation/summary.json").get("status") == "validated"
    result = expand_counterfactuals(
        accepted,
        {s.subtopic: s for s in p.all_subtopics},
        candidates=candidates,
        judgements=load_judgements(p) if validated else None,
    )
    write_records(p.run_dir / "counterfactual/samples.jsonl", result.samples)
    write_json(p.run_dir / "counterfactual/stats.json", result.stats)
    return dict(result.stats)


def run_export(p: StageContext) -> dict[str, Any]:
    def load(rel: str) -> Any:
        return read_json_file(p.run_dir / rel)

    samples = read_records(p.run_dir / "counterfactual/samples.jsonl", Sample.from_dict)
    filter_summary = load("filter/summary.json")
    info = {
        "pretty_name": p.config.pretty_name,
        "config": p.card_config(),
        "fill": load("fill/stats.json"),
        "filter": filter_summary,
        "validation": load("validation/summary.json"),
        "fill_comparison": load("filter/fill_compare.json"),
        "counterfactual": load("counterfactual/stats.json"),
        "tables": {
            "templates": load("masks/counts.json")["subtopics"],
            "masked": load("masked/counts.json")["subtopics"],
            "mispredicted": filter_summary["mispredicted"],
            "policy_counts": filter_summary["policy_counts"],
        },
    }
    # a model given as a local path is published by its folder's name (the path stays in run.json)
    config = p.config
    models = (*config.filter.models, *config.filter.holdout)  # a key is the model or a name given to it
    names = local_model_names([config.mlm.model, *config.filter.compare_fills, *(m.model for m in models)])
    if names:
        samples = [replace(s, provenance=renamed(s.provenance, names)) for s in samples]
        info = renamed(info, names)
    completed = export_dataset(p.run_dir / "dataset", samples, info)
    return {
        "samples": len(samples),
        "pairs": len({s.pair_key for s in samples}),
        "files": completed["files"]["rows"],
    }
