"""The fine-tuning and augmentation flags ``finetune``, ``augment`` and ``debias`` share, each
defined once (annotated Typer options, as :mod:`nlibias.cli.options`): a command gives each its
default in its signature, the library's (paper 004's) defaults."""

from __future__ import annotations

from typing import Annotated

import typer

# --- the data --------------------------------------------------------------------------------------

Train = Annotated[
    str,
    typer.Option(
        "--train",
        help="Training set: a .jsonl/.csv/.tsv/.parquet file with premise, hypothesis, label (SNLI's "
        "sentence1/sentence2/gold_label work too), an `nlibias augment` directory, a saved `datasets` "
        "directory, or a hub name (NAME[:CONFIG]).",
    ),
]
Eval = Annotated[
    str | None, typer.Option("--eval", help="Evaluation set (same formats) for the accuracy (Acc).")
]
Split = Annotated[str, typer.Option("--split", help="Split of a `datasets` training set or hub dataset.")]

# --- fine-tuning ---------------------------------------------------------------------------------

_MODEL = typer.Option(
    "--model",
    help="Hub name or directory of the model to fine-tune (e.g. bert-base-uncased); debias takes several "
    "(repeatable).",
)
Model = Annotated[str, _MODEL]
Models = Annotated[list[str], _MODEL]
LearningRate = Annotated[
    float | None,
    typer.Option("--learning-rate", help="Default: 1e-5 for RoBERTa, 2e-5 otherwise (paper 004)."),
]
Epochs = Annotated[float, typer.Option("--epochs", help="Passes over the training set.")]
BatchSize = Annotated[int, typer.Option("--batch-size", help="Training pairs per step.")]
MaxLength = Annotated[
    int,
    typer.Option("--max-length", help="Tokens per premise-hypothesis pair (longer pairs are truncated)."),
]
MaxSteps = Annotated[
    int, typer.Option("--max-steps", help="Stop each fine-tune after N steps (-1: all epochs).")
]
SaveSteps = Annotated[
    int,
    typer.Option("--save-steps", help="Checkpoint every N steps (a killed run resumes from the last)."),
]
LrScheduler = Annotated[
    str,
    typer.Option("--lr-scheduler", help="linear, cosine, constant, constant_with_warmup or polynomial."),
]
WarmupSteps = Annotated[int, typer.Option("--warmup-steps", help="Steps of linear warm-up.")]
WarmupRatio = Annotated[
    float,
    typer.Option("--warmup-ratio", help="Warm-up as a fraction of all steps (instead of --warmup-steps)."),
]

# --- gender-swap augmentation ------------------------------------------------------------------------

Select = Annotated[
    str,
    typer.Option(
        "--select",
        help="Rows to swap: occupation (rows whose premise names one of the 38 occupations) or all.",
    ),
]
Match = Annotated[
    str,
    typer.Option(
        "--match",
        help="Occupation matching: words (punctuation, plurals, two-word names) or paper (paper 004's code).",
    ),
]
WordList = Annotated[
    str,
    typer.Option(
        "--word-list",
        help="winobias (default), paper (paper 004's 19-entry map) or a word<TAB>counterpart file.",
    ),
]
Her = Annotated[
    str,
    typer.Option(
        "--her",
        help="Who reads 'her' as 'him' or 'his': rule (fast, default) or lm (a language model reads "
        "each 'her' the rule has no cue for, by the log-probability of both swapped sentences).",
    ),
]
HerModel = Annotated[
    str | None,
    typer.Option(
        "--her-model",
        help="The language model of --her lm: smollm2 (embedded, the default), a causal LM (.gguf, "
        "directory, hub name) or mlm:NAME for a masked LM.",
    ),
]
