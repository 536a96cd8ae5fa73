"""``nlibias augment gender-swap``: an NLI training set plus its gender-swapped copies (paper 004 §4)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nlibias.cli.app import PLAIN_HELP, app, echo_json
from nlibias.cli.options import Json, Out, Quiet, show_progress
from nlibias.cli.training_options import Her, HerModel, Match, Select, Split, Train, WordList

augment_app = typer.Typer(
    help="Augment an NLI training set for debiasing.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=PLAIN_HELP,
)
app.add_typer(augment_app, name="augment")

Names = Annotated[
    Path | None, typer.Option("--names", help="Also swap first names: a file of name<TAB>name pairs.")
]


@augment_app.command("gender-swap")
def gender_swap_command(
    train: Train,
    out: Out,
    select: Select = "occupation",
    match: Match = "words",
    word_list: WordList = "winobias",
    names: Names = None,
    split: Split = "train",
    her: Her = "rule",
    her_model: HerModel = None,
    quiet: Quiet = False,
    as_json: Json = False,
) -> None:
    """Append gender-swapped copies of the selected rows to a training set (--out: train.jsonl and
    augment_summary.json); print the summary."""
    from nlibias.debias.augment import augment_gender_swap, format_summary

    summary = augment_gender_swap(
        train, out, select=select, match=match, word_list=word_list, names=names, split=split, her=her,
        her_model=her_model, progress=show_progress(quiet, as_json),
    )  # fmt: skip
    if as_json:
        echo_json(summary)
    else:
        typer.echo(format_summary(summary))
