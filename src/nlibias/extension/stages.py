"""The seven stages of the extension pipeline (:data:`SPECS`), each a function of the run
(:class:`~.pipeline.Pipeline`) that reads its predecessor's files, writes its own and returns its
counts (or a message to wait), with the files it reads and writes and what else it depends on (flat
dotted keys, with the model files' hashes and the resolved dtype). Every setting of a stage's
section is in but :data:`SPEED_ONLY`, so a new option can never let two runs mix silently.

>>> model_files("fake:x", None) is None
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from nlibias.errors import ConfigError, SourceError
from nlibias.extension.config import FilterConfig, FilterModelConfig, MLMConfig
from nlibias.extension.counterfactual import expand_counterfactuals
from nlibias.extension.dataset import DATA_FILES, export_dataset, local_model_names, renamed
from nlibias.extension.fill import compare_fills, fill_masked_samples
from nlibias.extension.filtering import filter_candidates, misprediction_table, policy_counts
from nlibias.extension.masked_templates import (
    MaskedSample,
    MaskedTemplate,
    combine_templates,
    default_stopwords_path,
    derive_masked_templates,
    expand_masked_templates,
    load_masked_templates,
    load_stopwords,
    masked_counts,
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
from nlibias.io.fingerprint import sha256_file
from nlibias.io.jsonl import iter_jsonl, read_json_file
from nlibias.io.stages import fingerprint, model_identity
from nlibias.models.base import NLIClassifier
from nlibias.models.hf_common import checkpoint_dtype, dtype_choice
from nlibias.models.hub_reach import hub_file
from nlibias.models.mlm.causal_fill import stopwords_hash
from nlibias.models.mlm.mask_filler import MaskFiller
from nlibias.models.mlm.model_names import loading_as
from nlibias.schema import Sample
from nlibias.schema.model_ref import ModelRef, model_config, split_fill_spec

if TYPE_CHECKING:
    from nlibias.extension.pipeline import Pipeline

T = TypeVar("T")


@dataclass(frozen=True)
class Factories:
    """How the pipeline builds its models (tests pass fakes)."""

    filler: Callable[[MLMConfig], MaskFiller]
    classifier: Callable[[FilterModelConfig, FilterConfig], NLIClassifier]


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


def run_masks(p: Pipeline) -> dict[str, Any]:
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


def run_masked(p: Pipeline) -> dict[str, Any]:
    templates = read_records(p.run_dir / "masks/templates.jsonl", MaskedTemplate.from_dict)
    masked = expand_masked_templates(templates, p.subtopics)
    write_records(p.run_dir / "masked/samples.jsonl", masked)
    rows = masked_counts(masked, p.subtopics)
    write_json(p.run_dir / "masked/counts.json", {"subtopics": rows})
    return {"masked_samples": len(masked), "unique_masked_hypotheses": len({m.hypothesis for m in masked})}


def run_fill(p: Pipeline) -> dict[str, Any]:
    masked = read_records(p.run_dir / "masked/samples.jsonl", MaskedSample.from_dict)
    mlm = p.config.mlm
    with loading_as("fill_model", mlm.model):
        filler = p.factories.filler(mlm)
    run = fill_masked_samples(
        masked, filler, p.cache, top_k=mlm.top_k, block_list=mlm.block_list, progress=p.progress
    )
    write_records(p.run_dir / "fill/candidates.jsonl", run.candidates)
    write_json(p.run_dir / "fill/stats.json", {**run.stats(), "mlm": mlm.model, "top_k": mlm.top_k})
    return run.stats()


def run_filter(p: Pipeline) -> dict[str, Any]:
    candidates = read_records(p.run_dir / "fill/candidates.jsonl", Sample.from_dict)
    settings = p.config.filter
    classifiers = []
    for spec in settings.models:
        with loading_as("classifiers", spec.model):
            classifiers.append(p.factories.classifier(spec, settings))
    holdout = [m.key for m in settings.holdout] + [m.model for m in settings.holdout]
    run = filter_candidates(
        candidates, classifiers, p.cache, policy=settings.policy, holdout=holdout, progress=p.progress
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


def compare_run_fills(p: Pipeline, classifiers: Sequence[NLIClassifier]) -> dict[str, Any]:
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


def load_judgements(p: Pipeline) -> dict[str, Judgement] | None:
    """The run's judgements (validated against its queue), or None when there is no judgements file."""
    path = p.judgements_path()
    if not path.exists():
        return None
    return read_judgements(path, read_queue(p.run_dir / QUEUE_CSV))


