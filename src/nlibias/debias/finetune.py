"""Fine-tune a Hugging Face sequence classifier on an NLI training set (paper 004 §3.2.1 defaults).

:func:`finetune` runs the Hugging Face ``Trainer``: AdamW (β 0.9/0.999), weight decay 0.01,
3 epochs, learning rate 2e-5 (1e-5 for RoBERTa, as the paper trains it), bf16 on a GPU that has
it. The result, ``OUT/``, is a model directory ``nlibias audit --model OUT`` takes: weights,
tokenizer and a config whose ``id2label`` names entailment/neutral/contradiction. Checkpoints
go to ``OUT/checkpoints/`` every ``save_steps`` steps; running the same call again after a
kill resumes from the newest one (settings and data must be those recorded). ``OUT/finetune.json``
records the settings, the SHA-256 of the training and evaluation data, the steps, the
throughput and, with an evaluation set, its accuracy.

>>> finetune("bert-base-uncased", "runs/aug", "runs/bert-aug", eval_path="mnli_dev.jsonl")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import platform
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypedDict

from nlibias.debias.training_rows import LABELS, iter_training_rows, source_digest
from nlibias.errors import ConfigError
from nlibias.io.atomic import write_json

RECORD_FILE = "finetune.json"
CHECKPOINTS = "checkpoints"
ID2LABEL = dict(enumerate(LABELS))


@dataclass(frozen=True)
class FinetuneSettings:
    """Everything that decides the trained weights (recorded; a resume must match it)."""

    model: str
    learning_rate: float
    epochs: float
    batch_size: int
    weight_decay: float = 0.01
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999
    max_length: int = 128
    max_steps: int = -1
    """Stop after this many optimiser steps (-1: run all epochs)."""
    seed: int = 42
    bf16: bool = False


class FinetuneRecord(TypedDict):
    """``finetune.json``: how a model directory was trained."""

    settings: dict[str, Any]
    train: str
    train_sha256: str | None
    train_rows: int
    eval: str | None
    eval_sha256: str | None
    eval_rows: int | None
    eval_accuracy: float | None
    steps: int
    resumed_from: str | None
    train_seconds: float
    examples_per_second: float
    device: str
    versions: dict[str, str]
    out: str


def _require_training_packages() -> None:
    """One clear error when an optional package of fine-tuning is missing."""
    import importlib.util

    missing = [
        p for p in ("torch", "transformers", "datasets", "accelerate") if importlib.util.find_spec(p) is None
    ]
    if missing:
        raise ConfigError(
            f"fine-tuning needs {', '.join(missing)}: pip install 'nlibias[train]' (and torch for your machine)"
        )


def default_learning_rate(model: str) -> float:
    """Paper 004: 1e-5 for RoBERTa, 2e-5 for the others (BERT, BART).

    >>> default_learning_rate("roberta-base"), default_learning_rate("bert-base-uncased")
    (1e-05, 2e-05)
    """
    return 1e-5 if "roberta" in model.lower() else 2e-5


def _labelled(source: str, split: str, digest: str | None) -> Iterator[dict[str, Any]]:
    """Labelled rows (``digest`` is not read: it makes the ``datasets`` cache key follow the data)."""
    for row in iter_training_rows(source, split=split):
        if row.label is not None:
            yield {"premise": row.premise, "hypothesis": row.hypothesis, "label": row.label}


def _tokenized(
    source: str | Path,
    split: str,
    tokenizer: Any,
    settings: FinetuneSettings,
    label_ids: dict[str, int],
    cache_dir: Path,
    digest: str | None,
) -> Any:
    """The labelled rows as a tokenized ``datasets.Dataset`` (Arrow files under ``cache_dir``),
    labels as the model's own ids."""
    import datasets

    features = {name: datasets.Value("string") for name in ("premise", "hypothesis", "label")}
    dataset = datasets.Dataset.from_generator(
        _labelled,
        gen_kwargs={"source": str(source), "split": split, "digest": digest or str(source)},
        cache_dir=str(cache_dir),
        features=datasets.Features(features),
    )
    if len(dataset) == 0:
        raise ConfigError(f"{source} has no labelled rows", parameter="train")

    def encode(batch: dict[str, list[Any]]) -> Any:
        encoded = tokenizer(
            batch["premise"], batch["hypothesis"], truncation=True, max_length=settings.max_length
        )
        encoded["labels"] = [label_ids[name] for name in batch["label"]]
        return encoded

    return dataset.map(encode, batched=True, remove_columns=["premise", "hypothesis", "label"])


