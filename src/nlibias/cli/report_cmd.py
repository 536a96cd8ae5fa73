"""What is made of finished runs: ``nlibias report`` (one self-contained HTML report, paper tables,
or a side-by-side comparison); ``nlibias gate`` (fail a CI job when a candidate model got more
biased than the baseline, docs/gates.md; exit codes: 0 passed, 1 failed, 2 bad input,
:mod:`nlibias.cli.app`); ``nlibias export`` (samples as an lm-evaluation-harness task,
docs/integrations.md; a run as model-card metadata)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
import typer.exceptions
from typer.core import TyperCommand

from nlibias.cli.app import app, echo_json, echo_text_or_path, warn
from nlibias.cli.options import AuditedSamples, Json, OptionalOut, OptionScore, Out, Quiet, Samples
from nlibias.errors import NlibiasError
from nlibias.schema.paths import OutFile

if TYPE_CHECKING:
    from nlibias.jobs.report import ReportResult
    from nlibias.models.generative.defaults import OptionScore as OptionScoreName


@app.command("report")
def report_command(
    runs: list[Path] = typer.Argument(
        ..., help="Run directories of `nlibias audit` / `score` / `extend` (several: side by side)."
    ),
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Output file. HTML default: <first run>/report.html; with --format or --debias: stdout "
            "unless given.",
        ),
        OutFile,
    ] = None,
    fmt: str | None = typer.Option(
        None,
        "--format",
        help="Print paper tables instead of HTML: md, latex or csv (not with --debias: its tables are text).",
    ),
    compare: bool = typer.Option(
        False,
        "--compare",
        help="Side by side; runs over the same samples get paired differences with intervals (the gate's "
        "test), others are marked where their intervals do not overlap.",
    ),
    no_plots: bool = typer.Option(False, "--no-plots", help="HTML without figures (no matplotlib needed)."),
    debias: bool = typer.Option(
        False,
        "--debias",
        help="Before/after debiasing tables of an occupation audit (paper 004 Tables 5-7), differences "
        "with paired bootstrap CIs; pairs found from the models' finetune.json unless --pair is given.",
    ),
    pair: list[str] = typer.Option(
        [], "--pair", help="BEFORE=AFTER model keys of the run for --debias (repeatable)."
    ),
    quiet: Quiet = False,
    as_json: Json = False,
) -> None:
    """Write an HTML report (default) or print paper-layout tables (--format).

    --json prints what was done as JSON: the file written (HTML: its sections, caveats and figures),
    the tables' text (--format without --out), or the before/after comparison (--debias) and the
    files written."""
    from nlibias.jobs.debias_compare import COMPARISON_JSON
    from nlibias.jobs.report import make_report

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = make_report(
            runs, out, fmt=fmt, compare=compare, plots=not no_plots, debias=debias, pairs=pair
        )
    for caught_warning in caught:  # e.g. a run directory written before manifests
        warn(str(caught_warning.message))
    if as_json:
        echo_json(result.to_dict())
    elif result.kind == "tables":
        echo_text_or_path(result.text, result.out)
    elif result.kind == "html":
        _print_html(result, quiet=quiet)
    else:
        echo_text_or_path(result.text, result.tables_out)
        if result.out is not None:
            typer.echo(f"wrote {result.out}")
        else:
            warn(f"kept {runs[0] / COMPARISON_JSON}: it holds pairs or accuracies this comparison lacks")


def _print_html(result: ReportResult, *, quiet: bool) -> None:
    """The HTML report written, and what it holds."""
    typer.echo(f"wrote {result.out} ({', '.join(result.sections)})")
    if quiet:
        return
    if result.caveats:
        typer.echo(f"caveats at the top of the report: {', '.join(result.caveats)}")
    if result.figures is not None:
        typer.echo(f"figures (PNG and SVG): {result.figures}")


EXIT_FAILED = 1


def _values(args: list[str], *flags: str) -> dict[str, str]:
    """The last value given to each of ``flags`` (``--flag VALUE`` or ``--flag=VALUE``) in ``args``."""
    found: dict[str, str] = {}
    for i, arg in enumerate(args):
        flag, sep, value = arg.partition("=")
        if flag in flags and (sep or i + 1 < len(args)):
            found[flag] = value if sep else args[i + 1]
    return found


class _GateCommand(TyperCommand):
    """A command line Typer refuses (a bad number, a missing argument) still leaves the CI files
    saying why nothing was decided, as every other exit 2 does (docs/gates.md)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        given = list(args)  # the parser consumes the list it is given
        try:
            return super().parse_args(ctx, args)
        except typer.exceptions.TyperException as error:
            self.command_line_refused(given, error)
            raise

    @staticmethod
    def command_line_refused(args: list[str], error: typer.exceptions.TyperException) -> None:
        _write_refusal_files(args, error)


