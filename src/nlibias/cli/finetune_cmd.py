"""``nlibias finetune``: fine-tune a Hugging Face classifier on an NLI training set (paper 004 defaults)."""

from __future__ import annotations

from typing import Annotated

import typer

from nlibias.cli.app import app, echo_json
from nlibias.cli.options import Force, Json, Out, Quiet, Seed, show_progress
from nlibias.cli.training_options import (
    BatchSize,
    Epochs,
    Eval,
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


@app.command("finetune")
def finetune_command(
    model: Model,
    train: Train,
    out: Out,
    eval_path: Eval = None,
    learning_rate: LearningRate = None,
    epochs: Epochs = 3.0,
    batch_size: BatchSize = 32,
    max_length: MaxLength = 128,
    max_steps: MaxSteps = -1,
    save_steps: SaveSteps = 500,
    seed: Seed = 42,
    lr_scheduler: LrScheduler = "linear",
    warmup_steps: WarmupSteps = 0,
    warmup_ratio: WarmupRatio = 0.0,
    force: Force = False,
    split: Split = "train",
    eval_split: Annotated[
        str, typer.Option("--eval-split", help="Split of a `datasets` evaluation set.")
    ] = "validation",
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
