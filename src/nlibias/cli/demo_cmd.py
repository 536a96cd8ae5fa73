"""``nlibias demo``: the embedded SmolLM2-135M audited on a BBNLI sample, offline, in minutes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nlibias.cli.app import app, echo_json, warn
from nlibias.cli.options import Bootstrap, Cache, Json, Out, Quiet, Seed, show_progress


@app.command("demo")
def demo_command(
    out: Out = Path("runs/demo"),
    full: Annotated[
        bool, typer.Option("--full", help="Every BBNLI bias-audit sample (2,276) instead of a sample.")
    ] = False,
    pairs: Annotated[
        int | None,
        typer.Option(
            "--pairs",
            min=1,
            help="Pairs in the stratified sample (default: sized for a few minutes on a laptop CPU; "
            "README.md has timings).",
        ),
    ] = None,
    seed: Seed = 0,
    cache: Cache = None,
    bootstrap: Bootstrap = 1000,
    as_json: Json = False,
    quiet: Quiet = False,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Generate the answers (a few pairs) and label their explanations with the embedded "
            "model as an NLI judge, so the report shows the explanations section.",
        ),
    ] = False,
) -> None:
    """Audit SmolLM2-135M-Instruct (shipped with the package) with both paper prompts on BBNLI.

    Expands BBNLI, samples whole pro/anti pairs from every subtopic, scores the yes/no answers
    in one forward pass per prompt, and writes samples, predictions.jsonl, metrics.json,
    tables.txt and the HTML report report.html into --out. No network needed. A demonstration,
    not a verdict.
    """
    from nlibias.jobs.demo import DEFAULT_SAMPLE_PAIRS, EXPLAIN_PAIRS, demo

    if not as_json and not quiet:
        default = EXPLAIN_PAIRS if explain else DEFAULT_SAMPLE_PAIRS
        what = "every BBNLI bias-audit sample" if full else f"{pairs or default} BBNLI pairs"
        answers = "generated answers, explanations labelled" if explain else "scored answers"
        typer.echo(
            f"nlibias demo: SmolLM2-135M-Instruct, prompts 'true' and 'entailed', {answers}, {what} → {out}",
            err=True,
        )
    result = demo(
        out,
        full=full,
        pairs=pairs,
        seed=seed,
        cache=cache,
        bootstrap=bootstrap,
        progress=show_progress(quiet, as_json),
        explain=explain,
    )
    if as_json:
        echo_json({key: value for key, value in result.items() if key != "tables"})
        return
    typer.echo(result["tables"])
    typer.echo("")
    for key, stats in result["models"].items() if not quiet else ():
        typer.echo(
            f"{key}: {stats['computed']} answers computed, {stats['cached']} from cache, "
            f"{stats['wall_seconds']:.1f} s",
            err=True,
        )
    typer.echo(
        f"\n{result['n_pairs']} pairs ({result['n_samples']} samples) from {result['subtopics']} subtopics, "
        f"of {result['pairs_available']} BBNLI pairs; {result['seconds']:.0f} s in all."
    )
    typer.echo(f"wrote {result['out_dir']}/: samples.jsonl, predictions.jsonl, metrics.json, tables.txt")
    typer.echo(f"report: {result['report']} (open it in a browser)")
    warn(result["disclaimer"])
