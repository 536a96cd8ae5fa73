"""The flags ``finetune``, ``augment`` and ``debias`` share, defined once (as :mod:`nlibias.cli.options`;
training help: the :class:`~nlibias.debias.finetune_record.TrainingOptions` field's documentation)."""

from __future__ import annotations

from typing import Annotated

import typer

from nlibias.cli.options import documented
from nlibias.debias.finetune_record import TrainingOptions

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
Split = Annotated[str, documented(TrainingOptions, "split")]
EvalSplit = Annotated[str, documented(TrainingOptions, "eval_split")]

# --- fine-tuning ---------------------------------------------------------------------------------

_MODEL = typer.Option(
    "--model",
    help="Hub name or directory of the model to fine-tune (e.g. bert-base-uncased); debias takes several "
    "(repeatable).",
)
Model = Annotated[str, _MODEL]
Models = Annotated[list[str], _MODEL]
LearningRate = Annotated[float | None, documented(TrainingOptions, "learning_rate")]
Epochs = Annotated[float, documented(TrainingOptions, "epochs")]
BatchSize = Annotated[int, documented(TrainingOptions, "batch_size")]
MaxLength = Annotated[int, documented(TrainingOptions, "max_length")]
MaxSteps = Annotated[int, documented(TrainingOptions, "max_steps")]
SaveSteps = Annotated[int, documented(TrainingOptions, "save_steps")]
LrScheduler = Annotated[str, documented(TrainingOptions, "lr_scheduler")]
WarmupSteps = Annotated[int, documented(TrainingOptions, "warmup_steps")]
WarmupRatio = Annotated[float, documented(TrainingOptions, "warmup_ratio")]

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