def run_validate(p: Pipeline) -> dict[str, Any] | str:
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


def run_counterfactual(p: Pipeline) -> dict[str, Any]:
    accepted = read_records(p.run_dir / "validation/accepted.jsonl", Sample.from_dict)
    candidates = read_records(p.run_dir / "filter/candidates.jsonl", Sample.from_dict)
    validated = read_json_file(p.run_dir / "validation/summary.json").get("status") == "validated"
    judgements = load_judgements(p) if validated else None
    by_id = {s.subtopic: s for s in p.all_subtopics}
    result = expand_counterfactuals(accepted, by_id, candidates=candidates, judgements=judgements)
    write_records(p.run_dir / "counterfactual/samples.jsonl", result.samples)
    write_json(p.run_dir / "counterfactual/stats.json", result.stats)
    return dict(result.stats)


def run_export(p: Pipeline) -> dict[str, Any]:
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


#: Device settings that change how fast a model stage runs, never what it writes.
SPEED_ONLY = frozenset({"device", "threads", "max_tokens", "max_batch_size"})


def model_files(model: str, revision: str | None) -> str | None:
    """A model's identity as one string: a local directory's file hash, ``commit:<sha>`` for a hub id
    (None when unresolved, and for a fake)."""
    identity = model_identity(ModelRef.named(model).base, revision)
    if identity["files_sha256"] is not None:
        return str(identity["files_sha256"])
    return f"commit:{identity['revision']}" if identity["revision"] is not None else None


def resolved_dtype(device: str | None, dtype: str | None, models: list[str]) -> str | None:
    """The dtype the models' weights will have: ``dtype`` when given, else each checkpoint's own
    (float32 for GGUF; ``"auto"`` when its config cannot be found); fakes have none.

    >>> resolved_dtype(None, "bf16", ["x"]), resolved_dtype(None, None, ["fake:a"])
    ('bfloat16', None)
    """
    if all(ModelRef.unread(m).is_fake for m in models):
        return dtype
    chosen = dtype_choice(dtype)
    if chosen is not None:
        return chosen
    found = [_checkpoint_dtype(m) for m in models if not ModelRef.unread(m).is_fake]
    return ",".join(dict.fromkeys(found))


def _checkpoint_dtype(model: str) -> str:
    """The dtype ``model``'s config records (local directory or hub cache); ``"auto"`` when at neither."""
    ref = ModelRef.named(model)  # "causal:./m?beam=8" names the directory ./m
    model = ref.base
    name = ref.name if ref.kind.isidentifier() and not Path(model).exists() else model
    if ModelRef("", name).is_gguf:
        return "float32"  # a GGUF file (the embedded SmolLM2 is one) is dequantised on loading
    config: Path | None = Path(name).expanduser() / "config.json"
    if config is None or not config.is_file():  # a hub model: the cache, else one download
        cached = hub_file(name, "config.json")
        config = Path(cached) if cached is not None else None
    if config is None:
        return "auto"
    loaded = model_config(config)
    return "auto" if loaded is None else checkpoint_dtype(loaded)


def _section(name: str, values: Mapping[str, Any]) -> dict[str, Any]:
    return {f"{name}.{key}": value for key, value in values.items() if key not in SPEED_ONLY}


def _source(p: Pipeline) -> dict[str, Any]:
    return {
        "subtopics": sorted(s.subtopic for s in p.subtopics),
        "source": {Path(s.path).name: sha256_file(Path(s.path)) for s in p.subtopics},
    }


def _masks(p: Pipeline) -> dict[str, Any]:
    templates = p.config.templates
    path = p.templates_path()
    stopwords = Path(templates.stopwords) if templates.stopwords else default_stopwords_path()
    return {
        **_section("templates", templates.model_dump()),
        "templates.sha256": sha256_file(path) if path is not None and path.exists() else None,
        "templates.stopwords_sha256": sha256_file(stopwords) if templates.derive else None,
        **_source(p),
    }