def _load_model(model: str) -> tuple[Any, Any, dict[str, int]]:
    """Tokenizer, a 3-way classifier whose ``id2label`` names the NLI labels (the model's own
    head when its labels already are entailment/neutral/contradiction, else a new head) and the
    head's id of each label."""
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    from nlibias.models.nli.labels import canonical_label

    tokenizer = AutoTokenizer.from_pretrained(model)
    config = AutoConfig.from_pretrained(model)
    own = {int(k): canonical_label(str(v)) for k, v in (getattr(config, "id2label", None) or {}).items()}
    if sorted(own) == [0, 1, 2] and sorted(filter(None, own.values())) == sorted(LABELS):
        label_ids = {str(label): i for i, label in own.items()}
        classifier = AutoModelForSequenceClassification.from_pretrained(model)
    else:
        label_ids = {label: i for i, label in ID2LABEL.items()}
        classifier = AutoModelForSequenceClassification.from_pretrained(
            model, num_labels=3, id2label=ID2LABEL, label2id=label_ids, ignore_mismatched_sizes=True
        )
    if tokenizer.pad_token is None:  # GPT-style tokenizers: pad with end-of-text
        tokenizer.pad_token = tokenizer.eos_token
        classifier.config.pad_token_id = tokenizer.pad_token_id
    return tokenizer, classifier, label_ids


def _training_arguments(settings: FinetuneSettings, out: Path, save_steps: int, progress: bool) -> Any:
    import torch
    from transformers import TrainingArguments

    return TrainingArguments(
        output_dir=str(out / CHECKPOINTS),
        num_train_epochs=settings.epochs,
        max_steps=settings.max_steps,
        learning_rate=settings.learning_rate,
        weight_decay=settings.weight_decay,
        adam_beta1=settings.adam_beta1,
        adam_beta2=settings.adam_beta2,
        optim="adamw_torch",
        per_device_train_batch_size=settings.batch_size,
        per_device_eval_batch_size=max(settings.batch_size, 64),
        bf16=settings.bf16,
        seed=settings.seed,
        save_strategy="steps",
        save_steps=save_steps,
        save_total_limit=2,
        logging_strategy="steps",
        logging_steps=max(1, min(save_steps, 100)),
        eval_strategy="no",
        report_to="none",
        disable_tqdm=not progress,
        dataloader_num_workers=0,
        dataloader_pin_memory=torch.cuda.is_available(),
    )


def _check_resumable(out: Path, settings: FinetuneSettings, hashes: dict[str, str | None]) -> str | None:
    """The newest checkpoint to resume from, after checking the recorded plan matches this one."""
    plan_path = out / CHECKPOINTS / "plan.json"
    plan = {"settings": asdict(settings), "data": hashes}
    checkpoints = sorted((out / CHECKPOINTS).glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1]))
    if plan_path.is_file() and checkpoints:  # a plan without checkpoints (a failed start) is replaced
        recorded = json.loads(plan_path.read_text(encoding="utf-8"))
        if recorded != json.loads(json.dumps(plan)):
            raise ConfigError(
                f"{out} holds checkpoints of a run with other settings or data ({plan_path}); "
                "use another out_dir or delete its checkpoints folder",
                parameter="out_dir",
            )
    write_json(plan_path, plan)
    return str(checkpoints[-1]) if checkpoints else None


