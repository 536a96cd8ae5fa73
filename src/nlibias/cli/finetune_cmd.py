"""``nlibias finetune``: fine-tune a Hugging Face classifier on an NLI training set (paper 004 defaults)."""

from __future__ import annotations

import typer

from nlibias.cli.app import app, echo_json
from nlibias.cli.options import Force, Json, Out, Quiet, Seed, show_progress
from nlibias.cli.training_options import (
    BatchSize,
    Epochs,
    Eval,
    EvalSplit,
    LearningRate,
    LrScheduler,
    MaxLength,
    MaxSteps,
    Model,
    SaveSteps,
    Split,
    Train,
    WarmupRatio,
    WarmupSteps,
)
from nlibias.debias.finetune_record import TRAINING_DEFAULTS


@app.command("finetune")
def finetune_command(
    model: Model,
    train: Train,
    out: Out,
    eval_path: Eval = None,
    learning_rate: LearningRate = TRAINING_DEFAULTS.learning_rate,
    epochs: Epochs = TRAINING_DEFAULTS.epochs,
    batch_size: BatchSize = TRAINING_DEFAULTS.batch_size,
    max_length: MaxLength = TRAINING_DEFAULTS.max_length,
    max_steps: MaxSteps = TRAINING_DEFAULTS.max_steps,
    save_steps: SaveSteps = TRAINING_DEFAULTS.save_steps,
    seed: Seed = TRAINING_DEFAULTS.seed,
    lr_scheduler: LrScheduler = TRAINING_DEFAULTS.lr_scheduler,
    warmup_steps: WarmupSteps = TRAINING_DEFAULTS.warmup_steps,
    warmup_ratio: WarmupRatio = TRAINING_DEFAULTS.warmup_ratio,
    force: Force = False,
    split: Split = TRAINING_DEFAULTS.split,
    eval_split: EvalSplit = TRAINING_DEFAULTS.eval_split,
    quiet: Quiet = False,
    as_json: Json = False,
) -> None:
    """Fine-tune a sequence classifier with the Hugging Face Trainer into --out (a model directory
    `nlibias audit --model OUT` takes); rerun to resume after a kill."""
    from nlibias.debias.finetune import finetune
    from nlibias.debias.finetune_record import format_record

    record = finetune(
        model, train, out, eval_path=eval_path, learning_rate=learning_rate, epochs=epochs,
        batch_size=batch_size, max_length=max_length, max_steps=max_steps, save_steps=save_steps,
        seed=seed, lr_scheduler=lr_scheduler, warmup_steps=warmup_steps, warmup_ratio=warmup_ratio,
        split=split, eval_split=eval_split, force=force, progress=show_progress(quiet, as_json),
    )  # fmt: skip
    if as_json:
        echo_json(record)
    else:
        typer.echo(format_record(record))
