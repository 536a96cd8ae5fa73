"""Checks a fine-tune runs before any work (its options, the model path, every row of the data),
so a bad value stops it in seconds naming the parameter, file and line."""

from __future__ import annotations

import inspect
import typing
import warnings
from dataclasses import fields, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from nlibias.debias.finetune_record import LR_SCHEDULERS, TRAINING_DEFAULTS, TrainingOptions
from nlibias.debias.training_rows import TrainingSet, describe_training_set, source_kind
from nlibias.errors import ConfigError
from nlibias.models.mlm.model_names import check_model_path
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.declared import declared
from nlibias.schema.model_ref import ModelRef, model_config


def _check_options(**options: Any) -> None:
    """Hold each option to the type :class:`TrainingOptions` declares for it, and refuse an option
    the Trainer would ignore without a word: ``epochs`` beside ``max_steps`` (which overrides it),
    ``warmup_steps`` beside ``warmup_ratio`` (which wins), a warm-up with the ``constant`` schedule.

    >>> check_options(learning_rate=float("inf"))
    Traceback (most recent call last):
    nlibias.errors.ConfigError: learning_rate must be a finite float more than 0 or None; got float inf
    >>> check_options(max_steps=5, epochs=7.0)
    Traceback (most recent call last):
    nlibias.schema.applies.InapplicableOption: epochs 7.0 applies to runs without max_steps, and this run stops after 5 steps (max_steps), whatever the epochs; leave epochs or max_steps out
    """
    epochs, max_steps, scheduler = options["epochs"], options["max_steps"], options["lr_scheduler"]
    if max_steps != TRAINING_DEFAULTS.max_steps and epochs != TRAINING_DEFAULTS.epochs:
        raise option_applies_to_nothing(
            "epochs", "runs without {max_steps}", value=epochs,
            given=f"this run stops after {max_steps} steps ({{max_steps}}), whatever the epochs",
            fix="leave {epochs} or {max_steps} out", names=("max_steps",),
        )  # fmt: skip
    if options["warmup_steps"] and options["warmup_ratio"]:
        raise option_applies_to_nothing(
            "warmup_steps", "runs without {warmup_ratio}", value=options["warmup_steps"],
            given=f"{{warmup_ratio}} is {options['warmup_ratio']}",
            fix="give {warmup_steps} or {warmup_ratio}, not both", names=("warmup_ratio",),
        )  # fmt: skip
    for name in ("warmup_steps", "warmup_ratio"):
        if scheduler == "constant" and options[name]:
            with_warmup = ", ".join(s for s in LR_SCHEDULERS if s != "constant")
            raise option_applies_to_nothing(
                name, f"learning-rate schedules with a warm-up ({with_warmup})", value=options[name],
                given=f"the schedule {scheduler!r} ({{lr_scheduler}}) has none",
                fix=f"pick constant_with_warmup for {{lr_scheduler}}, or leave {name} out",
                names=("lr_scheduler",),
            )  # fmt: skip


_HINTS = typing.get_type_hints(TrainingOptions, include_extras=True)
_check_options.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [
        inspect.Parameter(
            f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=_HINTS[f.name]
        )
        for f in fields(TrainingOptions)
    ]
)
check_options = declared(_check_options)
""":func:`_check_options` with the fields of :class:`TrainingOptions` as its keywords."""


def check_split_applies(
    source: str | Path | TrainingSet, split: str, *, parameter: str = "split", default: str = "train"
) -> None:
    """Refuse a ``split`` other than its ``default`` for a source without splits (a file, a saved
    `datasets` set without splits), which is read whole."""
    if split == default or (isinstance(source, TrainingSet) and source.split == split):
        return
    kind, location = (
        (source.kind, source.location) if isinstance(source, TrainingSet) else source_kind(source)
    )
    if kind == "hub" or (kind == "datasets" and (Path(location) / "dataset_dict.json").is_file()):
        return
    whole = (
        "a saved `datasets` set without splits"
        if kind == "datasets"
        else f"a {kind.upper()} file, read whole"
    )
    raise option_applies_to_nothing(
        parameter, "Hugging Face datasets (a hub name, a saved `datasets` directory with splits)",
        value=split, given=f"{location} is {whole}",
    )  # fmt: skip


def check_splits(
    train: str | Path | TrainingSet,
    split: str,
    eval_path: str | Path | TrainingSet | None,
    eval_split: str,
) -> None:
    """:func:`check_split_applies` of both sets' splits; an ``eval_split`` without an evaluation
    set refused."""
    check_split_applies(train, split, parameter="split", default=TRAINING_DEFAULTS.split)
    if eval_path is not None:
        check_split_applies(
            eval_path, eval_split, parameter="eval_split", default=TRAINING_DEFAULTS.eval_split
        )
    elif eval_split != TRAINING_DEFAULTS.eval_split:
        raise option_applies_to_nothing(
            "eval_split", "an evaluation set ({eval_path})", value=eval_split, given="none is given",
            fix="give {eval_path}, or leave {eval_split} out", names=("eval_path",),
        )  # fmt: skip


