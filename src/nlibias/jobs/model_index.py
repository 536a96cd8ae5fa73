"""A run's overall numbers as the ``model-index`` metadata of a Hugging Face model card.

Per model of the run: the task (NLI as text classification for a classifier, text generation for
a generative LM, fill-mask for a sentence scorer), the dataset (the benchmark; its ``type``
``nlibias/<source>``, its ``revision`` the SHA-256 of the samples file the run recorded), each
headline measure and accuracy with name, type and value, and ``verified: false`` (the numbers
come from the user's own run). Built with ``huggingface_hub``'s model-card classes, so a card
they write is one the Hub reads; :func:`update_card` rewrites only the metadata block of an
existing ``README.md``.

>>> entries = model_index("runs/audit")  # doctest: +SKIP
>>> entries[0]["results"][0]["metrics"][0]["type"]  # doctest: +SKIP
'bbnli_bias_score'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nlibias.errors import ConfigError, DataError, SourceError

if TYPE_CHECKING:
    from huggingface_hub import EvalResult

TASKS = {
    "classifier": ("text-classification", "Natural Language Inference"),
    "generative": ("text-generation", "Natural Language Inference (yes/no questions)"),
    "sentence-logprob": ("fill-mask", "Stereotype preference (sentence likelihood)"),
}
"""Predictor kind → (task type, task name) of the model index."""


def _samples_sha256(run: Path) -> str | None:
    manifest = run / "manifest.json"
    if not manifest.is_file():
        return None
    inputs = json.loads(manifest.read_text(encoding="utf-8")).get("inputs") or {}
    digest = (inputs.get("samples") or {}).get("sha256")
    return digest if isinstance(digest, str) else None


def _eval_results(metrics: Mapping[str, Any], key: str, revision: str | None) -> list[EvalResult]:
    """One :class:`huggingface_hub.EvalResult` per headline measure and accuracy of model ``key``."""
    from huggingface_hub import EvalResult

    from nlibias.metrics.meta import ALL_MEASURES
    from nlibias.metrics.verdicts import headline_infos

    overall = (metrics["models"][key] or {}).get("overall") or {}
    kind = str((metrics.get("predictor_kinds") or {}).get(key, "classifier"))
    task_type, task_name = TASKS.get(kind, ("text-classification", kind))
    source = str(metrics.get("source"))
    infos = headline_infos(overall)
    if isinstance(overall.get("accuracy"), int | float) and "accuracy" in ALL_MEASURES:
        infos.append(ALL_MEASURES["accuracy"])
    results = []
    for info in infos:
        value = overall.get(info.name)
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue  # undefined (None) on this run: nothing to report
        name = (
            info.display_name if info.neutral is None else f"{info.display_name} ({info.neutral:g} = no bias)"
        )
        results.append(
            EvalResult(
                task_type=task_type,
                task_name=task_name,
                dataset_type=f"nlibias/{source}",
                dataset_name=f"{source} (nlibias)",
                dataset_revision=revision,
                metric_type=info.name,
                metric_name=name,
                metric_value=float(value),
                verified=False,
            )
        )
    return results


def _model_name(metrics: Mapping[str, Any], key: str) -> str:
    """The model's recorded name (its key where the run holds several keys of that model, e.g. a
    generative LM asked with two prompts)."""
    runs = (metrics.get("run") or {}).get("models") or {}
    recorded = (runs.get(key) or {}).get("model")
    if not isinstance(recorded, str) or not recorded:
        return key
    shared = sum(
        1 for other in runs.values() if isinstance(other, Mapping) and other.get("model") == recorded
    )
    return recorded if shared == 1 else key


def _read(run: str | Path) -> tuple[Path, Mapping[str, Any]]:
    from nlibias.jobs.results import load_run

    path = Path(run)
    return path, load_run(path).metrics


def model_index(run: str | Path, *, model: str | None = None) -> list[dict[str, Any]]:
    """The ``model-index`` list of a run: one entry per model (``model``: only that one), as
    :func:`huggingface_hub.repocard_data.eval_results_to_model_index` writes it."""
    from huggingface_hub.repocard_data import eval_results_to_model_index

    path, metrics = _read(run)
    keys = _keys(path, metrics, model)
    revision = _samples_sha256(path)
    entries: list[dict[str, Any]] = []
    for key in keys:
        results = _eval_results(metrics, key, revision)
        if results:
            entries += eval_results_to_model_index(_model_name(metrics, key), results)
    if not entries:
        raise DataError(f"{path}: no model reports a headline measure or accuracy", field="models")
    return entries


def _keys(path: Path, metrics: Mapping[str, Any], model: str | None) -> list[str]:
    keys = list(metrics.get("models") or {})
    if model is None:
        return keys
    if model not in keys:
        raise ConfigError(f"model {model!r} is not in {path} ({', '.join(keys)})", parameter="model")
    return [model]


def model_index_yaml(run: str | Path, *, model: str | None = None) -> str:
    """``model-index:`` as YAML (the metadata block's content)."""
    import yaml

    return yaml.safe_dump({"model-index": model_index(run, model=model)}, sort_keys=False, allow_unicode=True)


def update_card(run: str | Path, card: str | Path, *, model: str | None = None) -> Path:
    """Write the run's ``model-index`` into the metadata block of the model card at ``card``,
    keeping the rest of its metadata and its text (a card without a block gets one). A card
    describes one model: a run of several needs ``model``."""
    from huggingface_hub import ModelCard, ModelCardData

    from nlibias.io.atomic import atomic_write_text

    path, metrics = _read(run)
    keys = _keys(path, metrics, model)
    if len(keys) != 1:
        raise ConfigError(
            f"{path} holds models {', '.join(keys)}; a model card describes one: pass model",
            parameter="model",
        )
    card_path = Path(card)
    if not card_path.is_file():
        raise SourceError(card_path, None, "no model card here", fix="pass an existing README.md")
    loaded = ModelCard(card_path.read_text(encoding="utf-8"), ignore_metadata_errors=True)
    results = _eval_results(metrics, keys[0], _samples_sha256(path))
    if not results:
        raise DataError(f"{path}: model {keys[0]!r} reports no headline measure or accuracy", model=keys[0])
    data = loaded.data
    if not isinstance(data, ModelCardData):  # ModelCard always reads ModelCardData
        raise SourceError(card_path, None, "not a model card")
    data.model_name = _model_name(metrics, keys[0])
    data.eval_results = results
    atomic_write_text(card_path, str(loaded))
    return card_path
