"""``nlibias finetune``: fine-tune a Hugging Face classifier on an NLI training set (paper 004 defaults)."""

from __future__ import annotations

from nlibias.cli import options
from nlibias.cli.app import app
from nlibias.debias.finetune_record import TRAINING_DEFAULTS


@app.command("finetune")
def finetune_command(
    model: options.Model,
    train: options.Train,
    out_dir: options.Out,
    eval_path: options.Eval = None,
    learning_rate: options.LearningRate = TRAINING_DEFAULTS.learning_rate,
    epochs: options.Epochs = TRAINING_DEFAULTS.epochs,
    batch_size: options.BatchSize = TRAINING_DEFAULTS.batch_size,
    max_length: options.MaxLength = TRAINING_DEFAULTS.max_length,
    max_steps: options.MaxSteps = TRAINING_DEFAULTS.max_steps,
    save_steps: options.SaveSteps = TRAINING_DEFAULTS.save_steps,
    seed: options.Seed = TRAINING_DEFAULTS.seed,
    lr_scheduler: options.LrScheduler = TRAINING_DEFAULTS.lr_scheduler,
    warmup_steps: options.WarmupSteps = TRAINING_DEFAULTS.warmup_steps,
    warmup_ratio: options.WarmupRatio = TRAINING_DEFAULTS.warmup_ratio,
    force: options.Force = False,
    split: options.Split = TRAINING_DEFAULTS.split,
    eval_split: options.EvalSplit = TRAINING_DEFAULTS.eval_split,
    quiet: options.Quiet = False,
    as_json: options.Json = False,
) -> None:
    """Fine-tune a sequence classifier with the Hugging Face Trainer into --out (a model directory
    `nlibias audit --model OUT` takes); rerun to resume after a kill."""
    given = locals()
    from nlibias.debias.finetune import finetune
    from nlibias.debias.finetune_record import format_record

    options.run_and_print(finetune, given, format_record)
