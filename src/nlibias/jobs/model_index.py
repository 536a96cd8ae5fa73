"""A run's overall numbers as the ``model-index`` metadata of a Hugging Face model card, built
with ``huggingface_hub``'s classes so the Hub reads what we write.

>>> entries = model_index("runs/audit")  # doctest: +SKIP
>>> entries[0]["results"][0]["metrics"][0]["type"]  # doctest: +SKIP
'bbnli_bias_score'
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

import yaml
from annotated_types import Predicate

from nlibias.catalog.registry import benchmark_for_source
from nlibias.errors import ConfigError, DataError, NlibiasError, SourceError
from nlibias.io.atomic import atomic_write_text, locked_update, write_target
from nlibias.io.overwrites import refuse_overwrites, run_files
from nlibias.io.run_dir import RunDirectory
from nlibias.jobs.results import read_checked_run
from nlibias.metrics.meta import ALL_MEASURES
from nlibias.metrics.verdicts import headline_infos
from nlibias.report.metric_readers import interval, is_number
from nlibias.report.verdict_block import scored_of, subset_of
from nlibias.schema.declared import Allowed, PathArg, Refuse, declared
from nlibias.schema.model_keys import split_model_key
from nlibias.schema.paths import OutFile
from nlibias.textio.list_files import structured_kind
from nlibias.textio.text_files import decode_utf8
from nlibias.textio.yaml_unique import load_yaml

if TYPE_CHECKING:
    from huggingface_hub import EvalResult

TASKS = {
    "classifier": ("text-classification", "Natural Language Inference"),
    "generative": ("text-generation", "Natural Language Inference (yes/no questions)"),
    "sentence-logprob": ("fill-mask", "Stereotype preference (sentence likelihood)"),
}
"""Predictor kind → (task type, task name) of the model index."""


def _multiple_choice(source: str) -> bool:
    """Whether the samples of ``source`` are multiple-choice questions."""
    try:
        return bool(benchmark_for_source(source).prompt_styles)
    except NlibiasError:  # a plug-in's source not registered here: read as its kind says
        return False


def _coverage(metrics: Mapping[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """What the dataset name adds, and its ``args``, where the run's values are not over the whole
    samples file (a ``limit`` subset, or samples a scoring found no prediction for).

    >>> _coverage({"subset": {"limit": 40, "seed": 0, "samples": 40, "of": 3134}})
    ('; a subset: 40 of 3,134 samples', {'subset_samples': 40, 'samples_in_set': 3134, 'limit': 40, 'seed': 0})
    >>> _coverage({"run": {"samples_scored": 150, "samples_given": 3134}})
    ('; 150 of 3,134 samples scored', {'samples_scored': 150, 'samples_given': 3134})
    >>> _coverage({})
    ('', None)
    """
    subset = subset_of(metrics)
    if subset is not None:
        args = {"subset_samples": subset["samples"], "samples_in_set": subset["of"]}
        args |= {k: subset[k] for k in ("limit", "seed") if subset.get(k) is not None}
        return f"; a subset: {subset['samples']:,} of {subset['of']:,} samples", args
    if (found := scored_of(metrics)) is not None:
        scored, given = found
        return f"; {scored:,} of {given:,} samples scored", {"samples_scored": scored, "samples_given": given}
    return "", None


def _eval_results(run: RunDirectory, key: str) -> list[EvalResult]:
    """One :class:`huggingface_hub.EvalResult` per headline measure and accuracy of model ``key``."""
    from huggingface_hub import EvalResult

    metrics = run.metrics
    overall = metrics["models"][key]["overall"]
    generative = split_model_key(key)
    # a run written before predictor_kinds: a generative LM's key says what it is
    kind = run.kinds.get(key) or ("generative" if generative is not None else "classifier")
    task_type, task_name = TASKS.get(kind, ("text-classification", kind))
    source = run.source
    if kind == "generative" and _multiple_choice(source):  # BBQ: answers to options, not yes/no
        task_name = "Question answering (multiple choice)"
    if generative is not None:  # the prompt and mode are in the key, not in the model's name
        task_name = f"{task_name}, prompt {generative[1]}, {generative[2]} answers"
    coverage, dataset_args = _coverage(metrics)
    infos = headline_infos(overall)
    if is_number(overall.get("accuracy")) and "accuracy" in ALL_MEASURES:
        infos.append(ALL_MEASURES["accuracy"])
    results = []
    for info in infos:
        value = overall.get(info.name)
        if not is_number(value):
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
                dataset_revision=run.samples.sha256,
                dataset_args=dataset_args,
                metric_type=info.name,
                metric_name=name,
                metric_value=supported_precision(float(value), interval(overall, info.name)),
                verified=False,
            )
        )
    return results


def supported_precision(value: float, bounds: tuple[float, float] | None) -> float:
    """``value`` rounded to two significant digits of its interval's half-width (the rest is noise).

    >>> supported_precision(-3.3391915641476255, (-6.553163444639718, 0.13620386643233687))
    -3.3
    >>> supported_precision(0.123456, (0.1, 0.15)), supported_precision(32.86, None)
    (0.123, 32.86)
    """
    if bounds is None:
        return value
    half = (bounds[1] - bounds[0]) / 2
    if not math.isfinite(half) or half <= 0:
        return value
    return round(value, max(0, 1 - math.floor(math.log10(half))))


def _model_name(run: RunDirectory, key: str) -> str:
    """The name the run recorded for the model (e.g. a hub id), else its key."""
    return run.model_run(key).get("model") or key


def _hub_name(name: str) -> bool:
    return bool(name.strip()) and name == name.strip() and "\n" not in name


def _url_words(url: str) -> str:
    """Why a URL is no model name, and the name a Hub model's URL holds (``org/model``)."""
    parts = urlsplit(url)
    path = [part for part in parts.path.split("/") if part][:2]
    hub = (parts.hostname or "").removeprefix("www.") in ("huggingface.co", "hf.co") and path
    fix = (
        f"pass {{name}} {'/'.join(path)}, the model part of it" if hub else "pass the model's name on the Hub"
    )
    return (
        f"{url!r} is a URL, not the model's name on the Hub (the card's model-index names the model); {fix}"
    )


