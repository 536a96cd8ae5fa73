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
    epochs: float = typer.Option(3.0, "--epochs"),
    batch_size: int = typer.Option(32, "--batch-size"),
    learning_rate: float | None = typer.Option(
        None, "--learning-rate", help="Default: paper 004's per model."
    ),
    max_steps: int = typer.Option(
        -1, "--max-steps", help="Stop each fine-tune after N steps (-1: all epochs)."
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

    audit_options: dict[str, object] = {"device": device} if device else {}
    if no_cache:
        audit_options["cache"] = False
    comparison = run_debias(
        model,
        train,
        out,
        eval_path=eval_path,
        premises=premises,
        augment_options={"select": select, "match": match, "word_list": word_list},
        finetune_options={
            "epochs": epochs, "batch_size": batch_size, "learning_rate": learning_rate, "max_steps": max_steps,
        },
        audit_options=audit_options,
        bootstrap=bootstrap,
    )  # fmt: skip
    typer.echo(format_debias_tables(comparison), nl=False)
    typer.echo(f"wrote {out / 'audit' / COMPARISON_JSON}")
