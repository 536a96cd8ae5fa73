"""``nlibias finetune``: fine-tune a Hugging Face classifier on an NLI training set (paper 004 defaults)."""

from __future__ import annotations

from pathlib import Path

import typer

from nlibias.cli.app import app, echo_json
from nlibias.cli.options import Json, Quiet, show_progress


@app.command("finetune")
def finetune_command(
    model: str = typer.Option(
        ..., "--model", help="Hub name or directory of the model to fine-tune (e.g. bert-base-uncased)."
    ),
    train: str = typer.Option(
        ...,
        "--train",
        help="Training set: an `nlibias augment` directory, a .jsonl/.csv/.tsv/.parquet file, a `datasets` dir or hub name.",
    ),
    out: Path = typer.Option(
        ..., "--out", help="Model directory to write (`nlibias audit --model OUT` takes it)."
    ),
    eval_path: str | None = typer.Option(
        None, "--eval", help="Evaluation set (same formats) for the accuracy."
    ),
    learning_rate: float | None = typer.Option(
        None, "--learning-rate", help="Default: 1e-5 for RoBERTa, 2e-5 otherwise (paper 004)."
    ),
    epochs: float = typer.Option(3.0, "--epochs"),
    batch_size: int = typer.Option(32, "--batch-size"),
    max_length: int = typer.Option(
        128, "--max-length", help="Tokens per premise-hypothesis pair (longer pairs are truncated)."
    ),
    max_steps: int = typer.Option(-1, "--max-steps", help="Stop after this many steps (-1: all epochs)."),
    save_steps: int = typer.Option(
        500, "--save-steps", help="Checkpoint every N steps (a killed run resumes from the last)."
    ),
    seed: int = typer.Option(42, "--seed", help="Seed of the new head's initialisation and the data order."),
    lr_scheduler: str = typer.Option(
        "linear", "--lr-scheduler", help="linear, cosine, constant, constant_with_warmup or polynomial."
    ),
    warmup_steps: int = typer.Option(0, "--warmup-steps", help="Steps of linear warm-up."),
    warmup_ratio: float = typer.Option(
        0.0, "--warmup-ratio", help="Warm-up as a fraction of all steps (instead of --warmup-steps)."
    ),
    force: bool = typer.Option(
        False, "--force", help="OUT holds a fine-tune with other settings or data: train again there."
    ),
    split: str = typer.Option("train", "--split", help="Split of a `datasets` training set."),
    eval_split: str = typer.Option(
        "validation", "--eval-split", help="Split of a `datasets` evaluation set."
    ),
    quiet: Quiet = False,
    as_json: Json = False,
) -> None:
    """Fine-tune a sequence classifier with the Hugging Face Trainer; rerun to resume after a kill."""
    from nlibias.debias.finetune import finetune
    from nlibias.debias.finetune_record import format_record

    record = finetune(
        model,
        train,
        out,
        eval_path=eval_path,
        learning_rate=learning_rate,
        epochs=epochs,
        batch_size=batch_size,
        max_length=max_length,
        max_steps=max_steps,
        save_steps=save_steps,
        seed=seed,
        lr_scheduler=lr_scheduler,
        warmup_steps=warmup_steps,
        warmup_ratio=warmup_ratio,
        split=split,
        eval_split=eval_split,
        force=force,
        progress=show_progress(quiet, as_json),
    )
    if as_json:
        echo_json(record)
    else:
        typer.echo(format_record(record))
