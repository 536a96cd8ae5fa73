"""``nlibias report``: one self-contained HTML report, paper tables, or a side-by-side comparison."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from nlibias.cli.app import app, echo_json, echo_text_or_path, warn
from nlibias.cli.options import Json, Quiet

if TYPE_CHECKING:
    from nlibias.jobs.report import ReportResult


@app.command("report")
def report_command(
    runs: list[Path] = typer.Argument(
        ..., help="Run directories of `nlibias audit` / `score` / `extend` (several: side by side)."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Output file. HTML default: <first run>/report.html; with --format or --debias: stdout unless "
        "given.",
    ),
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
