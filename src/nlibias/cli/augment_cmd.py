"""``nlibias augment gender-swap``: an NLI training set plus its gender-swapped copies (paper 004 §4)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nlibias.cli import options
from nlibias.cli.app import PLAIN_HELP, app

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
    train: options.Train,
    out_dir: options.Out,
    select: options.Select = "occupation",
    match: options.Match = "words",
    word_list: options.WordList = "winobias",
    names: Names = None,
    split: options.Split = "train",
    her: options.Her = "rule",
    her_model: options.HerModel = None,
    quiet: options.Quiet = False,
    as_json: options.Json = False,
) -> None:
    """Append gender-swapped copies of the selected rows to a training set (--out: train.jsonl and
    augment_summary.json); print the summary."""
    given = locals()
    from nlibias.debias.augment import augment_gender_swap, format_summary

    options.run_and_print(augment_gender_swap, given, format_summary)
