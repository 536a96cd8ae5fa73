"""What a fine-tune leaves in its folder: ``finetune.json`` (the settings that decide its weights,
how it was trained, the line the command line prints) and the Trainer's checkpoints as a resume may
trust them (:func:`usable_checkpoint` removes every incomplete ``checkpoint-*`` folder, which a kill
mid-save leaves, and returns the newest complete one)."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, NotRequired, TypedDict, cast, get_args

from annotated_types import Ge, Le, Lt, Predicate

from nlibias.errors import FileAccessError, SourceError
from nlibias.io.atomic import write_json
from nlibias.io.fingerprint import sha256_file
from nlibias.io.jsonl import json_object_or_none, read_json_file
from nlibias.io.stages import RecomputedWarning, fingerprint, output_problems, sealed
from nlibias.io.temporary import DISK_FULL
from nlibias.schema.declared import Allowed, NonNegativeInt, PositiveFloat, PositiveInt
from nlibias.version import __version__

RECORD_FILE = "finetune.json"

LRScheduler = Literal["linear", "cosine", "constant", "constant_with_warmup", "polynomial"]
LR_SCHEDULERS: tuple[str, ...] = get_args(LRScheduler)
"""The Hugging Face Trainer's learning-rate schedules; ``constant`` alone reads no warm-up."""
MaxSteps = Annotated[int, Predicate(lambda steps: steps == -1 or steps >= 1),
                     Allowed("-1 (run all epochs) or a whole number of at least 1")]  # fmt: skip
MaxLength = Annotated[int, Ge(1), Le(8192), Allowed(
    "a whole number from 1 to 8192 (the most positions a common encoder reads, ModernBERT's; BERT and RoBERTa read 512)"
)]  # fmt: skip
TrainingSeed = Annotated[int, Ge(0), Lt(2**32), Allowed("a whole number from 0 to 2**32 - 1")]
"""The seeds the Trainer takes (numpy's legacy seeding: below 2**32)."""


class DamagedRecordWarning(RecomputedWarning):
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
    max_length: MaxLength = 128
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
    outputs: NotRequired[dict[str, str]]
    """The SHA-256 of each file the fine-tune left beside the record (weights, config, tokenizer);
    a record of an older nlibias has none."""
    record_sha256: NotRequired[str]
    """The SHA-256 of the record's other content (:func:`nlibias.io.stages.sealed`)."""


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
        outputs={path.name: sha256_file(path) for path in _written(out)},
    )
    record = cast(FinetuneRecord, sealed(record))
    write_json(out / RECORD_FILE, record)
    return record


