"""Fine-tune a Hugging Face sequence classifier on an NLI training set (paper 004 §3.2.1: AdamW,
weight decay 0.01, 3 epochs, learning rate 2e-5, 1e-5 for RoBERTa; bf16 on a GPU that has it).
A killed run resumes from its newest complete checkpoint; a finished ``OUT`` is reused for the
same inputs and refused for others unless ``force``."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from dataclasses import asdict, fields, replace
from functools import partial
from pathlib import Path
from typing import Any

from nlibias.debias.finetune_checks import (
    check_base_model,
    check_max_length,
    check_options,
    check_splits,
    check_training_set,
    refuse_eval_is_train,
    refuse_unlabelled,
    warn_one_label,
)
from nlibias.debias.finetune_record import (
    RECORD_FILE,
    DamagedRecordWarning,
    FinetuneRecord,
    FinetuneSettings,
    TrainingOptions,
    disk_full_named,
    final_step,
    read_record,
    remove_folder,
    usable_checkpoint,
    write_record,
)
from nlibias.debias.training_rows import LABELS, TrainingSet, iter_training_rows, require_packages
from nlibias.errors import ConfigError, DataError
from nlibias.io.atomic import write_json
from nlibias.io.jsonl import json_object_or_none
from nlibias.io.overwrites import refuse_other_run, refuse_overwrites
from nlibias.io.stages import canonical, changes, fingerprint, model_identity
from nlibias.models.hf_common import load_pretrained
from nlibias.models.mlm.model_names import loading_as
from nlibias.models.nli.labels import canonical_label
from nlibias.runtime.progress import ProgressLines, bars_wanted, restore_library_bars
from nlibias.schema.declared import PathArg, declared

CHECKPOINTS = "checkpoints"
ID2LABEL = dict(enumerate(LABELS))


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
    data: dict[str, Any], split: str, tokenizer: Any, max_length: int, label_ids: dict[str, int], cache: Path
) -> Any:
    """The labelled rows of ``data`` (its recorded ``path`` and ``sha256``) as a tokenized
    ``datasets.Dataset`` cached under ``cache``, labels as the model's own ids."""
    import datasets

    features = {name: datasets.Value("string") for name in ("premise", "hypothesis", "label")}
    dataset = datasets.Dataset.from_generator(
        _labelled,
        gen_kwargs={"source": data["path"], "split": split, "digest": data["sha256"] or data["path"]},
        cache_dir=str(cache),
        features=datasets.Features(features),
    )
    refuse_unlabelled(data["path"], "train", len(dataset))

    def encode(batch: dict[str, list[Any]]) -> Any:
        encoded = tokenizer(batch["premise"], batch["hypothesis"], truncation=True, max_length=max_length)
        encoded["labels"] = [label_ids[name] for name in batch["label"]]
        return encoded

    return dataset.map(encode, batched=True, remove_columns=["premise", "hypothesis", "label"])


def _load_model(model: str) -> tuple[Any, Any, dict[str, int]]:
    """Tokenizer, a 3-way NLI classifier (the model's own head when its labels are the NLI ones,
    else a new head) and the head's id of each label."""
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    with loading_as("model", model):
        tokenizer = load_pretrained(AutoTokenizer.from_pretrained, model, what="tokenizer")
        config = load_pretrained(AutoConfig.from_pretrained, model, what="model config")
        own = {int(k): canonical_label(str(v)) for k, v in (getattr(config, "id2label", None) or {}).items()}
        if sorted(own) == [0, 1, 2] and sorted(filter(None, own.values())) == sorted(LABELS):
            label_ids = {str(label): i for i, label in own.items()}
            classifier = load_pretrained(AutoModelForSequenceClassification.from_pretrained, model)
        else:
            label_ids = {label: i for i, label in ID2LABEL.items()}
            classifier = load_pretrained(
                AutoModelForSequenceClassification.from_pretrained, model, num_labels=3,
                id2label=ID2LABEL, label2id=label_ids, ignore_mismatched_sizes=True,
            )  # fmt: skip
    if tokenizer.pad_token is None:  # GPT-style tokenizers: pad with end-of-text
        tokenizer.pad_token = tokenizer.eos_token
        classifier.config.pad_token_id = tokenizer.pad_token_id
    # set as the first training step would: a resume with no step left saves the same config.json
    classifier.config.problem_type = "single_label_classification"
    return tokenizer, classifier, label_ids


def _training_arguments(settings: FinetuneSettings, out: Path, progress: bool) -> Any:
    import torch
    from transformers import TrainingArguments

    return TrainingArguments(
        output_dir=str(out / CHECKPOINTS),
        num_train_epochs=settings.epochs,
        max_steps=settings.max_steps,
        learning_rate=settings.learning_rate,
        lr_scheduler_type=settings.lr_scheduler,
        warmup_steps=settings.warmup_ratio or settings.warmup_steps,  # a float below 1 is a ratio
        weight_decay=settings.weight_decay,
        adam_beta1=settings.adam_beta1,
        adam_beta2=settings.adam_beta2,
        optim="adamw_torch",
        per_device_train_batch_size=settings.batch_size,
        per_device_eval_batch_size=max(settings.batch_size, 64),
        bf16=settings.bf16,
        seed=settings.seed,
        save_strategy="steps",
        save_steps=settings.save_steps,
        save_total_limit=2,
        logging_strategy="steps",
        logging_steps=max(1, min(settings.save_steps, 100)),
        eval_strategy="no",
        report_to="none",
        disable_tqdm=not bars_wanted(progress),  # a log gets no bar
        log_level="warning",
        dataloader_num_workers=0,
        dataloader_pin_memory=torch.cuda.is_available(),
    )


