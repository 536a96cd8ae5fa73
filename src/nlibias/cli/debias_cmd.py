"""Paper 004's debiasing (docs/debiasing.md) a step at a time, ``nlibias augment gender-swap`` (an NLI
training set plus its gender-swapped copies) and ``nlibias finetune`` (a classifier fine-tuned
with the paper's defaults), or in one command, ``nlibias debias`` (augment, fine-tune before and
after, audit, compare)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from nlibias.cli import options
from nlibias.cli.app import PLAIN_HELP, app, echo_json
from nlibias.debias.finetune_record import TRAINING_DEFAULTS, TrainingOptions

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


Premises = Annotated[
    Path | None, typer.Option("--premises", help="Occupation premises (default: the shipped ones).")
]
Seeds = Annotated[
    int,
    typer.Option(
        "--seeds", help="Fine-tune each model N times (seeds SEED, SEED+1, ...); tables show the spread."
    ),
]
MinEffect = Annotated[
    float,
    typer.Option(
        "--min-effect",
        help="Smallest change in points marked as a change (its paired interval must also exclude 0).",
    ),
]


def _augment_options(
    select: str, match: str, word_list: str, her: str, her_model: str | None
) -> dict[str, object]:
    """``run_debias``'s ``augment_options``; ``her`` only when it is not the default."""
    chosen: dict[str, object] = {"select": select, "match": match, "word_list": word_list}
    if her != "rule" or her_model is not None:  # the default stays out of the recorded options
        chosen["her"] = her
    if her_model is not None:
        chosen["her_model"] = her_model
    return chosen


def _audit_options(device: str | None, no_cache: bool) -> dict[str, object]:
    """``run_debias``'s ``audit_options``: only what was given."""
    chosen: dict[str, object] = {"device": device} if device else {}
    if no_cache:
        chosen["cache"] = False
    return chosen


@app.command("debias")
@options.with_fields(TrainingOptions, after="her_model", skip=["seed", "split", "eval_split"])
def debias_command(
    model: options.Models,
    train: options.Train,
    out: options.Out,
    eval_path: options.Eval = None,
    premises: Premises = None,
    select: options.Select = "occupation",
    match: options.Match = "words",
    word_list: options.WordList = "winobias",
    her: options.Her = "rule",
    her_model: options.HerModel = None,
    seed: options.Seed = TRAINING_DEFAULTS.seed,
    seeds: Seeds = 1,
    force: options.Force = False,
    device: options.Device = None,
    no_cache: options.NoCache = False,
    bootstrap: options.Bootstrap = 1000,
    min_effect: MinEffect = 1.0,
    quiet: options.Quiet = False,
    as_json: options.Json = False,
    **training: Any,
) -> None:
    """Run paper 004's debiasing experiment: augment → fine-tune (original, augmented) → audit → compare.

    --out holds every step's output (rerun to resume); --seed is the seed of the first fine-tune of
    each model; --device and --no-cache apply to the audit."""
    from nlibias.jobs.debias import run_debias
    from nlibias.jobs.debias_compare import COMPARISON_JSON
    from nlibias.report.debias_tables import format_debias_tables

    result = run_debias(
        model,
        train,
        out,
        eval_path=eval_path,
        premises=premises,
        augment_options=_augment_options(select, match, word_list, her, her_model),
        finetune_options=training,
        audit_options=_audit_options(device, no_cache),
        bootstrap=bootstrap,
        seed=seed,
        seeds=seeds,
        force=force,
        progress=options.show_progress(quiet, as_json),
        min_effect=min_effect,
    )
    if as_json:
        echo_json({"comparison": result.comparison, "ran": result.ran, "reused": result.reused})
        return
    if result.reused and not quiet:
        typer.echo(f"reused (inputs unchanged): {', '.join(result.reused)}", err=True)
    typer.echo(format_debias_tables(result.comparison), nl=False)
    typer.echo(f"wrote {out / 'audit' / COMPARISON_JSON}")
