"""``finetune.json``: the settings that decide a fine-tune's weights, how a model directory was
trained, and the line the command line prints."""

from __future__ import annotations

import json
import platform
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar, TypedDict, cast

from nlibias.io.atomic import write_json
from nlibias.io.stages import fingerprint
from nlibias.version import __version__

RECORD_FILE = "finetune.json"


class DamagedRecordWarning(UserWarning):
    """A ``finetune.json`` was damaged (cut short): the fine-tune is finished again."""


@dataclass(frozen=True)
class TrainingOptions:
    """The options of a fine-tune, with paper 004's defaults (``finetune_options`` of
    ``nlibias.debias_models`` may set all but ``seed``; ``nlibias.finetune`` spells them out).

    >>> TrainingOptions(epochs=1.0).batch_size
    32
    """

    # pydantic reads each field's docstring as its description (no pydantic import here: a
    # ConfigDict is a plain dict); the command line shows it as the flag's help
    # (nlibias.cli.options.documented), so the two say one thing, written once.
    __pydantic_config__: ClassVar[dict[str, bool]] = {"use_attribute_docstrings": True}

    learning_rate: float | None = None
    """Default: 1e-5 for RoBERTa, 2e-5 otherwise (paper 004)."""
    epochs: float = 3.0
    """Passes over the training set."""
    batch_size: int = 32
    """Training pairs per step."""
    max_length: int = 128
    """Tokens per premise-hypothesis pair (longer pairs are truncated)."""
    max_steps: int = -1
    """Stop each fine-tune after N optimiser steps, in place of epochs (-1: all epochs)."""
    save_steps: int = 500
    """Checkpoint every N steps (a killed run resumes from the last)."""
    seed: int = 42
    """The seed of the Trainer (data order, new head's weights)."""
    lr_scheduler: str = "linear"
    """linear, cosine, constant (no warm-up), constant_with_warmup or polynomial."""
    warmup_steps: int = 0
    """Steps of linear warm-up."""
    warmup_ratio: float = 0.0
    """Warm-up as a fraction of all steps (instead of warmup_steps)."""
    split: str = "train"
    """Split of a `datasets` training set or hub dataset (a file has none)."""
    eval_split: str = "validation"
    """Split of a `datasets` evaluation set (a file has none)."""


TRAINING_DEFAULTS = TrainingOptions()
"""Every training option at paper 004's default."""


@dataclass(frozen=True, kw_only=True)
class FinetuneSettings(TrainingOptions):
    """Everything that decides the trained weights (recorded; a resume must match it): the
    options, with the learning rate chosen for the model, and the fixed optimiser settings."""

    model: str
    learning_rate: float  # chosen for the model: never None here
    bf16: bool = False
    weight_decay: float = 0.01
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999


class FinetuneRecord(TypedDict):
    """``finetune.json``: how a model directory was trained (paths absolute, so a reader finds
    the data and the model from any working directory)."""

    settings: dict[str, Any]
    base_model: dict[str, Any]
    """``name`` (absolute path or hub id), ``kind`` (local/hub), ``revision`` (hub commit),
    ``files_sha256`` (local: hash of config, weights and tokenizer files)."""
    train: str
    train_sha256: str | None
    train_rows: int
    eval: str | None
    eval_sha256: str | None
    eval_rows: int | None
    eval_accuracy: float | None
    steps: int
    resumed_from: str | None
    discarded_checkpoints: list[str]
    train_seconds: float
    examples_per_second: float
    device: str
    versions: dict[str, str]
    out: str
    inputs: dict[str, Any]
    """What the fingerprint covers: settings, data (path, SHA-256) and base model identity."""
    fingerprint: str


def write_record(
    out: Path,
    settings: FinetuneSettings,
    inputs: dict[str, Any],
    train_rows: int,
    eval_rows: int | None,
    accuracy: float | None,
    result: Any,
    resume_from: str | None,
    discarded: list[str],
) -> FinetuneRecord:
    import torch
    import transformers

    metrics = result.metrics
    eval_data = inputs["eval"] or {}
    record = FinetuneRecord(
        settings=asdict(settings),
        base_model=inputs["base_model"],
        train=inputs["train"]["path"],
        train_sha256=inputs["train"]["sha256"],
        train_rows=train_rows,
        eval=eval_data.get("path"),
        eval_sha256=eval_data.get("sha256"),
        eval_rows=eval_rows,
        eval_accuracy=accuracy,
        steps=int(result.global_step),
        resumed_from=None if resume_from is None else Path(resume_from).name,
        discarded_checkpoints=discarded,
        train_seconds=float(metrics.get("train_runtime", 0.0)),
        examples_per_second=float(metrics.get("train_samples_per_second", 0.0)),
        device=torch.cuda.get_device_name(0) if torch.cuda.is_available() else platform.processor() or "cpu",
        versions={
            "nlibias": __version__,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        },
        out=str(out),
        inputs=inputs,
        fingerprint=fingerprint(inputs),
    )
    write_json(out / RECORD_FILE, record)
    return record


def format_record(record: FinetuneRecord) -> str:
    """The record as the command line prints it."""
    lines = [
        f"fine-tuned {record['settings']['model']} on {record['train_rows']} rows of {record['train']} "
        f"({record['steps']} steps, {record['examples_per_second']:.1f} examples/s on {record['device']})",
        f"model directory: {record['out']} (nlibias audit --model {record['out']})",
    ]
    if record["resumed_from"]:
        lines.append(f"resumed from {record['resumed_from']}")
    if record.get("discarded_checkpoints"):
        lines.append(f"incomplete checkpoints removed: {', '.join(record['discarded_checkpoints'])}")
    if record["eval_accuracy"] is not None:
        lines.append(
            f"eval accuracy: {100 * record['eval_accuracy']:.2f}% on {record['eval_rows']} rows of {record['eval']}"
        )
    return "\n".join(lines)


def read_record(out: Path) -> tuple[FinetuneRecord | None, str | None]:
    """``out``'s ``finetune.json``: ``(record, None)``, ``(None, None)`` when absent, ``(None, why)``
    when damaged (then the fine-tune is not finished)."""
    path = out / RECORD_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as error:
        return None, f"cannot be read ({error})"
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        return None, f"is not valid JSON, cut short? ({error})"
    if not isinstance(record, dict) or not isinstance(record.get("fingerprint"), str):
        return None, "is not a fine-tune record (no fingerprint)"
    return cast(FinetuneRecord, record), None