def fill_stopwords_hash(mlm: MLMConfig) -> str | None:
    """The content hash of the stop words a causal fill skips (``None`` for another fill)."""
    if split_fill_spec(mlm.model)[0] != "causal":
        return None
    return stopwords_hash(load_stopwords(mlm.stopwords))


def _fill(p: Pipeline) -> dict[str, Any]:
    mlm = p.config.mlm
    return {
        **_section("mlm", mlm.model_dump()),
        "mlm.stopwords_sha256": fill_stopwords_hash(mlm),
        "mlm.block_list": sorted({w.lower() for w in mlm.block_list}),
        "mlm.dtype": resolved_dtype(mlm.device, mlm.dtype, [mlm.model]),
        "mlm.files": model_files(mlm.model, mlm.revision),
    }


def _filter(p: Pipeline) -> dict[str, Any]:
    settings = p.config.filter
    dumped = settings.model_dump()
    return {
        **_section("filter", dumped),
        "filter.models": [{**m, "files": model_files(m["model"], m["revision"])} for m in dumped["models"]],
        "filter.compare_files": [model_files(m, p.config.mlm.revision) for m in settings.compare_fills],
        "filter.policy": settings.policy_text,
        "filter.dtype": resolved_dtype(settings.device, settings.dtype, [m.model for m in settings.models]),
    }


@dataclass(frozen=True)
class StageSpec:
    """One stage as the pipeline runs it."""

    run: Callable[[Pipeline], dict[str, Any] | str]
    """Reads its inputs, writes its outputs; returns its counts, or why it waits."""
    settings: Callable[[Pipeline], dict[str, Any]]
    """What, besides its input files, determines its outputs (flat dotted keys)."""
    outputs: tuple[str, ...]
    """What it writes, relative to the run (the first marks it written)."""
    inputs: tuple[str, ...] = ()
    """The earlier stages' files it reads (their hashes are inputs)."""
    judged: bool = False
    """It reads the judgements file (its content and resolution record are inputs)."""


_DATASET = ("README.md", "samples.jsonl", "samples.parquet", *DATA_FILES.values())
SPECS: dict[str, StageSpec] = {
    "masks": StageSpec(run_masks, _masks, ("masks/templates.jsonl", "masks/counts.json")),
    "masked": StageSpec(
        run_masked, _source, ("masked/samples.jsonl", "masked/counts.json"), ("masks/templates.jsonl",)
    ),
    "fill": StageSpec(
        run_fill, _fill, ("fill/candidates.jsonl", "fill/stats.json"), ("masked/samples.jsonl",)
    ),
    "filter": StageSpec(
        run_filter,
        _filter,
        ("filter/candidates.jsonl", "filter/kept.jsonl", "filter/summary.json", "filter/fill_compare.json"),
        ("fill/candidates.jsonl", "masked/samples.jsonl"),
    ),
    "validate": StageSpec(
        run_validate,
        lambda p: {"validation.unvalidated": p.config.validation.unvalidated},
        ("validation/queue.csv", "validation/accepted.jsonl", "validation/summary.json"),
        ("filter/kept.jsonl",),
        judged=True,
    ),
    "counterfactual": StageSpec(
        run_counterfactual,
        _source,
        ("counterfactual/samples.jsonl", "counterfactual/stats.json"),
        ("validation/accepted.jsonl", "validation/summary.json", "filter/candidates.jsonl"),
        judged=True,
    ),
    "export": StageSpec(
        run_export,
        # everything the card records, and its title
        lambda p: {
            **{f"card.{k}": v for k, v in p.card_config().items()},
            "pretty_name": p.config.pretty_name,
        },
        tuple(f"dataset/{rel}" for rel in _DATASET),
        (
            "counterfactual/samples.jsonl",
            "counterfactual/stats.json",
            "masks/counts.json",
            "masked/counts.json",
            "fill/stats.json",
            "filter/summary.json",
            "filter/fill_compare.json",
            "validation/summary.json",
        ),
    ),
}
"""The stages in the order they run."""


def judgements_input(p: Pipeline) -> dict[str, str | None]:
    """The judgements file's content (not its path) and its resolution record, as inputs."""
    path = p.judgements_path()
    record = resolution_record(path)
    return {
        "judgements.sha256": sha256_file(path) if path.exists() else None,
        "resolution": None if record is None else fingerprint(record),
    }
