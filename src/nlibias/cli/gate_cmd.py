"""``nlibias gate``: fail a CI job when a candidate model got more biased than the baseline
(docs/gates.md). Exit codes: 0 passed, 1 failed, 2 bad input (:mod:`nlibias.cli.faults`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
import typer.exceptions
from typer.core import TyperCommand

from nlibias.cli.app import app, echo_json
from nlibias.cli.options import AuditedSamples, Json, Quiet
from nlibias.errors import ConfigError, NlibiasError

EXIT_FAILED = 1


def _pairs(values: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for value in values:
        cand, sep, base = value.partition("=")
        problem = None
        if not sep or not cand or not base:
            problem = f"{value!r} is not CANDIDATE_MODEL=BASELINE_MODEL"
        elif cand in found:  # the later pair would silently replace the earlier one
            problem = (
                f"candidate model {cand!r} is paired twice ({cand}={found[cand]} and {value}); "
                "pair each candidate model once"
            )
        if problem is not None:
            raise ConfigError(f"{{pairs}}: {problem}", parameter="pairs")
        found[cand] = base
    return found


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
    junit: Path | None = typer.Option(
        None, "--junit", help="Write JUnit XML here (a testcase per rule and slice)."
    ),
    markdown: Path | None = typer.Option(
        None, "--markdown", help="Write a Markdown summary here (CI job summary)."
    ),
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
        result = gate(candidate, baseline, rules=rules, pairs=_pairs(pair), margin=margin, samples=samples)
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
