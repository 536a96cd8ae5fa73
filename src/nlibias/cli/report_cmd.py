"""``nlibias report``: one self-contained HTML report, paper tables, or a side-by-side comparison."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from nlibias.cli.app import app, echo_json, fail, warn
from nlibias.cli.options import Json, Quiet

if TYPE_CHECKING:
    from nlibias.report.load import Run


@app.command("report")
def report_command(
    runs: list[Path] = typer.Argument(
        ..., help="Run directories of `nlibias audit` / `score` / `extend` (several: side by side)."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Output file. HTML default: <first run>/report.html; with --format: stdout unless given.",
    ),
    fmt: str | None = typer.Option(
        None, "--format", help="Print paper tables instead of HTML: md, latex or csv."
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
    the tables' text (--format without --out), or the before/after comparison (--debias)."""
    if debias or pair:
        _debias_report(runs, pair, as_json)
        return
    loaded = _load_runs(runs)
    if fmt is not None:
        _print_tables(loaded, fmt, compare, out, as_json)
        return
    _write_html(loaded, out, compare, no_plots, quiet=quiet, as_json=as_json)


def _load_runs(runs: list[Path]) -> list[Run]:
    """Load the run directories; print the warnings raised while loading them as warnings."""
    from nlibias.report.load import load_runs

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = load_runs(runs)
    for caught_warning in caught:  # e.g. a run directory written before manifests
        warn(str(caught_warning.message))
    return loaded


def _tables_text(loaded: list[Run], fmt: str, compare: bool) -> str:
    """Paper tables in ``fmt``, or with ``compare`` the side-by-side comparison and the TP tables."""
    from nlibias.report.compare import compare as compare_runs
    from nlibias.report.compare import format_comparison
    from nlibias.report.paper_tables import TABLE_FORMATS, render_tables

    if fmt not in TABLE_FORMATS:
        fail(f"--format must be one of {', '.join(TABLE_FORMATS)}, not {fmt!r}")
    if not compare:
        return render_tables([(r.label, r.source, r.models) for r in loaded], fmt)
    if fmt == "latex":
        fail("--compare prints md or csv; use --format md or --format csv")
    text = format_comparison(compare_runs(loaded), fmt) + "\n"
    from nlibias.report.paper_tables import format_table
    from nlibias.report.tp_correlation import agreement_table, correlation_table, item_agreements

    for table in (
        correlation_table([(r.label, r.models) for r in loaded]),
        agreement_table(item_agreements(loaded)),
    ):
        if table is not None:
            text += f"\n{table.title}\n\n{format_table(table, fmt)}\n"
    return text


def _print_tables(
    loaded: list[Run], fmt: str, compare: bool, out: Path | None, as_json: bool = False
) -> None:
    """``--format``: the tables on stdout, or written to ``out``."""
    text = _tables_text(loaded, fmt, compare)
    if not text.strip():
        fail("no table can be built from these runs (no metrics with known measures)")
    if as_json:
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
        echo_json({"format": fmt, "out": None if out is None else str(out), "text": text})
        return
    if out is None:
        typer.echo(text, nl=False)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {out}")


def _write_html(
    loaded: list[Run],
    out: Path | None,
    compare: bool,
    no_plots: bool,
    *,
    quiet: bool = False,
    as_json: bool = False,
) -> None:
    """The HTML report (default ``<first run>/report.html``) and what it holds."""
    from nlibias.report.html import ASSETS_DIR_SUFFIX, write_report

    if not no_plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            fail('figures need matplotlib: pip install "nlibias[report]" (or pass --no-plots)')
    target = out if out is not None else loaded[0].path / "report.html"
    report = write_report(loaded, target, compare_runs=True if compare else None, plots=not no_plots)
    figures = target.parent / (target.stem + ASSETS_DIR_SUFFIX)
    if as_json:
        echo_json(
            {
                "out": str(target),
                "sections": list(report.sections),
                "caveats": list(dict.fromkeys(c.kind for c in report.caveats)),
                "figures": str(figures) if report.plots else None,
            }
        )
        return
    typer.echo(f"wrote {target} ({', '.join(report.sections)})")
    if quiet:
        return
    if report.caveats:
        kinds = ", ".join(dict.fromkeys(c.kind for c in report.caveats))
        typer.echo(f"caveats at the top of the report: {kinds}")
    if report.plots:
        typer.echo(f"figures (PNG and SVG): {figures}")


def _debias_report(runs: list[Path], pair: list[str], as_json: bool = False) -> None:
    from nlibias.jobs.debias_compare import COMPARISON_JSON, compare_debiasing, save_comparison
    from nlibias.report.debias_tables import format_debias_tables

    if len(runs) != 1:
        fail("--debias compares models of one audit run; pass one run directory")
    pairs = []
    for text in pair:
        before, sep, after = text.partition("=")
        if not sep or not before or not after:
            fail(f"--pair takes BEFORE=AFTER (model keys of the run), not {text!r}")
        pairs.append((before, after))
    comparison = compare_debiasing(runs[0], pairs or None, write=False)
    saved = save_comparison(runs[0], comparison)
    if as_json:
        echo_json({"comparison": comparison, "out": str(runs[0] / COMPARISON_JSON) if saved else None})
        return
    typer.echo(format_debias_tables(comparison), nl=False)
    if saved:
        typer.echo(f"wrote {runs[0] / COMPARISON_JSON}")
    else:
        warn(f"kept {runs[0] / COMPARISON_JSON}: it holds pairs or accuracies this comparison lacks")