def _written(out: Path) -> list[Path]:
    """The files the fine-tune saved in ``out`` (not the record, not a writer's hidden temporary)."""
    return sorted(
        p for p in out.iterdir() if p.is_file() and p.name != RECORD_FILE and not p.name.startswith(".")
    )


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
    when damaged, edited since it was written, or when a file it lists (the weights) changed since
    (then the fine-tune is not finished: the stage engine's check, :func:`~nlibias.io.stages.output_problems`)."""
    path = out / RECORD_FILE
    try:
        record = read_json_file(path)
    except FileNotFoundError:
        return None, None
    except OSError as error:
        return None, f"cannot be read ({error})"
    except SourceError as error:  # not UTF-8, not JSON, a key twice
        field = f"field {error.field}: " if error.field else ""
        return None, f"is not valid JSON, cut short or edited? (line {error.line}: {field}{error.reason})"
    if not isinstance(record, dict) or not isinstance(record.get("fingerprint"), str):
        return None, "is not a fine-tune record (no fingerprint)"
    if problems := output_problems(out, record):
        return None, f"does not check out: {'; '.join(problems)}"
    return cast(FinetuneRecord, record), None


PREFIX = "checkpoint-"
_DISCARDED = ".removing-"
_WEIGHTS = ("model.safetensors", "pytorch_model.bin")
_STATES = ("optimizer.pt", "scheduler.pt")


def step_of(folder: Path) -> int | None:
    """The step in a ``checkpoint-N`` folder name (None for another name).

    >>> step_of(Path("checkpoint-10")), step_of(Path("checkpoint-x")), step_of(Path("data"))
    (10, None, None)
    """
    number = folder.name[len(PREFIX) :] if folder.name.startswith(PREFIX) else ""
    return int(number) if number.isdigit() else None


def _weights_read(path: Path) -> bool:
    if path.suffix != ".safetensors":
        return path.stat().st_size > 0
    try:
        with path.open("rb") as handle:
            header_size = int.from_bytes(handle.read(8), "little")
            header = json.loads(handle.read(header_size)) if 0 < header_size < (1 << 27) else None
    except (OSError, ValueError):
        return False
    if not isinstance(header, dict):
        return False
    ends = [int(t["data_offsets"][1]) for k, t in header.items() if k != "__metadata__"]
    return path.stat().st_size >= 8 + header_size + max(ends, default=0)


def _trainer_state(folder: Path) -> dict[str, Any]:
    """The folder's ``trainer_state.json``, or {} when it is missing or unreadable."""
    return json_object_or_none(folder / "trainer_state.json") or {}


def is_complete(folder: Path) -> bool:
    """Whether ``folder`` holds a whole checkpoint: its ``trainer_state.json`` names its step, its
    weights read, its optimizer and scheduler states are not empty."""
    state = _trainer_state(folder)
    if not state or state.get("global_step") != step_of(folder):
        return False
    weights = [folder / name for name in _WEIGHTS if (folder / name).is_file()]
    if not weights or not all(_weights_read(w) for w in weights):
        return False
    return all((folder / name).is_file() and (folder / name).stat().st_size > 0 for name in _STATES)


def usable_checkpoint(checkpoints: Path) -> tuple[Path | None, list[str]]:
    """``(newest complete checkpoint or None, names of the incomplete ones removed)``."""
    if not checkpoints.is_dir():
        return None, []
    for leftover in checkpoints.glob(f"{_DISCARDED}*"):  # a kill during an earlier removal
        shutil.rmtree(leftover, ignore_errors=True)
    found = sorted(
        (p for p in checkpoints.iterdir() if p.is_dir() and step_of(p) is not None),
        key=lambda p: step_of(p) or 0,
    )
    removed = []
    for folder in [p for p in found if not is_complete(p)]:
        remove_folder(folder)
        removed.append(folder.name)
    complete = [p for p in found if p.name not in removed]
    return (complete[-1] if complete else None), removed


def remove_folder(folder: Path) -> None:
    """Delete ``folder`` as a unit: renamed first (atomic), so a kill mid-way leaves no half of it
    where a reader would look."""
    if folder.exists():
        doomed = folder.with_name(f"{_DISCARDED}{folder.name}-{os.getpid()}")
        folder.rename(doomed)
        shutil.rmtree(doomed, ignore_errors=True)


def final_step(checkpoint: str | Path | None) -> int | None:
    """The step of a checkpoint saved at the end of training (``max_steps`` reached: it is the
    finished model), else None."""
    state = {} if checkpoint is None else _trainer_state(Path(checkpoint))
    step, last = state.get("global_step"), state.get("max_steps")
    if isinstance(step, int) and isinstance(last, int) and 0 < last <= step:
        return step
    return None


# what torch's RuntimeError and safetensors' SafetensorError (no OSError) say when a write fails
_WRITE_FAILED = (
    "file write failed",
    "PytorchStreamWriter failed",
    "unexpected pos",  # torch's zip writer when a write came up short: "unexpected pos 64 vs 0"
    "No space left",
    "StorageFull",
    "os error 28",
)


@contextlib.contextmanager
def disk_full_named(folder: Path) -> Iterator[None]:
    """A full device while writing into ``folder`` is a :class:`~nlibias.errors.FileAccessError`
    naming it, not torch's internal error.

    >>> import errno, pathlib
    >>> with disk_full_named(pathlib.Path("/runs/m")):  # doctest: +ELLIPSIS
    ...     raise OSError(errno.ENOSPC, "No space left on device")
    Traceback (most recent call last):
    nlibias.errors.FileAccessError: /runs/m: no space left on the device ...
    """
    try:
        yield
    except Exception as error:  # an OSError; torch's RuntimeError, safetensors' SafetensorError
        if isinstance(error, OSError):
            if error.errno not in DISK_FULL:
                raise
            where = error.filename if error.filename is not None else folder
            reason = f"{DISK_FULL[error.errno]} while writing into {folder}"
        elif any(text in str(error) for text in _WRITE_FAILED):
            where = folder
            reason = f"no space left on the device: a file write failed ({str(error).strip()[:200]})"
        else:
            raise
        raise FileAccessError(
            where,
            reason,
            fix="free some space on that device or choose another {out_dir}, then rerun: training resumes",
            parameter="out_dir",
        ) from error