HubName = Annotated[
    str,
    Predicate(_hub_name),
    Allowed("the model's name on the Hub (e.g. my-org/my-nli)"),
    Refuse(lambda name: "://" in name, _url_words),
]
"""The name a model card's ``model-index`` gives the model: huggingface_hub's ``model_name``, the
repo's name (``org/model``) by default, as the Hub's card template writes ``name: {model_id}``."""
MARKDOWN_SUFFIXES = (".md", ".markdown")
CardPath = Annotated[
    PathArg,
    Predicate(lambda path: Path(path).suffix.lower() in MARKDOWN_SUFFIXES),
    Allowed("a Markdown model card, a .md file (the model's README.md)"),
]
"""A model card: Markdown (a rules YAML or a JSON file would get a metadata block written into it)."""


@declared
def model_index(
    run: PathArg, *, model: str | None = None, name: HubName | None = None
) -> list[dict[str, Any]]:
    """The ``model-index`` list of a run: one entry per model (``model``: only that one), each
    named ``name`` (one model's) or as the run recorded."""
    from huggingface_hub.repocard_data import eval_results_to_model_index

    read = read_checked_run(run)
    found = _results(read, _keys(read, model, one=name is not None))
    entries: list[dict[str, Any]] = []
    for key, results in found.items():
        entries += eval_results_to_model_index(name or _model_name(read, key), results)
    return entries


def _keys(run: RunDirectory, model: str | None, *, one: bool = False) -> list[str]:
    """The run's model keys, or ``model`` alone; ``one``: refused unless that leaves one."""
    keys = list(run.metrics["models"])
    chosen = keys if model is None else [key for key in keys if key == model]
    if (chosen or model is None) and not (one and len(chosen) != 1):
        return chosen
    reason = (
        f"{{model}} {model!r} is not in {run.path} ({', '.join(keys)})"
        if model is not None
        else f"{run.path} holds models {', '.join(keys)}; a model card describes one (the Hub reads one "
        "model name per model-index and gives it every result): pass model"
    )
    raise ConfigError(reason, parameter="model")


def _results(run: RunDirectory, keys: Sequence[str]) -> dict[str, list[EvalResult]]:
    """Each model's results (:func:`_eval_results`), refused when none has any."""
    found = {key: results for key in keys if (results := _eval_results(run, key))}
    if not found:
        models = ", ".join(map(repr, keys))
        raise DataError(f"{run.path}: model {models} reports no headline measure or accuracy", field="models")
    return found


def read_card(path: Path) -> tuple[str, dict[str, Any]]:
    """A model card's text and its front matter's metadata (``{}`` without one), refused with the
    line where the Hub would not read what we write.

    >>> import tempfile, pathlib
    >>> card = pathlib.Path(tempfile.mkdtemp()) / "README.md"
    >>> _ = card.write_text("---\\nlicense: mit\\n---\\n# m\\n")
    >>> read_card(card)[1]
    {'license': 'mit'}
    >>> _ = card.write_text("---\\nlicense: mit\\n# m\\n")
    >>> read_card(card)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    nlibias.errors.SourceError: ...README.md:1: the front matter opened here is never closed (no '---' line after it) (...)
    """
    from huggingface_hub.repocard import REGEX_YAML_BLOCK

    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        raise SourceError(
            path, None, "starts with a byte-order mark: the Hub would not find its metadata block", line=1,
            fix="save the card as UTF-8 without a byte-order mark",
        )  # fmt: skip
    text = decode_utf8(path, data)
    lines = text.splitlines()
    opening = next((at for at, line in enumerate(lines) if line.strip()), None)
    if opening is None or lines[opening].rstrip() != "---":
        if (kind := structured_kind(text)) is not None:  # metadata outside front matter, or a data file
            raise SourceError(
                path, None, f"holds {kind} and no front matter: not a Markdown model card", line=(opening or 0) + 1,
                fix="pass the model's README.md; its metadata goes between '---' lines at the top",
            )  # fmt: skip
        return text, {}
    block = REGEX_YAML_BLOCK.search(text)
    if block is None:
        raise SourceError(
            path, None, "the front matter opened here is never closed (no '---' line after it)", line=opening + 1,
            fix="end the metadata block with a line '---'",
        )  # fmt: skip
    first = text.count("\n", 0, block.start(2)) + 1  # the line of the block's first key
    try:
        metadata = load_yaml(block.group(2), path)
    except SourceError as error:
        line = None if error.line is None else error.line + first - 1
        raise SourceError(path, None, f"metadata block: {error.reason}", line=line, fix=error.fix) from None
    if metadata is None:
        return text, {}
    if not isinstance(metadata, dict):
        raise SourceError(
            path, None, f"the metadata block is a {type(metadata).__name__}, not a mapping", line=first,
            fix="write it as key: value lines, e.g. license: mit",
        )  # fmt: skip
    return text, metadata