def refuse_eval_is_train(train: TrainingSet, eval_set: TrainingSet | None) -> None:
    """Refuse an evaluation set that is the training set (the same file, a link or a copy of it:
    the same SHA-256; a hub set or a saved ``datasets`` set: also the same split), whose accuracy
    would be a training accuracy shown as held-out."""
    if eval_set is None or eval_set.kind != train.kind:
        return
    same = train.location == eval_set.location if train.kind == "hub" else train.sha256 == eval_set.sha256
    whole = train.kind not in ("hub", "datasets")  # a file is read whole, whatever the split
    if same and (whole or train.split == eval_set.split):
        split = "" if whole else f" (split {train.split!r})"
        raise ConfigError(
            f"{{eval_path}} {eval_set.path} holds the rows of {{train}} {train.path}{split}: its accuracy "
            "would be a training accuracy shown as held-out; give an evaluation set apart from the "
            "training data, or leave {eval_path} out",
            parameter="eval_path", names=("train",),
        )  # fmt: skip


def check_base_model(model: str, max_length: int | None = None, *, parameter: str = "model") -> None:
    """Refuse a model that is no Hugging Face checkpoint by its reference (a server, a GGUF file, a
    ``KIND:`` prefix: its role), a blank model, a missing local path (not sent to the hub), a path
    that is not a model directory, and a ``max_length`` beyond a local model's positions (its
    config.json); ``parameter``: the argument that names it.

    >>> check_base_model("./no/such/model")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    nlibias.errors.ConfigError: model './no/such/model': the local path ./no/such/model does not exist ...
    >>> check_base_model("openai:http://127.0.0.1:8000/v1#m")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    nlibias.errors.ConfigError: model takes a Hugging Face checkpoint ..., and 'openai:...#m' is a generative LM by its openai: prefix (...)
    """
    fix = "name a hub model or a model directory alone, e.g. roberta-base or ./models/nli"
    ModelRef.unread(model).check_role("checkpoint", parameter=parameter, fix=fix)
    check_model_path(model, parameter=parameter)
    path = Path(model).expanduser()
    if not model.strip() or (path.exists() and not (path.is_dir() and (path / "config.json").is_file())):
        raise ConfigError(
            f"{{{parameter}}} {model!r} is neither a hub name nor a model directory (no config.json): give "
            "a hub name or a directory written by save_pretrained (or by `nlibias finetune`)",
            parameter=parameter,
        )
    if max_length is not None and path.is_dir():
        config = model_config(path / "config.json")
        if config is not None:
            check_max_length(max_length, SimpleNamespace(**config), None, model)


def check_max_length(max_length: int, config: Any, tokenizer: Any, model: str) -> None:
    """Refuse a ``max_length`` the model cannot read (an index error deep inside it otherwise): its
    positions (RoBERTa's less the padding offset), or the tokenizer's limit when smaller.

    >>> class C: max_position_embeddings, model_type = 512, "bert"
    >>> check_max_length(100000, C(), None, "m")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: max_length is 100000, but the model m reads at most 512 tokens (max_position_embeddings 512); pass max_length 512 or less
    """
    positions = getattr(config, "max_position_embeddings", None)
    if not isinstance(positions, int) or positions < 1:
        return
    limit = positions
    if getattr(config, "model_type", "") in ("roberta", "xlm-roberta", "camembert", "longformer"):
        limit = positions - int(getattr(config, "pad_token_id", 1) or 1) - 1
    tokenizer_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tokenizer_max, int) and 0 < tokenizer_max < limit:
        limit = tokenizer_max
    if max_length > limit:
        raise ConfigError(
            f"{{max_length}} is {max_length}, but the model {model} reads at most {limit} tokens "
            f"(max_position_embeddings {positions}); pass {{max_length}} {limit} or less",
            parameter="max_length",
        )


def refuse_unlabelled(source: str | Path, parameter: str, labelled: int, rows: int | None = None) -> None:
    """Refuse a set with no labelled row (``rows``: how many it has, when counted)."""
    if labelled == 0:
        what = (
            "is empty"
            if rows == 0
            else f"has {'' if rows is None else f'{rows} rows and '}none with a gold label"
        )
        raise ConfigError(
            f"{{{parameter}}} {source} {what}: nothing to train or evaluate on", parameter=parameter
        )


def check_training_set(source: str | Path | TrainingSet, split: str, parameter: str) -> TrainingSet:
    """Read every row of ``source`` once (a bad row raises its file, line and field; a set with no
    labelled row is refused) and return it counted and hashed, the one value every later step takes
    (a set already checked for ``split`` is returned as it is). A hub name is not read here (it
    streams from the network): its counts are -1."""
    if isinstance(source, TrainingSet):
        if source.split == split and source.rows is not None:
            return source
        source = source.given
    described = describe_training_set(source, split)
    if described.kind == "hub":
        return replace(described, rows=-1, labelled=-1)
    rows = labelled = 0
    labels: set[str] = set()
    for row in described.iter_rows():
        rows += 1
        if row.label is not None:
            labelled += 1
            labels.add(row.label)
    refuse_unlabelled(source, parameter, labelled, rows)
    return replace(described, rows=rows, labelled=labelled, labels=tuple(sorted(labels)))


class OneLabelWarning(UserWarning):
    """Every labelled row of a training set has the same gold label."""


def warn_one_label(train: TrainingSet) -> None:
    """Warn when every labelled row has one gold label: the classifier learns to answer it
    whatever the pair says (a filter that kept one class, a wrong column)."""
    if len(train.labels) == 1:
        warnings.warn(
            f"every one of the {train.labelled:,} labelled rows of {train.path} is {train.labels[0]!r}: "
            "the model learns to answer that whatever the pair; check the label column or the "
            "rows selected",
            OneLabelWarning,
            stacklevel=3,
        )
