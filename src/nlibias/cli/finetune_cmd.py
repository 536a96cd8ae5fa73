"""``nlibias finetune``: fine-tune a Hugging Face classifier on an NLI training set (paper 004 defaults)."""

from __future__ import annotations

from typing import Any

from nlibias.cli import options
from nlibias.cli.app import app
from nlibias.debias.finetune_record import TRAINING_DEFAULTS, TrainingOptions


@app.command("finetune")
@options.with_fields(TrainingOptions, after="eval_path", skip=["seed"])
def finetune_command(
    model: options.Model,
    train: options.Train,
    out_dir: options.Out,
    eval_path: options.Eval = None,
    seed: options.Seed = TRAINING_DEFAULTS.seed,
    force: options.Force = False,
    quiet: options.Quiet = False,
    as_json: options.Json = False,
    **training: Any,
) -> None:
    """Fine-tune a sequence classifier with the Hugging Face Trainer into --out (a model directory
    `nlibias audit --model OUT` takes); rerun to resume after a kill."""
    given = locals()
    given |= given.pop("training")
    from nlibias.debias.finetune import finetune
    from nlibias.debias.finetune_record import format_record

    options.run_and_print(finetune, given, format_record)
