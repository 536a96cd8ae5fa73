"""What each stage of ``nlibias extend`` depends on: its settings (flat dotted keys, with the model
files' hashes and the resolved dtype) and its input files. Every setting of a stage's section is in
but :data:`SPEED_ONLY`, so a new option can never let two runs mix silently.

>>> model_files("fake:x", None) is None
True
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from nlibias.extension.config import MLMConfig
from nlibias.extension.masked_templates import default_stopwords_path, load_stopwords
from nlibias.extension.stages import StageContext
from nlibias.extension.validation_handoff import resolution_record
from nlibias.io.fingerprint import sha256_file
from nlibias.io.stages import fingerprint, model_identity
from nlibias.models.generative.sources import is_gguf_name
from nlibias.models.hf_common import checkpoint_dtype, dtype_choice
from nlibias.models.hub_reach import hub_file
from nlibias.models.mlm.causal_fill import split_fill_spec, stopwords_hash
from nlibias.schema.model_ref import ModelRef, without_options

__all__ = ["judgements_input", "model_files", "sha256_file", "stage_settings"]

#: Device settings that change how fast a model stage runs, never what it writes.
SPEED_ONLY = frozenset({"device", "threads", "max_tokens", "max_batch_size"})


def model_files(model: str, revision: str | None) -> str | None:
    """A model's identity as one string: a local directory's file hash, ``commit:<sha>`` for a hub id
    (None when unresolved, and for a fake)."""
    identity = model_identity(without_options(model), revision)
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
    model = without_options(model)  # "causal:./m?beam=8" names the directory ./m
    ref = ModelRef.unread(model)
    name = ref.name if ref.kind.isidentifier() and not Path(model).exists() else model
    if is_gguf_name(name):
        return "float32"  # a GGUF file (the embedded SmolLM2 is one) is dequantised on loading
    config: Path | None = Path(name).expanduser() / "config.json"
    if config is None or not config.is_file():  # a hub model: the cache, else one download
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


_SETTINGS: dict[str, Callable[[StageContext], dict[str, Any]]] = {
    "masks": _masks,
    "masked": _source,
    "fill": _fill,
    "filter": _filter,
    "validate": lambda p: {"validation.unvalidated": p.config.validation.unvalidated},
    "counterfactual": _source,
    # everything the card records, and its title
    "export": lambda p: {
        **{f"card.{k}": v for k, v in p.card_config().items()},
        "pretty_name": p.config.pretty_name,
    },
}


def stage_settings(p: StageContext, stage: str) -> dict[str, Any]:
    """What, besides its input files, determines a stage's outputs (flat dotted keys)."""
    return _SETTINGS[stage](p)


def judgements_input(p: StageContext) -> dict[str, str | None]:
    """The judgements file's content (not its path) and its resolution record, as inputs."""
    path = p.judgements_path()
    record = resolution_record(path)
    return {
        "judgements.sha256": sha256_file(path) if path.exists() else None,
        "resolution": None if record is None else fingerprint(record),
    }
