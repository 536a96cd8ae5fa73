"""``nlibias expand NAME``: a registered benchmark's source → samples in a run directory."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from nlibias.cli.app import app, echo_json, warn
from nlibias.cli.options import Json, OptionalSeed, Out, Quiet
from nlibias.textio.tables import render_table

_NAME_HELP = "Benchmark: {names} (`nlibias benchmarks` describes them)."


def benchmark_names_help() -> str:
    """The help of ``expand``'s NAME: every registered benchmark that expands, plug-ins included,
    read from the registry when the help is shown (so ``nlibias`` starts without loading it)."""
    from nlibias.catalog.registry import describe_benchmarks

    try:
        names = [b["name"] for b in describe_benchmarks() if b["expands"]]
    except Exception:  # a broken plug-in: the help still shows (nlibias doctor names the plug-in)
        names = []
    return _NAME_HELP.format(names=", ".join(names) or "a registered benchmark's name")


class _ExpandCommand(TyperCommand):
    """``expand``, whose NAME help lists the registered benchmarks when it is shown."""

    def format_help(self, ctx: Any, formatter: Any) -> None:  # Typer's own click types
        for param in self.params:
            if param.name == "name":
                param.help = benchmark_names_help()  # type: ignore[attr-defined]
        super().format_help(ctx, formatter)


@app.command("expand", cls=_ExpandCommand)
def expand_command(
    name: Annotated[str, typer.Argument(help=_NAME_HELP.format(names="a registered benchmark's name"))],
    out: Out,
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
    seed: OptionalSeed = None,
    strict: bool | None = typer.Option(
        None,
        "--strict/--no-strict",
        help="occupations, evaluation sets: refuse a premise with a gendered word or one that does not "
        "name its row's occupation (default: read as the authors published them, counted and listed).",
    ),
    allow_modified_data: bool = typer.Option(
        False,
        "--allow-modified-data",
        help="Use benchmark data in the data dir or user cache that differs from its pinned checksums "
        "(warned, its digest recorded in expansion.json); default: refused. Also "
        "NLIBIAS_ALLOW_MODIFIED_DATA=1.",
    ),
    quiet: Quiet = False,  # nothing to hide: taken as every printing command takes it
    as_json: Json = False,
) -> None:
    """Expand a benchmark source into samples (--out: samples.jsonl and samples.parquet); print its
    counts. --seed: the seed of occupations' one-template draw (default 0)."""
    from nlibias.catalog.registry import get_benchmark
    from nlibias.jobs.expand import expand_to_dir

    given = {"balance": balance, "hypothesis_templates": hypothesis_templates, "seed": seed, "strict": strict}
    options = {key: value for key, value in given.items() if value is not None}
    with warnings.catch_warnings():  # the summary's warnings say it once, as the command's own
        warnings.filterwarnings("ignore", message=".*differs from the pinned", category=UserWarning)
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
    quiet: Quiet = False,  # nothing to hide: taken as every printing command takes it
    as_json: Json = False,
) -> None:
    """List the registered benchmarks (built-in and from plug-ins)."""
    from nlibias.catalog.registry import describe_benchmarks

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