def _write_refusal_files(args: list[str], error: typer.exceptions.TyperException) -> None:
    from nlibias.jobs.gate_output import refuse_gate_overwrites, write_gate_error_files

    given = _values(args, "--junit", "--markdown", "--baseline", "--rules", "--samples")
    if "--junit" not in given and "--markdown" not in given:
        return
    # the candidate is the first argument that is not an option or an option's value
    values = set(given.values())
    candidate = next((a for a in args if not a.startswith("-") and a not in values), None)
    try:  # never write over an input, even for a command line that did not parse
        if candidate is not None:
            refuse_gate_overwrites(
                candidate,
                given.get("--baseline"),
                rules=given.get("--rules"),
                samples=given.get("--samples"),
                junit=given.get("--junit"),
                markdown=given.get("--markdown"),
            )
        message = getattr(error, "format_message", lambda: str(error))()
        write_gate_error_files(
            f"the command line was refused: {message}",
            type(error).__name__,
            junit=given.get("--junit"),
            markdown=given.get("--markdown"),
        )
    except NlibiasError:
        pass  # Typer's own message is the one to show; a file we may not write is left alone


@app.command("gate", cls=_GateCommand)
def gate_command(
    candidate: Path = typer.Argument(
        ..., help="Run directory of the candidate model(s) (nlibias audit / score)."
    ),
    baseline: Path | None = typer.Option(
        None, "--baseline", help="Run directory of the shipped model(s), over the same samples."
    ),
    pair: list[str] = typer.Option(
        [], "--pair", help="CANDIDATE_MODEL=BASELINE_MODEL for models whose keys differ (repeatable)."
    ),
    margin: float | None = typer.Option(
        None, "--margin", help="Points a measure may move away from 'no bias' before it counts (default 0)."
    ),
    rules: Path | None = typer.Option(
        None,
        "--rules",
        help="Rules file (YAML): margins, max_abs limits, slices, confidence, bootstrap, seed.",
    ),
    samples: AuditedSamples = None,
    quiet: Quiet = False,
    as_json: Json = False,
    junit: Annotated[
        Path | None,
        typer.Option("--junit", help="Write JUnit XML here (a testcase per rule and slice)."),
        OutFile,
    ] = None,
    markdown: Annotated[
        Path | None,
        typer.Option("--markdown", help="Write a Markdown summary here (CI job summary)."),
        OutFile,
    ] = None,
) -> None:
    """Exit 1 when a candidate is significantly more biased than the baseline (paired bootstrap,
    Holm over slices) or beyond an absolute limit; exit 0 when it is not; 2 on bad input."""
    from nlibias.jobs.gate import gate
    from nlibias.jobs.gate_output import (
        gate_text,
        refuse_gate_overwrites,
        write_gate_error_files,
        write_gate_files,
    )

    # first: an error file written over an input would destroy it
    refuse_gate_overwrites(candidate, baseline, rules=rules, samples=samples, junit=junit, markdown=markdown)
    try:
        result = gate(candidate, baseline, rules=rules, pairs=pair, margin=margin, samples=samples)
    except NlibiasError as error:  # nothing decided (exit 2): the CI files still say why
        write_gate_error_files(str(error), type(error).__name__, junit=junit, markdown=markdown)
        raise
    write_gate_files(result, junit=junit, markdown=markdown)
    if as_json:
        echo_json(result.to_dict())
    else:
        typer.echo(gate_text(result))
    if not result.passed:
        raise typer.Exit(code=EXIT_FAILED)


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