def finetune(
    model: str,
    train: str | Path,
    out_dir: str | Path,
    *,
    eval_path: str | Path | None = None,
    learning_rate: float | None = None,
    epochs: float = 3.0,
    batch_size: int = 32,
    max_length: int = 128,
    max_steps: int = -1,
    save_steps: int = 500,
    seed: int = 42,
    split: str = "train",
    eval_split: str = "validation",
    progress: bool = True,
    callbacks: Sequence[Any] = (),
) -> FinetuneRecord:
    """Fine-tune ``model`` (hub name or directory) on ``train`` into ``out_dir``; resume if killed.

    ``train``/``eval_path``: what ``nlibias augment`` reads (a file, an ``augment`` output
    directory, a saved ``datasets`` directory, a hub name). ``learning_rate`` defaults to paper
    004's. ``callbacks``: extra ``transformers.TrainerCallback`` objects.
    """
    _require_training_packages()
    import torch
    from transformers import DataCollatorWithPadding, PrinterCallback, Trainer

    if batch_size < 1 or epochs <= 0 or save_steps < 1:
        bad = "batch_size" if batch_size < 1 else "epochs" if epochs <= 0 else "save_steps"
        raise ConfigError(f"{bad} must be positive", parameter=bad)
    out = Path(out_dir)
    settings = FinetuneSettings(
        model=model,
        learning_rate=learning_rate if learning_rate is not None else default_learning_rate(model),
        epochs=epochs,
        batch_size=batch_size,
        max_length=max_length,
        max_steps=max_steps,
        seed=seed,
        bf16=bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported()),
    )
    hashes = {"train": source_digest(train), "eval": None if eval_path is None else source_digest(eval_path)}
    resume_from = _check_resumable(out, settings, hashes)
    tokenizer, classifier, label_ids = _load_model(model)
    data_dir = out / CHECKPOINTS / "data"
    train_set = _tokenized(train, split, tokenizer, settings, label_ids, data_dir, hashes["train"])
    trainer = Trainer(
        model=classifier,
        args=_training_arguments(settings, out, save_steps, progress),
        train_dataset=train_set,
        data_collator=DataCollatorWithPadding(tokenizer),
        processing_class=tokenizer,
        callbacks=list(callbacks),
    )
    trainer.remove_callback(PrinterCallback)  # it prints log dicts on stdout when the bar is off
    result = trainer.train(resume_from_checkpoint=resume_from)
    trainer.save_model(str(out))
    tokenizer.save_pretrained(str(out))
    accuracy, eval_rows = None, None
    if eval_path is not None:
        eval_set = _tokenized(eval_path, eval_split, tokenizer, settings, label_ids, data_dir, hashes["eval"])
        predictions = trainer.predict(eval_set)
        eval_rows = len(eval_set)
        logits: Any = predictions.predictions
        if isinstance(logits, tuple):  # BART also returns its encoder states
            logits = logits[0]
        accuracy = float((logits.argmax(-1) == predictions.label_ids).mean())
    return _write_record(
        out, settings, train, train_set, eval_path, hashes, eval_rows, accuracy, result, resume_from
    )


def _write_record(
    out: Path,
    settings: FinetuneSettings,
    train: str | Path,
    train_set: Any,
    eval_path: str | Path | None,
    hashes: dict[str, str | None],
    eval_rows: int | None,
    accuracy: float | None,
    result: Any,
    resume_from: str | None,
) -> FinetuneRecord:
    import torch
    import transformers

    metrics = result.metrics
    record = FinetuneRecord(
        settings=asdict(settings),
        train=str(train),
        train_sha256=hashes["train"],
        train_rows=len(train_set),
        eval=None if eval_path is None else str(eval_path),
        eval_sha256=hashes["eval"],
        eval_rows=eval_rows,
        eval_accuracy=accuracy,
        steps=int(result.global_step),
        resumed_from=None if resume_from is None else Path(resume_from).name,
        train_seconds=float(metrics.get("train_runtime", 0.0)),
        examples_per_second=float(metrics.get("train_samples_per_second", 0.0)),
        device=torch.cuda.get_device_name(0) if torch.cuda.is_available() else platform.processor() or "cpu",
        versions={"torch": torch.__version__, "transformers": transformers.__version__},
        out=str(out),
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
    if record["eval_accuracy"] is not None:
        lines.append(
            f"eval accuracy: {100 * record['eval_accuracy']:.2f}% on {record['eval_rows']} rows of {record['eval']}"
        )
    return "\n".join(lines)
