"""``finetune.json``: the settings that decide a fine-tune's weights, how a model directory was
trained, and the line the command line prints."""

from __future__ import annotations

import json
import platform
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypedDict, cast, get_args

from annotated_types import Ge, Lt, Predicate

from nlibias.io.atomic import write_json
from nlibias.io.stages import fingerprint
from nlibias.schema.declared import Allowed, NonNegativeInt, PositiveFloat, PositiveInt
from nlibias.version import __version__

RECORD_FILE = "finetune.json"

LRScheduler = Literal["linear", "cosine", "constant", "constant_with_warmup", "polynomial"]
LR_SCHEDULERS: tuple[str, ...] = get_args(LRScheduler)
"""The Hugging Face Trainer's learning-rate schedules; ``constant`` alone reads no warm-up."""
MaxSteps = Annotated[int, Predicate(lambda steps: steps == -1 or steps >= 1),
                     Allowed("-1 (run all epochs) or a whole number of at least 1")]  # fmt: skip
TrainingSeed = Annotated[int, Ge(0), Lt(2**32), Allowed("a whole number from 0 to 2**32 - 1")]
"""The seeds the Trainer takes (numpy's legacy seeding: below 2**32)."""


class DamagedRecordWarning(UserWarning):
    """A ``finetune.json`` was damaged (cut short): the fine-tune is finished again."""


@dataclass(frozen=True)
class TrainingOptions:
    """The options of a fine-tune with paper 004's defaults, each field's rule declared on its
    type (:func:`~nlibias.debias.finetune_checks.check_options` holds a value to it) and its
    docstring the flag's help (``nlibias.cli.options.documented``).

    >>> TrainingOptions(epochs=1.0).batch_size
    32
    """

    __pydantic_config__: ClassVar[dict[str, bool]] = {"use_attribute_docstrings": True}

    learning_rate: PositiveFloat | None = None
    """Default: 1e-5 for RoBERTa, 2e-5 otherwise (paper 004)."""
    epochs: PositiveFloat = 3.0
    """Passes over the training set."""
    batch_size: PositiveInt = 32
    """Training pairs per step."""
    max_length: PositiveInt = 128
    """Tokens per premise-hypothesis pair (longer pairs are truncated)."""
    max_steps: MaxSteps = -1
    """Stop each fine-tune after N optimiser steps, in place of epochs (-1: all epochs)."""
    save_steps: PositiveInt = 500
    """Checkpoint every N steps (a killed run resumes from the last)."""
    seed: TrainingSeed = 42
    """The seed of the Trainer (data order, new head's weights)."""
    lr_scheduler: LRScheduler = "linear"
    """linear, cosine, constant (no warm-up), constant_with_warmup or polynomial."""
    warmup_steps: NonNegativeInt = 0
    """Steps of linear warm-up."""
    warmup_ratio: Annotated[float, Ge(0), Lt(1)] = 0.0
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
    options, the learning rate chosen for the model, and the fixed optimiser settings."""

    model: str
    learning_rate: float
    bf16: bool = False
    weight_decay: float = 0.01
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999


class FinetuneRecord(TypedDict):
    """``finetune.json``: how a model directory was trained (paths absolute)."""

    settings: dict[str, Any]
    base_model: dict[str, Any]
    """``name``, ``kind`` (local/hub), ``revision`` (hub commit), ``files_sha256`` (local files)."""
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
    rows: tuple[int, int | None],
    accuracy: float | None,
    result: Any,
    resume_from: str | None,
    discarded: list[str],
) -> FinetuneRecord:
    """Write ``out/finetune.json`` (``rows``: of the training and evaluation sets)."""
    import torch
    import transformers

    metrics = result.metrics
    eval_data = inputs["eval"] or {}
    record = FinetuneRecord(
        settings=asdict(settings),
        base_model=inputs["base_model"],
        train=inputs["train"]["path"],
        train_sha256=inputs["train"]["sha256"],
        train_rows=rows[0],
        eval=eval_data.get("path"),
        eval_sha256=eval_data.get("sha256"),
        eval_rows=rows[1],
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
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as error:
        return None, f"cannot be read ({error})"
    except json.JSONDecodeError as error:
        return None, f"is not valid JSON, cut short? ({error})"
    if not isinstance(record, dict) or not isinstance(record.get("fingerprint"), str):
        return None, "is not a fine-tune record (no fingerprint)"
    return cast(FinetuneRecord, record), None
