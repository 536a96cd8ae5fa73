"""``nlibias expand NAME``: a registered benchmark's source → samples in a run directory."""

from __future__ import annotations

from pathlib import Path

import typer

from nlibias.cli.app import app, echo_json, warn


@app.command("expand")
def expand_command(
    name: str = typer.Argument(
        ..., help="Benchmark: bbnli, wq-nli, occupations, or one a plug-in registered (`nlibias benchmarks`)."
    ),
    out: Path = typer.Option(
        ..., "--out", help="Run directory to write samples.jsonl and samples.parquet into."
    ),
    source: Path | None = typer.Option(
        None,
        "--source",
        "--premises",
        help="The benchmark's source: BBNLI's JSON directory or expanded CSV, winoqueer_nli.csv, your "
        "occupation premises (one per line), or paper 004's evaluation sets: snli-eval, mnli-eval, ood-eval "
        "or an .xlsx workbook (several joined by commas). Default: the data dir ($NLIBIAS_DATA_DIR, user "
        "cache, download).",
    ),
    balance: bool | None = typer.Option(
        None,
        "--balance/--no-balance",
        help="occupations: substitute occupations so each has as many literal premises (default: on).",
    ),
    hypothesis_templates: str | None = typer.Option(
        None,
        "--hypothesis-templates",
        help="occupations, evaluation sets without hypotheses (ood-eval): one (a seeded draw of one "
        "Table 3 template per premise, the default) or all (all three).",
    ),
    seed: int | None = typer.Option(
        None, "--seed", help="occupations: the seed of the one-template draw (default 0)."
    ),
    allow_modified_data: bool = typer.Option(
        False,
        "--allow-modified-data",
        help="Use benchmark data in the data dir or user cache that differs from its pinned checksums "
        "(warned, its digest recorded in expansion.json); default: refused. Also "
        "NLIBIAS_ALLOW_MODIFIED_DATA=1.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON instead of tables."),
) -> None:
    """Expand a benchmark source into samples; print its counts."""
    from nlibias.catalog.registry import get_benchmark
    from nlibias.jobs.expand import expand_to_dir

    given = {"balance": balance, "hypothesis_templates": hypothesis_templates, "seed": seed}
    options = {key: value for key, value in given.items() if value is not None}
    summary = expand_to_dir(name, out, source, allow_modified_data=allow_modified_data or None, **options)
    if as_json:
        echo_json(summary)
        return
    for message in summary.get("warnings", []):
        warn(message)
    benchmark = get_benchmark(name)
    if benchmark.summary_table is not None:
        typer.echo(benchmark.summary_table(summary))
    else:
        typer.echo(f"wrote {summary['files']['jsonl']}")


@app.command("benchmarks")
def benchmarks_command(
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON."),
) -> None:
    """List the registered benchmarks (built-in and from plug-ins)."""
    from nlibias.catalog.registry import describe_benchmarks
    from nlibias.report.text_table import render_table

    listed = describe_benchmarks()
    if as_json:
        echo_json(listed)
        return
    typer.echo(
        render_table(
            ["name", "sample sources", "expands", "description"],
            [
                [b["name"], ", ".join(b["sources"]), "yes" if b["expands"] else "no", b["description"]]
                for b in listed
            ],
        )
    )
