"""``nlibias debias``: augment, fine-tune before and after, audit, compare (paper 004 §4) in one command."""

from __future__ import annotations

from pathlib import Path

import typer

from nlibias.cli.app import app


@app.command("debias")
def debias_command(
    model: list[str] = typer.Option(
        ..., "--model", help="Model to fine-tune (hub name or directory); repeatable."
    ),
    train: str = typer.Option(
        ..., "--train", help="Training set (what `nlibias augment gender-swap --train` takes)."
    ),
    out: Path = typer.Option(..., "--out", help="Directory for every step's output (rerun to resume)."),
    eval_path: str | None = typer.Option(None, "--eval", help="Evaluation set for the accuracy (Acc)."),
    premises: Path | None = typer.Option(
        None, "--premises", help="Occupation premises (default: the shipped ones)."
    ),
    select: str = typer.Option("occupation", "--select", help="Rows to swap: occupation or all."),
    match: str = typer.Option("words", "--match", help="Occupation matching: words or paper."),
    word_list: str = typer.Option(
        "winobias", "--word-list", help="winobias, paper or a word<TAB>counterpart file."
    ),
    her: str = typer.Option(
        "rule",
        "--her",
        help="How augment reads 'her': rule, or lm (a language model where the rule has no cue).",
    ),
    her_model: str | None = typer.Option(
        None, "--her-model", help="The language model of --her lm (default: augment's, SmolLM2)."
    ),
    epochs: float = typer.Option(3.0, "--epochs"),
    batch_size: int = typer.Option(32, "--batch-size"),
    learning_rate: float | None = typer.Option(
        None, "--learning-rate", help="Default: paper 004's per model."
    ),
    max_steps: int = typer.Option(
        -1, "--max-steps", help="Stop each fine-tune after N steps (-1: all epochs)."
    ),
    max_length: int = typer.Option(128, "--max-length", help="Tokens per premise-hypothesis pair."),
    save_steps: int = typer.Option(500, "--save-steps", help="Checkpoint every N steps."),
    lr_scheduler: str = typer.Option(
        "linear", "--lr-scheduler", help="linear, cosine, constant, constant_with_warmup or polynomial."
    ),
    warmup_steps: int = typer.Option(0, "--warmup-steps", help="Steps of linear warm-up."),
    warmup_ratio: float = typer.Option(0.0, "--warmup-ratio", help="Warm-up as a fraction of all steps."),
    seed: int = typer.Option(42, "--seed", help="Seed of the first fine-tune of each model."),
    seeds: int = typer.Option(
        1, "--seeds", help="Fine-tune each model N times (seeds SEED, SEED+1, ...); tables show the spread."
    ),
    force: bool = typer.Option(
        False, "--force", help="Redo the steps whose recorded settings or data differ (else refused)."
    ),
    device: str | None = typer.Option(
        None, "--device", help="Audit device: cpu, cuda, ... Default: GPU when present."
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Audit without the prediction cache."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the CIs."),
) -> None:
    """Run paper 004's debiasing experiment: augment → fine-tune (original, augmented) → audit → compare."""
    from nlibias.jobs.debias import run_debias
    from nlibias.jobs.debias_compare import COMPARISON_JSON
    from nlibias.report.debias_tables import format_debias_tables

    augment_options: dict[str, object] = {"select": select, "match": match, "word_list": word_list}
    if her != "rule" or her_model is not None:  # the default stays out of the recorded options
        augment_options["her"] = her
    if her_model is not None:
        augment_options["her_model"] = her_model
    audit_options: dict[str, object] = {"device": device} if device else {}
    if no_cache:
        audit_options["cache"] = False
    result = run_debias(
        model,
        train,
        out,
        eval_path=eval_path,
        premises=premises,
        augment_options=augment_options,
        finetune_options={
            "epochs": epochs, "batch_size": batch_size, "learning_rate": learning_rate, "max_steps": max_steps,
            "max_length": max_length, "save_steps": save_steps, "lr_scheduler": lr_scheduler,
            "warmup_steps": warmup_steps, "warmup_ratio": warmup_ratio,
        },
        audit_options=audit_options,
        bootstrap=bootstrap,
        seed=seed,
        seeds=seeds,
        force=force,
    )  # fmt: skip
    if result.reused:
        typer.echo(f"reused (inputs unchanged): {', '.join(result.reused)}", err=True)
    typer.echo(format_debias_tables(result.comparison), nl=False)
    typer.echo(f"wrote {out / 'audit' / COMPARISON_JSON}")
