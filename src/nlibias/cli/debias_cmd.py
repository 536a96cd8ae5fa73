"""``nlibias debias``: augment, fine-tune before and after, audit, compare (paper 004 §4) in one command."""

from __future__ import annotations

from pathlib import Path

import typer

from nlibias.cli.app import app, echo_json
from nlibias.cli.options import Json, Quiet, show_progress

_MODEL_OPT = typer.Option(..., "--model", help="Model to fine-tune (hub name or directory); repeatable.")
_TRAIN_OPT = typer.Option(
    ..., "--train", help="Training set (what `nlibias augment gender-swap --train` takes)."
)
_OUT_OPT = typer.Option(..., "--out", help="Directory for every step's output (rerun to resume).")
_EVAL_OPT = typer.Option(None, "--eval", help="Evaluation set for the accuracy (Acc).")
_PREMISES_OPT = typer.Option(None, "--premises", help="Occupation premises (default: the shipped ones).")
_SELECT_OPT = typer.Option("occupation", "--select", help="Rows to swap: occupation or all.")
_MATCH_OPT = typer.Option("words", "--match", help="Occupation matching: words or paper.")
_WORD_LIST_OPT = typer.Option(
    "winobias", "--word-list", help="winobias, paper or a word<TAB>counterpart file."
)
_HER_OPT = typer.Option(
    "rule",
    "--her",
    help="How augment reads 'her': rule, or lm (a language model where the rule has no cue).",
)
_HER_MODEL_OPT = typer.Option(
    None, "--her-model", help="The language model of --her lm (default: augment's, SmolLM2)."
)
_EPOCHS_OPT = typer.Option(3.0, "--epochs")
_BATCH_SIZE_OPT = typer.Option(32, "--batch-size")
_LEARNING_RATE_OPT = typer.Option(None, "--learning-rate", help="Default: paper 004's per model.")
_MAX_STEPS_OPT = typer.Option(-1, "--max-steps", help="Stop each fine-tune after N steps (-1: all epochs).")
_MAX_LENGTH_OPT = typer.Option(128, "--max-length", help="Tokens per premise-hypothesis pair.")
_SAVE_STEPS_OPT = typer.Option(500, "--save-steps", help="Checkpoint every N steps.")
_LR_SCHEDULER_OPT = typer.Option(
    "linear", "--lr-scheduler", help="linear, cosine, constant, constant_with_warmup or polynomial."
)
_WARMUP_STEPS_OPT = typer.Option(0, "--warmup-steps", help="Steps of linear warm-up.")
_WARMUP_RATIO_OPT = typer.Option(0.0, "--warmup-ratio", help="Warm-up as a fraction of all steps.")
_SEED_OPT = typer.Option(42, "--seed", help="Seed of the first fine-tune of each model.")
_SEEDS_OPT = typer.Option(
    1, "--seeds", help="Fine-tune each model N times (seeds SEED, SEED+1, ...); tables show the spread."
)
_FORCE_OPT = typer.Option(
    False, "--force", help="Redo the steps whose recorded settings or data differ (else refused)."
)
_DEVICE_OPT = typer.Option(None, "--device", help="Audit device: cpu, cuda, ... Default: GPU when present.")
_NO_CACHE_OPT = typer.Option(False, "--no-cache", help="Audit without the prediction cache.")
_BOOTSTRAP_OPT = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the CIs.")


def _augment_options(
    select: str, match: str, word_list: str, her: str, her_model: str | None
) -> dict[str, object]:
    """``run_debias``'s ``augment_options``; ``her`` only when it is not the default."""
    options: dict[str, object] = {"select": select, "match": match, "word_list": word_list}
    if her != "rule" or her_model is not None:  # the default stays out of the recorded options
        options["her"] = her
    if her_model is not None:
        options["her_model"] = her_model
    return options


def _audit_options(device: str | None, no_cache: bool) -> dict[str, object]:
    """``run_debias``'s ``audit_options``: only what was given."""
    options: dict[str, object] = {"device": device} if device else {}
    if no_cache:
        options["cache"] = False
    return options


@app.command("debias")
def debias_command(
    model: list[str] = _MODEL_OPT,
    train: str = _TRAIN_OPT,
    out: Path = _OUT_OPT,
    eval_path: str | None = _EVAL_OPT,
    premises: Path | None = _PREMISES_OPT,
    select: str = _SELECT_OPT,
    match: str = _MATCH_OPT,
    word_list: str = _WORD_LIST_OPT,
    her: str = _HER_OPT,
    her_model: str | None = _HER_MODEL_OPT,
    epochs: float = _EPOCHS_OPT,
    batch_size: int = _BATCH_SIZE_OPT,
    learning_rate: float | None = _LEARNING_RATE_OPT,
    max_steps: int = _MAX_STEPS_OPT,
    max_length: int = _MAX_LENGTH_OPT,
    save_steps: int = _SAVE_STEPS_OPT,
    lr_scheduler: str = _LR_SCHEDULER_OPT,
    warmup_steps: int = _WARMUP_STEPS_OPT,
    warmup_ratio: float = _WARMUP_RATIO_OPT,
    seed: int = _SEED_OPT,
    seeds: int = _SEEDS_OPT,
    force: bool = _FORCE_OPT,
    device: str | None = _DEVICE_OPT,
    no_cache: bool = _NO_CACHE_OPT,
    bootstrap: int = _BOOTSTRAP_OPT,
    min_effect: float = typer.Option(
        1.0,
        "--min-effect",
        help="Smallest change in points marked as a change (its paired interval must also exclude 0).",
    ),
    quiet: Quiet = False,
    as_json: Json = False,
) -> None:
    """Run paper 004's debiasing experiment: augment → fine-tune (original, augmented) → audit → compare."""
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
        finetune_options={
            "epochs": epochs, "batch_size": batch_size, "learning_rate": learning_rate, "max_steps": max_steps,
            "max_length": max_length, "save_steps": save_steps, "lr_scheduler": lr_scheduler,
            "warmup_steps": warmup_steps, "warmup_ratio": warmup_ratio,
        },
        audit_options=_audit_options(device, no_cache),
        bootstrap=bootstrap,
        seed=seed,
        seeds=seeds,
        force=force,
        progress=show_progress(quiet, as_json),
        min_effect=min_effect,
    )  # fmt: skip
    if as_json:
        echo_json({"comparison": result.comparison, "ran": result.ran, "reused": result.reused})
        return
    if result.reused and not quiet:
        typer.echo(f"reused (inputs unchanged): {', '.join(result.reused)}", err=True)
    typer.echo(format_debias_tables(result.comparison), nl=False)
    typer.echo(f"wrote {out / 'audit' / COMPARISON_JSON}")
