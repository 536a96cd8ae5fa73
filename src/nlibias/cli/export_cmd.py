"""``nlibias export``: samples as an lm-evaluation-harness task (docs/integrations.md); a run as model-card metadata."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import typer

from nlibias.cli.app import app, echo_json
from nlibias.cli.options import Json, OptionalOut, OptionScore, Out, Quiet, Samples

if TYPE_CHECKING:
    from nlibias.models.generative.defaults import OptionScore as OptionScoreName

export_app = typer.Typer(
    help="Write samples as another evaluation tool's task (lm-eval; docs/integrations.md) or a run as model-card metadata (model-index).",
    no_args_is_help=True,
)
app.add_typer(export_app, name="export")


@export_app.command("lm-eval")
def export_lm_eval_command(
    samples: Samples,
    out: Out,
    prompt: str | None = typer.Option(
        None,
        "--prompt",
        help="Prompt style: true (the default), entailed, BBQ's race (its default) or arc, or a prompt file.",
    ),
    model: str = typer.Option(
        "smollm2",
        "--model",
        help="Local causal LM whose chat template and answer spellings the prompts are written for "
        "(smollm2, hf:PATH or a model directory).",
    ),
    task: str | None = typer.Option(None, "--task", help="Task name (default nlibias_SOURCE_PROMPT)."),
    device: str = typer.Option("cpu", "--device", help="Where the model loads to read its tokenizer."),
    option_score: OptionScore = "total",
    quiet: Quiet = False,  # nothing to hide: taken as every printing command takes it
    as_json: Json = False,
) -> None:
    """Write an lm-eval task that asks the model what a scored nlibias audit asks it: yes/no
    log-likelihoods, or each option's for BBQ (--out: the task's YAML, data, run_lm_eval.sh, README)."""
    from nlibias.integrations.lm_eval import RUN_SCRIPT, export_lm_eval

    score = cast("OptionScoreName", option_score)  # its value is checked by export_lm_eval's declaration
    result = export_lm_eval(
        samples, out, prompt=prompt, model=model, task=task, device=device, option_score=score
    )
    if as_json:
        echo_json(result.__dict__)
        return
    chat = "with the model's chat template" if result.chat_template else "plain (no chat template)"
    spellings = ", ".join(f"{word}: {'|'.join(map(repr, texts))}" for word, texts in result.spellings.items())
    typer.echo(f"wrote task {result.task} ({result.n_docs} documents, prompts {chat}) to {result.out_dir}")
    if spellings:
        typer.echo(f"choices: {spellings}")
    typer.echo(f"run: bash {result.out_dir / RUN_SCRIPT} --output_path OUT   (that is: {result.command})")


@export_app.command("model-index")
def export_model_index_command(
    run: Path = typer.Argument(..., help="Run directory (nlibias audit / score)."),
    out: OptionalOut = None,
    card: Path | None = typer.Option(
        None, "--card", help="Update this model card's (README.md) metadata block in place; the rest is kept."
    ),
    model: str | None = typer.Option(
        None,
        "--model",
        help="Only this model of the run (needed for a run of several: a card describes one).",
    ),
    name: str | None = typer.Option(
        None,
        "--name",
        help="The model's name on the Hub (default: the card's, else the name the run recorded).",
    ),
    quiet: Quiet = False,  # nothing to hide: taken as every printing command takes it
    as_json: Json = False,
) -> None:
    """Write a run's headline measures and accuracy as Hugging Face model-card metadata (model-index)."""
    from nlibias.jobs.model_index import export_model_index

    result = export_model_index(run, out=out, card=card, model=model, name=name)
    if as_json:
        echo_json(result.to_dict())
        return
    if result.card is not None:
        through = "" if result.card_file == result.card else f" (through the link, in {result.card_file})"
        typer.echo(f"updated the model-index of {result.card}{through}")
    if result.out is not None:
        typer.echo(f"wrote {result.out}")
    if result.card is None and result.out is None:
        typer.echo(result.text, nl=False)
