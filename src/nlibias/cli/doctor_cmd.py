"""``nlibias doctor``: versions, device, caches, benchmark data and extras, for bug reports and setup."""

from __future__ import annotations

import typer

from nlibias.cli.app import app, echo_json
from nlibias.cli.options import Json, Quiet


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
    typer.echo("\nbenchmark data:")
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
