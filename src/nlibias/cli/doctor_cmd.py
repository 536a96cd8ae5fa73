"""``nlibias doctor`` (versions, device, caches, benchmark data and extras, for bug reports and
setup), ``nlibias schema`` (the JSON Schema of a file nlibias writes) and ``nlibias demo`` (the
embedded SmolLM2-135M audited on a BBNLI sample, offline, in minutes)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from nlibias.cli.app import app, echo_json, fail, warn
from nlibias.cli.options import Bootstrap, Cache, Json, Out, Quiet, Seed, show_progress


@app.command("doctor")
def doctor_command(
    quiet: Quiet = False,  # nothing to hide: taken as every printing command takes it
    as_json: Json = False,
) -> None:
    """Print what nlibias runs with: versions, device, caches and their sizes, data found, extras.

    Paste its output into a bug report. Nothing is downloaded or written.
    """
    from nlibias.jobs.doctor import environment_report, human_size

    report = environment_report()
    if as_json:
        echo_json(report)
        return
    typer.echo(f"nlibias {report['nlibias']}")
    typer.echo(f"python {report['python']}")
    typer.echo(f"platform {report['platform']}")
    typer.echo("\npackages:")
    for name, version in report["packages"].items():
        typer.echo(f"  {name:<20} {version or '-'}")
    device = report["device"]
    if device is not None:
        gpus = ", ".join(device["cuda"]) or "none"
        typer.echo(
            f"\ndevice: {device['default']} (CUDA GPUs: {gpus}; MPS: {'yes' if device['mps'] else 'no'})"
        )
        if device["note"]:
            typer.echo(f"  {device['note']}")
    typer.echo("\ncaches:")
    for cache in report["caches"]:
        size = human_size(cache["bytes"]) if cache["exists"] else "absent"
        by = f" (set by {cache['set_by']})" if cache["set_by"] else ""
        typer.echo(f"  {cache['name']}: {cache['path']}{by}  {size}")
        if cache["problem"]:
            warn(f"the {cache['name']} cache {cache['path']} is {cache['problem']}")
    typer.echo("\nbenchmark data:")
    typer.echo(
        "  searched in order: " + ", ".join(f"{d['path']} ({d['where']})" for d in report["data_dirs"])
    )
    for folder in (d for d in report["data_dirs"] if d["problem"]):
        warn(f"the data dir {folder['path']} ({folder['where']}) is {folder['problem']}")
    modified = report["modified_data"]
    if modified["problem"]:
        warn(f"every expand of pinned benchmark data is refused: {modified['problem']}")
    else:
        use = "used, with a warning" if modified["allowed"] else "refused"
        setting = "unset" if modified["value"] is None else f"is {modified['value']!r}"
        typer.echo(f"  pinned data that fails its checksum: {use} ({modified['variable']} {setting})")
    for name, data in report["data"].items():
        where = (
            f"{data['path']} (from {data['where']})"
            if data["found"]
            else "not found (downloaded on first use)"
        )
        typer.echo(f"  {name}: {where}")
    if report["plugin_error"]:
        typer.echo(f"  plug-ins: {report['plugin_error']}")
    typer.echo("\nextras:")
    for extra, status in report["extras"].items():
        state = "installed" if status["installed"] else f"missing {', '.join(status['missing'])}"
        typer.echo(f"  nlibias[{extra}]: {state}")


def _metrics() -> dict[str, Any]:
    from nlibias.catalog.registry import load_plugins
    from nlibias.io.results import metrics_schema

    load_plugins()  # the measures of plug-in benchmarks are fields too
    return metrics_schema()


def _manifest() -> dict[str, Any]:
    from nlibias.io.run_manifest import manifest_schema

    return manifest_schema()


_SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {"metrics": _metrics, "manifest": _manifest}


@app.command("schema")
def schema_command(
    name: str = typer.Argument(
        ..., help="metrics (metrics.json) or manifest (manifest.json of a run directory)."
    ),
) -> None:
    """Print the JSON Schema of metrics.json or of a run directory's manifest.json."""
    if name not in _SCHEMAS:
        fail(f"no schema named {name!r}; choose one of: {', '.join(_SCHEMAS)}")
    typer.echo(json.dumps(_SCHEMAS[name](), indent=2, ensure_ascii=False))


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
