"""``nlibias schema metrics``: print the JSON Schema of a file nlibias writes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import typer

from nlibias.cli.app import app, fail


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