def _progress(progress: bool) -> Any:
    """What shows the fine-tune's progress: on a terminal the Trainer's bar, without the
    ``{'loss': ...}`` lines it writes on stdout; in a log, the steps as a line about every 30 s
    (:class:`~nlibias.runtime.progress.ProgressLines`); else None."""
    from transformers.trainer_callback import ProgressCallback, TrainerCallback

    class QuietProgress(ProgressCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            return None

        def stop(self) -> None:
            return None

    class StepLines(TrainerCallback):
        lines: ProgressLines | None = None

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.lines = ProgressLines(state.max_steps, "fine-tune", "step")
            self.lines.moved_to(state.global_step)

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if self.lines is not None:
                self.lines.moved_to(state.global_step)

        def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.stop()

        def stop(self) -> None:
            if self.lines is not None:
                self.lines.close()

    if bars_wanted(progress):
        restore_library_bars()  # asked for: an earlier job's silencing would hide this bar too
        return QuietProgress()
    return StepLines() if progress else None


def _plan(out: Path, inputs: dict[str, Any], force: bool) -> tuple[str | None, list[str]]:
    """Check the checkpoints' recorded inputs against this run's (refuse, or with ``force`` drop
    them), drop incomplete checkpoints, and return the newest complete one to resume from."""
    checkpoints = out / CHECKPOINTS
    plan_path = checkpoints / "plan.json"
    resume, discarded = usable_checkpoint(checkpoints)
    if plan_path.is_file() and resume is not None:  # a plan without checkpoints (a failed start) is replaced
        recorded = (json_object_or_none(plan_path) or {}).get("inputs")  # damaged: no inputs recorded
        if canonical(recorded) != canonical(inputs):
            _refuse_other_inputs(
                out, f"checkpoints of a run with other inputs ({plan_path})", recorded, inputs, force
            )
            remove_folder(checkpoints)
            resume = None
    write_json(plan_path, {"inputs": inputs, "fingerprint": fingerprint(inputs)})
    return (None if resume is None else str(resume)), discarded


def _refuse_other_inputs(out: Path, held: str, recorded: Any, inputs: dict[str, Any], force: bool) -> None:
    """Unless ``force``, refuse an ``out`` that holds the work of other inputs, naming each change."""
    if not force:
        raise ConfigError(
            f"{out} holds {held}: "
            + "; ".join(changes(recorded, inputs))
            + ". Use another {out_dir}, or set {force} to start over",
            parameter="out_dir",
            names=("force",),
        )


def _existing(out: Path, inputs: dict[str, Any], force: bool) -> FinetuneRecord | None:
    """A finished record for the same inputs, else None (``force`` drops one for other inputs,
    which are otherwise refused); a damaged record is warned about and the fine-tune finished again."""
    path = out / RECORD_FILE
    record, damaged = read_record(out)
    if damaged is not None:
        warnings.warn(
            f"{path} {damaged}: the fine-tune is finished again from its newest checkpoint",
            DamagedRecordWarning,
            stacklevel=3,
        )
        path.unlink()
        return None
    if record is None:
        return None
    if record.get("fingerprint") == fingerprint(inputs):
        return record
    _refuse_other_inputs(out, "a model fine-tuned with other inputs", record.get("inputs"), inputs, force)
    path.unlink()
    remove_folder(out / CHECKPOINTS)
    return None


def finetune_inputs(
    settings: FinetuneSettings,
    train: TrainingSet,
    eval_set: TrainingSet | None,
    *,
    base_model: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What decides a fine-tune's result: its settings, the data (path and SHA-256) and the base
    model's identity."""
    return canonical(
        {
            "settings": asdict(settings),
            "train": train.record(),
            "eval": None if eval_set is None else eval_set.record(),
            "base_model": base_model if base_model is not None else model_identity(settings.model),
        }
    )


@declared
def finetune(
    model: str,
    train: PathArg | TrainingSet,
    out_dir: PathArg,
    *,
    eval_path: PathArg | TrainingSet | None = None,
    learning_rate: float | None = None,
    epochs: float = 3.0,
    batch_size: int = 32,
    max_length: int = 128,
    max_steps: int = -1,
    save_steps: int = 500,
    seed: int = 42,
    lr_scheduler: str = "linear",
    warmup_steps: int = 0,
    warmup_ratio: float = 0.0,
    split: str = "train",
    eval_split: str = "validation",
    force: bool = False,
    progress: bool = True,
    callbacks: Sequence[Any] = (),
) -> FinetuneRecord:
    """Fine-tune ``model`` on an NLI training set into ``out_dir``, as ``nlibias finetune`` (the
    options: :class:`TrainingOptions`); returns the record also written as ``out_dir/finetune.json``."""
    arguments = locals()
    read = {"model": model, "train": train, "eval_path": eval_path}
    where = {name: data.location if isinstance(data, TrainingSet) else data for name, data in read.items()}
    refuse_overwrites({"out_dir": out_dir}, where)  # a folder: every file in it may be replaced
    refuse_other_run("out_dir", out_dir, {RECORD_FILE})  # a folder of a model, not of another command's run
    chosen = TrainingOptions(**{field.name: arguments[field.name] for field in fields(TrainingOptions)})
    require_packages("fine-tuning", ["torch", "transformers", "datasets", "accelerate"])
    settings = finetune_settings(model, chosen)
    check_base_model(model, chosen.max_length)
    check_splits(train, chosen.split, eval_path, chosen.eval_split)  # before any row is read
    train_set = check_training_set(train, chosen.split, "train")
    warn_one_label(train_set)
    eval_set = None if eval_path is None else check_training_set(eval_path, chosen.eval_split, "eval_path")
    refuse_eval_is_train(train_set, eval_set)
    out = Path(out_dir).expanduser().absolute()
    inputs = finetune_inputs(settings, train_set, eval_set)
    done = _existing(out, inputs, force)
    if done is not None:
        return done
    with disk_full_named(out):  # a full disk says so and names out, not torch's write error
        resume_from, discarded = _plan(out, inputs, force)
        return _train(settings, inputs, out, resume_from, discarded, progress, callbacks)


def finetune_settings(model: str, options: TrainingOptions) -> FinetuneSettings:
    """The settings of a fine-tune, every option checked (:func:`check_options`) before any work."""
    import torch

    rate = default_learning_rate(model) if options.learning_rate is None else options.learning_rate
    chosen = asdict(replace(options, learning_rate=rate))
    check_options(**chosen)
    bf16 = bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    return FinetuneSettings(**{**chosen, "learning_rate": float(rate)}, model=model, bf16=bf16)


def _train(
    settings: FinetuneSettings,
    inputs: dict[str, Any],
    out: Path,
    resume_from: str | None,
    discarded: list[str],
    progress: bool,
    callbacks: Sequence[Any],
) -> FinetuneRecord:
    from transformers import DataCollatorWithPadding, PrinterCallback, ProgressCallback, Trainer

    tokenizer, classifier, label_ids = _load_model(settings.model)
    check_max_length(settings.max_length, classifier.config, tokenizer, settings.model)
    finished = final_step(resume_from)
    if finished is not None:  # killed after the last checkpoint: its weights are the trained model
        classifier = type(classifier).from_pretrained(resume_from)
    # a fast tokenizer saves the truncation of its last call: make that call first, so a resume
    # (data from the cache) saves what a whole run saves
    tokenizer(["premise"], ["hypothesis"], truncation=True, max_length=settings.max_length)
    cache = out / CHECKPOINTS / "data"
    tokenize = partial(
        _tokenized, tokenizer=tokenizer, max_length=settings.max_length, label_ids=label_ids, cache=cache
    )
    train_set = tokenize(inputs["train"], settings.split)
    eval_set = None if inputs["eval"] is None else tokenize(inputs["eval"], settings.eval_split)
    trainer = Trainer(
        model=classifier,
        args=_training_arguments(settings, out, progress),
        train_dataset=train_set,
        data_collator=DataCollatorWithPadding(tokenizer),
        processing_class=tokenizer,
        callbacks=list(callbacks),
    )
    trainer.remove_callback(PrinterCallback)  # it prints log dicts on stdout when the bar is off
    trainer.remove_callback(ProgressCallback)  # its log lines go to stdout too: a quiet bar instead
    shown = _progress(progress)
    if shown is not None:
        trainer.add_callback(shown)
    try:
        if finished is None:
            result = trainer.train(resume_from_checkpoint=resume_from)
        else:
            from transformers.trainer_utils import TrainOutput

            result = TrainOutput(global_step=finished, training_loss=float("nan"), metrics={})
    finally:  # a training that raised never reaches on_train_end: its line thread would print on
        if shown is not None:
            shown.stop()
    trainer.save_model(str(out))
    tokenizer.save_pretrained(str(out))
    accuracy = None if eval_set is None else _accuracy(trainer, eval_set)
    rows = (len(train_set), None if eval_set is None else len(eval_set))
    return write_record(out, settings, inputs, rows, accuracy, result, resume_from, discarded)


def _accuracy(trainer: Any, eval_set: Any) -> float:
    import numpy as np

    predictions = trainer.predict(eval_set)
    logits: Any = predictions.predictions
    if isinstance(logits, tuple):  # BART also returns its encoder states
        logits = logits[0]
    if not np.isfinite(logits).all():
        raise DataError(
            "the fine-tuned model's outputs on the evaluation set are not finite numbers (NaN or "
            "infinity): training diverged; lower learning_rate or check the data",
            field="eval_accuracy",
        )
    return float((logits.argmax(-1) == predictions.label_ids).mean())
