"""What each stage of ``nlibias extend`` depends on, and how a rerun compares it with the run directory.

A stage's outputs are a function of

* its **settings**: the parts of the configuration that change what it writes (flat dotted keys,
  e.g. ``mlm.top_k``, so a refusal can name them), with the model files' hashes and the weights'
  dtype as it will be resolved (a GPU's default dtype is not the CPU's);
* its **inputs**: the files of earlier stages it reads, and the judgements file.

Settings that change only how fast a stage runs (:data:`SPEED_ONLY`) are left out, as the
prediction cache leaves them out of its keys. Every other setting of a stage's config section is
in, including ones added later, so a new option can never let two runs mix silently (add it to
:data:`SPEED_ONLY` only if it cannot change an output).

A rerun whose settings differ from those a finished stage recorded is refused
(:func:`nlibias.extension.pipeline.Pipeline.run`, with :func:`nlibias.io.stages.changes`);
inputs that differ (an earlier stage was rerun) make the stage run again.

>>> model_files("fake:x", None) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nlibias.extension.config import MLMConfig
from nlibias.extension.context import StageContext
from nlibias.io.fingerprint import sha256_file
from nlibias.io.stages import fingerprint, model_identity
from nlibias.schema.model_ref import ModelRef, without_options

__all__ = ["judgements_input", "model_files", "sha256_file", "stage_settings"]

#: Device settings that change how fast a model stage runs, never what it writes.
SPEED_ONLY = frozenset({"device", "threads", "max_tokens", "max_batch_size"})


def _is_fake(model: str) -> bool:
    return ModelRef.unread(model).is_fake


def model_files(model: str, revision: str | None) -> str | None:
    """:func:`nlibias.io.stages.model_identity` as one string: the file hash of a local model
    directory (also behind ``causal:`` and the like), ``commit:<sha>`` for a hub id (None when it
    cannot be resolved, and for a fake). Options after ``?`` are not part of the files' name
    (``causal:./m?beam=8`` names the directory ``./m``), so changed weights redo the fills."""
    identity = model_identity(without_options(model), revision)
    if identity["files_sha256"] is not None:
        return str(identity["files_sha256"])
    return f"commit:{identity['revision']}" if identity["revision"] is not None else None


def resolved_dtype(device: str | None, dtype: str | None, models: list[str]) -> str | None:
    """The dtype the models' weights will have: ``dtype`` when given; under auto each checkpoint's
    own (its config.json, local or in the Hugging Face cache; float32 for a GGUF file or when it
    records none), joined with commas when the models differ; ``"auto"`` for a model whose config
    can be neither found nor fetched (its load then fails and says why). Fakes have none.

    >>> resolved_dtype(None, "bf16", ["x"]), resolved_dtype(None, None, ["fake:a"])
    ('bfloat16', None)
    """
    if all(_is_fake(m) for m in models):
        return dtype
    from nlibias.models.hf_common import dtype_choice

    chosen = dtype_choice(dtype)
    if chosen is not None:
        return chosen
    found = [_checkpoint_dtype(m) for m in models if not _is_fake(m)]
    return ",".join(dict.fromkeys(found))


def _checkpoint_dtype(model: str) -> str:
    """The dtype ``model``'s configuration records (hf_common.checkpoint_dtype), read from a local
    directory or the Hugging Face cache without a download; ``"auto"`` when it is at neither."""
    import json

    from nlibias.models.hf_common import checkpoint_dtype

    model = without_options(model)  # "causal:./m?beam=8" names the directory ./m
    ref = ModelRef.unread(model)
    name = ref.name if ref.kind.isidentifier() and not Path(model).exists() else model
    from nlibias.models.generative.sources import is_gguf_name

    if is_gguf_name(name):
        return "float32"  # a GGUF file (the embedded SmolLM2 is one) is dequantised on loading
    config: Path | None = Path(name).expanduser() / "config.json"
    if config is None or not config.is_file():
        from nlibias.models.hub_reach import hub_file

        # as the model identity beside it reads a hub model: the cache, else one download
        cached = hub_file(name, "config.json")
        config = Path(cached) if cached is not None else None
    if config is None:
        return "auto"
    try:
        return checkpoint_dtype(json.loads(config.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return "auto"


def _section(name: str, values: Mapping[str, Any]) -> dict[str, Any]:
    return {f"{name}.{key}": value for key, value in values.items() if key not in SPEED_ONLY}


def _source(p: StageContext) -> dict[str, Any]:
    return {
        "subtopics": sorted(s.subtopic for s in p.subtopics),
        "source": {Path(s.path).name: sha256_file(Path(s.path)) for s in p.subtopics},
    }


def _masks(p: StageContext) -> dict[str, Any]:
    from nlibias.extension.masked_templates import default_stopwords_path

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
    """The content hash of the stop words a causal fill skips (``None`` for another fill, which
    reads none): a rerun with another list must not reuse the fills made with this one."""
    from nlibias.extension.masked_templates import load_stopwords
    from nlibias.models.mlm.causal_fill import split_fill_spec, stopwords_hash

    if split_fill_spec(mlm.model)[0] != "causal":
        return None
    return stopwords_hash(load_stopwords(mlm.stopwords))


def _fill(p: StageContext) -> dict[str, Any]:
    mlm = p.config.mlm
    return {
        **_section("mlm", mlm.model_dump()),
        "mlm.stopwords_sha256": fill_stopwords_hash(mlm),
        "mlm.block_list": sorted({w.lower() for w in mlm.block_list}),
        "mlm.dtype": resolved_dtype(mlm.device, mlm.dtype, [mlm.model]),
        "mlm.files": model_files(mlm.model, mlm.revision),
    }


def _filter(p: StageContext) -> dict[str, Any]:
    settings = p.config.filter
    dumped = settings.model_dump()
    return {
        **_section("filter", dumped),
        "filter.models": [{**m, "files": model_files(m["model"], m["revision"])} for m in dumped["models"]],
        "filter.compare_files": [model_files(m, p.config.mlm.revision) for m in settings.compare_fills],
        "filter.policy": settings.policy_text,
        "filter.dtype": resolved_dtype(settings.device, settings.dtype, [m.model for m in settings.models]),
    }


def stage_settings(p: StageContext, stage: str) -> dict[str, Any]:
    """What, besides its input files, determines a stage's outputs (flat dotted keys)."""
    if stage == "masks":
        return _masks(p)
    if stage in ("masked", "counterfactual"):
        return _source(p)
    if stage == "fill":
        return _fill(p)
    if stage == "filter":
        return _filter(p)
    if stage == "validate":
        return {"validation.unvalidated": p.config.validation.unvalidated}
    # export: everything the card records, and its title
    return {
        **{f"card.{key}": value for key, value in p.card_config().items()},
        "pretty_name": p.config.pretty_name,
    }


def judgements_input(p: StageContext) -> dict[str, str | None]:
    """The judgements file as an input: a changed file reruns the stages that read it. Its
    content only, not its path, so one file named relatively or absolutely is one input."""
    from nlibias.extension.validation_handoff import resolution_record

    path = p.judgements_path()
    record = resolution_record(path)  # who judged and how far they agreed: on the card
    return {
        "judgements.sha256": sha256_file(path) if path.exists() else None,
        "resolution": None if record is None else fingerprint(record),
    }