def _card(path: Path, text: str, metadata: Mapping[str, Any]) -> Any:
    """``huggingface_hub``'s ModelCard of a checked card (its own log lines kept off stderr)."""
    from huggingface_hub import ModelCard, ModelCardData

    hub_log = logging.getLogger("huggingface_hub")  # its modules' loggers have no level of their own
    level = hub_log.level
    hub_log.setLevel(logging.ERROR)
    try:
        loaded = ModelCard(text, ignore_metadata_errors=True)
    finally:
        hub_log.setLevel(level)
    if not isinstance(loaded.data, ModelCardData):  # ModelCard always reads ModelCardData
        raise SourceError(path, None, "not a model card")
    if not loaded.data.eval_results and metadata.get("model-index"):
        raise SourceError(  # huggingface_hub dropped it, and writing ours would have deleted it
            path,
            "model-index",
            "huggingface_hub cannot read the card's model-index, so its results would be lost",
            fix="correct the card's model-index (or remove it) and export again",
        )
    return loaded


@declared
def update_card(
    run: PathArg, card: CardPath, *, model: str | None = None, name: HubName | None = None
) -> str:
    """Write one model's ``model-index`` into the card at ``card`` under a lock, keeping its other
    metadata, text and datasets' results; returns the model's name (``name``, the card's, the run's)."""
    read = read_checked_run(run)
    [key] = _keys(read, model, one=True)
    card_path = Path(card)
    if not card_path.is_file():
        raise SourceError(card_path, None, "no model card here", fix="pass an existing README.md")
    results = _results(read, [key])[key]
    with locked_update(card_path) as target:
        loaded = _card(card_path, *read_card(target))
        data = loaded.data
        # only this benchmark's results are replaced; the card keeps its model name
        ours = results[0].dataset_type
        kept = [r for r in data.eval_results or [] if r.dataset_type != ours]
        data.model_name = name or data.model_name or _model_name(read, key)
        data.eval_results = kept + results
        atomic_write_text(target, str(loaded))
    return str(data.model_name)


@dataclass(frozen=True)
class ModelIndexExport:
    """What :func:`export_model_index` made and wrote."""

    model_index: list[dict[str, Any]]
    """The ``model-index`` entries (one model's)."""
    text: str
    """``model-index:`` as YAML."""
    out: Path | None
    card: Path | None
    card_file: Path | None
    """The file the card's update wrote: ``card``, or the file its symlink names."""

    def to_dict(self) -> dict[str, Any]:
        """What ``nlibias export model-index --json`` prints."""
        paths = {name: None if value is None else str(value) for name, value in
                 (("out", self.out), ("card", self.card), ("card_file", self.card_file))}  # fmt: skip
        return {"model_index": self.model_index, **paths}


@declared
def export_model_index(
    run: PathArg,
    *,
    out: OutFile | None = None,
    card: str | Path | None = None,
    model: str | None = None,
    name: str | None = None,
) -> ModelIndexExport:
    """``nlibias export model-index``: one model's ``model-index`` into ``card`` and ``out`` when given."""
    refuse_overwrites({"out": out, "card": card}, {"run": run_files(run)})
    card_file = None
    if card is not None:
        name = update_card(run, card, model=model, name=name)
        card_file = write_target(card)
    found = model_index(run, model=model, name=name)
    if len(found) > 1:  # the Hub reads one model name per card: refused, naming the models
        _keys(read_checked_run(run), model, one=True)
    text = yaml.safe_dump({"model-index": found}, sort_keys=False, allow_unicode=True)
    if out is not None:
        atomic_write_text(out, text)
    entries = yaml.safe_load(text)["model-index"]
    return ModelIndexExport(entries, text, None if out is None else Path(out), None if card is None else Path(card),
                            card_file)  # fmt: skip
