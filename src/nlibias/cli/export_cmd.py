"""``nlibias export lm-eval``: samples as an lm-evaluation-harness task (docs/integrations.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from nlibias.cli.app import app, echo_json

export_app = typer.Typer(
    help="Write samples as another evaluation tool's task (lm-eval); see docs/integrations.md.",
    no_args_is_help=True,
)
app.add_typer(export_app, name="export")


@export_app.command("lm-eval")
def export_lm_eval_command(
    samples: Path = typer.Option(..., "--samples", help="Run directory or samples file (nlibias expand)."),
    out: Path = typer.Option(
        ..., "--out", help="Task directory to write (YAML, data, run_lm_eval.sh, README)."
    ),
    prompt: str = typer.Option("true", "--prompt", help="Prompt style: true, entailed, or a prompt file."),
    model: str = typer.Option(
        "smollm2",
        "--model",
        help="Local causal LM whose chat template and answer spellings the prompts are written for "
        "(smollm2, hf:PATH or a model directory).",
    ),
    task: str | None = typer.Option(None, "--task", help="Task name (default nlibias_SOURCE_PROMPT)."),
    device: str = typer.Option("cpu", "--device", help="Where the model loads to read its tokenizer."),
    as_json: bool = typer.Option(False, "--json", help="Print the export summary as JSON."),
) -> None:
    """Write an lm-eval task that asks the model what nlibias asks it, as yes/no log-likelihoods."""
    from nlibias.integrations.lm_eval import RUN_SCRIPT, export_lm_eval

    result = export_lm_eval(samples, out, prompt=prompt, model=model, task=task, device=device)
    if as_json:
        echo_json(result.__dict__)
        return
    chat = "with the model's chat template" if result.chat_template else "plain (no chat template)"
    spellings = ", ".join(f"{word}: {'|'.join(map(repr, texts))}" for word, texts in result.spellings.items())
    typer.echo(f"wrote task {result.task} ({result.n_docs} documents, prompts {chat}) to {result.out_dir}")
    typer.echo(f"choices: {spellings}")
    typer.echo(f"run: bash {result.out_dir / RUN_SCRIPT} --output_path OUT   (that is: {result.command})")
