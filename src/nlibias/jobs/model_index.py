"""A run's overall numbers as the ``model-index`` metadata of a Hugging Face model card.

Per model of the run: the task (NLI as text classification for a classifier, text generation for
a generative LM, fill-mask for a sentence scorer), the dataset (the benchmark; its ``type``
``nlibias/<source>``, its ``revision`` the SHA-256 of the samples file the run recorded), each
headline measure and accuracy with name, type and value, and ``verified: false`` (the numbers
come from the user's own run). Built with ``huggingface_hub``'s model-card classes, so a card
they write is one the Hub reads; :func:`update_card` rewrites only the metadata block of an
existing ``README.md``, keeping its results of other datasets. A run over a ``limit`` subset, or
one a scoring found predictions for only part of, says so in the dataset's name and ``args``.

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


def _multiple_choice(source: str) -> bool:
    """Whether the samples of ``source`` are multiple-choice questions (their benchmark asks with
    multiple-choice prompt styles)."""
    from nlibias.catalog.registry import benchmark_for_source
    from nlibias.errors import NlibiasError

    try:
        return bool(benchmark_for_source(source).prompt_styles)
    except NlibiasError:  # a plug-in's source not registered here: read as its kind says
        return False


def _samples_sha256(run: Path) -> str | None:
    manifest = run / "manifest.json"
    if not manifest.is_file():
        return None
    inputs = json.loads(manifest.read_text(encoding="utf-8")).get("inputs") or {}
    digest = (inputs.get("samples") or {}).get("sha256")
    return digest if isinstance(digest, str) else None


def _coverage(metrics: Mapping[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """What the dataset name adds, and the dataset ``args``, where the run's values are not over
    the whole samples file: a ``limit`` subset, or samples a scoring found no prediction for (the
    revision alone, a file's SHA-256, says neither to a reader of the card).

    >>> _coverage({"subset": {"limit": 40, "seed": 0, "samples": 40, "of": 3134}})
    ('; a subset: 40 of 3,134 samples', {'subset_samples': 40, 'samples_in_set': 3134, 'limit': 40, 'seed': 0})
    >>> _coverage({"run": {"samples_scored": 150, "samples_given": 3134}})
    ('; 150 of 3,134 samples scored', {'samples_scored': 150, 'samples_given': 3134})
    >>> _coverage({})
    ('', None)
    """
    from nlibias.report.verdict_block import scored_of, subset_of

    subset = subset_of(metrics)
    if subset is not None:
        args = {"subset_samples": subset["samples"], "samples_in_set": subset["of"]}
        args |= {k: subset[k] for k in ("limit", "seed") if subset.get(k) is not None}
        return f"; a subset: {subset['samples']:,} of {subset['of']:,} samples", args
    if (found := scored_of(metrics)) is not None:
        scored, given = found
        return f"; {scored:,} of {given:,} samples scored", {"samples_scored": scored, "samples_given": given}
    return "", None


def _eval_results(metrics: Mapping[str, Any], key: str, revision: str | None) -> list[EvalResult]:
    """One :class:`huggingface_hub.EvalResult` per headline measure and accuracy of model ``key``."""
    from huggingface_hub import EvalResult

    from nlibias.metrics.meta import ALL_MEASURES
    from nlibias.metrics.verdicts import headline_infos
    from nlibias.schema.model_keys import split_model_key

    overall = (metrics["models"][key] or {}).get("overall") or {}
    generative = split_model_key(key)
    # a run written before predictor_kinds: a generative LM's key says what it is
    recorded = (metrics.get("predictor_kinds") or {}).get(key)
    kind = str(recorded or ("generative" if generative is not None else "classifier"))
    task_type, task_name = TASKS.get(kind, ("text-classification", kind))
    source = str(metrics.get("source"))
    if kind == "generative" and _multiple_choice(source):  # BBQ: answers to options, not yes/no
        task_name = "Question answering (multiple choice)"
    if generative is not None:  # the prompt and mode are in the key, not in the model's name
        task_name = f"{task_name}, prompt {generative[1]}, {generative[2]} answers"
    coverage, dataset_args = _coverage(metrics)
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
        if info.name == "accuracy":  # read on a card as NLI accuracy otherwise
            name = "Accuracy on the bias-audit samples (gold neutral)"
        results.append(
            EvalResult(
                task_type=task_type,
                task_name=task_name,
                dataset_type=f"nlibias/{source}",
                dataset_name=f"{source} (nlibias{coverage})",
                dataset_revision=revision,
                dataset_args=dataset_args,
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
    revision = _samples_sha256(path)
    entries: list[dict[str, Any]] = []
    for key in _keys(path, metrics, model):
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
    """``model-index:`` as YAML (the metadata block's content) of one model: of the run's only
    one, or of ``model``. The Hub reads one model name per card, so with several every result was
    read as the last model's."""
    import yaml

    entries = model_index(run, model=model)
    if len(entries) > 1:
        path, metrics = _read(run)
        _one_model(path, _keys(path, metrics, model))  # refuses, naming the models
    return yaml.safe_dump({"model-index": entries}, sort_keys=False, allow_unicode=True)


def _one_model(path: Path, keys: list[str]) -> str:
    if len(keys) != 1:
        raise ConfigError(
            f"{path} holds models {', '.join(keys)}; a model card describes one (the Hub reads one model "
            "name per model-index and gives it every result): pass model",
            parameter="model",
        )
    return keys[0]


def _written_model_index(text: str, path: Path) -> bool:
    """Whether a card's metadata block holds a non-empty ``model-index`` (read as written, where
    ``ModelCard`` leaves out one it cannot read).

    >>> _written_model_index("---\\nmodel-index: oops\\n---\\n# x", Path("README.md"))
    True
    """
    from huggingface_hub.repocard import REGEX_YAML_BLOCK

    from nlibias.textio.yaml_unique import load_yaml

    block = REGEX_YAML_BLOCK.search(text)
    metadata = load_yaml(block.group(2), path) if block else None
    return isinstance(metadata, dict) and bool(metadata.get("model-index"))


def update_card(run: str | Path, card: str | Path, *, model: str | None = None) -> Path:
    """Write the run's ``model-index`` into the metadata block of the model card at ``card``,
    keeping the rest of its metadata and its text (a card without a block gets one). A card
    describes one model: a run of several needs ``model``."""
    from huggingface_hub import ModelCard, ModelCardData

    from nlibias.io.atomic import atomic_write_text

    path, metrics = _read(run)
    key = _one_model(path, _keys(path, metrics, model))
    card_path = Path(card)
    if not card_path.is_file():
        raise SourceError(card_path, None, "no model card here", fix="pass an existing README.md")
    text = card_path.read_text(encoding="utf-8")
    loaded = ModelCard(text, ignore_metadata_errors=True)
    results = _eval_results(metrics, key, _samples_sha256(path))
    if not results:
        raise DataError(f"{path}: model {key!r} reports no headline measure or accuracy", model=key)
    data = loaded.data
    if not isinstance(data, ModelCardData):  # ModelCard always reads ModelCardData
        raise SourceError(card_path, None, "not a model card")
    if not data.eval_results and _written_model_index(text, card_path):
        raise SourceError(  # huggingface_hub dropped it, and writing ours would have deleted it
            card_path,
            "model-index",
            "huggingface_hub cannot read the card's model-index, so its results would be lost",
            fix="correct the card's model-index (or remove it) and export again",
        )
    # the card's own results stay: only those of this benchmark are replaced, and the card keeps its
    # model name (before, both were overwritten: an MNLI accuracy was lost, the name became "a")
    ours = results[0].dataset_type
    kept = [r for r in data.eval_results or [] if r.dataset_type != ours]
    data.model_name = data.model_name or _model_name(metrics, key)
    data.eval_results = kept + results
    atomic_write_text(card_path, str(loaded))
    return card_path
