"""``nlibias augment gender-swap``: an NLI training set plus its gender-swapped copies (paper 004 §4)."""

from __future__ import annotations

from pathlib import Path

import typer

from nlibias.cli.app import PLAIN_HELP, app, echo_json
from nlibias.cli.options import Json, Quiet, show_progress

augment_app = typer.Typer(
    help="Augment an NLI training set for debiasing.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=PLAIN_HELP,
)
app.add_typer(augment_app, name="augment")


@augment_app.command("gender-swap")
def gender_swap_command(
    train: str = typer.Option(
        ...,
        "--train",
        help="Training set: a .jsonl/.csv/.tsv/.parquet file with premise, hypothesis, label (SNLI's "
        "sentence1/sentence2/gold_label work too), a saved `datasets` directory, or a hub name (NAME[:CONFIG]).",
    ),
    out: Path = typer.Option(
        ..., "--out", help="Directory to write train.jsonl and augment_summary.json into."
    ),
    select: str = typer.Option(
        "occupation",
        "--select",
        help="occupation: rows whose premise names one of the 38 occupations; all: every row.",
    ),
    match: str = typer.Option(
        "words",
        "--match",
        help="Occupation matching: words (punctuation, plurals, two-word names) or paper (paper 004's code).",
    ),
    word_list: str = typer.Option(
        "winobias",
        "--word-list",
        help="winobias (default), paper (paper 004's 19-entry map) or a word<TAB>counterpart file.",
    ),
    names: Path | None = typer.Option(
        None, "--names", help="Also swap first names: a file of name<TAB>name pairs."
    ),
    split: str = typer.Option("train", "--split", help="Split of a `datasets` set or hub dataset."),
    her: str = typer.Option(
        "rule",
        "--her",
        help="Who reads 'her' as 'him' or 'his': rule (fast, default) or lm (a language model reads "
        "each 'her' the rule has no cue for, by the log-probability of both swapped sentences).",
    ),
    her_model: str | None = typer.Option(
        None,
        "--her-model",
        help="The language model of --her lm: smollm2 (embedded, the default), a causal LM (.gguf, "
        "directory, hub name) or mlm:NAME for a masked LM.",
    ),
    quiet: Quiet = False,
    as_json: Json = False,
) -> None:
    """Append gender-swapped copies of the selected rows to a training set; print the summary."""
    from nlibias.debias.augment import augment_gender_swap, format_summary

    summary = augment_gender_swap(
        train,
        out,
        select=select,
        match=match,
        word_list=word_list,
        names=names,
        split=split,
        her=her,
        her_model=her_model,
        progress=show_progress(quiet, as_json),
    )
    if as_json:
        echo_json(summary)
    else:
        typer.echo(format_summary(summary))
