"""The Typer applications every command module registers on (imported by :mod:`nlibias.cli.main`)."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

PLAIN_HELP = None
"""``rich_markup_mode`` of every Typer app here: help texts are shown as written. Rich markup
would read ``nlibias[ray]`` as a style tag and drop it."""

app = typer.Typer(
    name="nlibias",
    help="Audit social bias in NLI models and LLMs; extend bias benchmarks the BBNLI-next way.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=PLAIN_HELP,
)


def _print_version(value: bool) -> None:
    if value:
        from nlibias import __version__

        typer.echo(f"nlibias {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Audit social bias in NLI models and LLMs; extend bias benchmarks the BBNLI-next way."""


def echo_json(data: Any) -> None:
    """Print data as JSON (for every command's ``--json`` flag)."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def warn(message: str) -> None:
    typer.secho(f"warning: {message}", fg=typer.colors.YELLOW, err=True)


def fail(message: str, code: int = 2) -> None:
    """Print an error without a traceback and exit (CLI only; library code raises)."""
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    sys.exit(code)
