"""The Typer applications every command module registers on (imported by :mod:`nlibias.cli.main`)."""

from __future__ import annotations

import json
import sys
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import typer
import typer.exceptions
from typer.core import TyperGroup

from nlibias.cli import faults
from nlibias.errors import NlibiasError
from nlibias.runtime.progress import bars_wanted, silence_library_bars
from nlibias.textio.text_door import FormatCharactersWarning
from nlibias.version import __version__

DEBUG_KEY = "nlibias.debug"


class GuardedGroup(TyperGroup):
    """The root command group: runs a command inside the one error boundary (:mod:`nlibias.cli.faults`)."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            name_repeatable_values(command, ctx)
        return command

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None:
            refuse_repeated_options(command, name, ctx, rest)
        return name, command, rest

    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]
        try:
            with _text_door_warnings():
                return super().invoke(ctx)
        except (typer.exceptions.TyperException, typer.Exit, typer.Abort):  # usage errors, --help, exits
            raise
        except KeyboardInterrupt:
            fail(
                "interrupted (finished work is in the cache; rerun the same command to resume)",
                code=faults.EXIT_INTERRUPTED,
            )
        except Exception as exc:
            if ctx.meta.get(DEBUG_KEY):
                raise
            if isinstance(exc, NlibiasError):
                fail(faults.message_of(exc), code=faults.EXIT_USER_ERROR)
            described = faults.describe_fault(exc)
            if described is not None:
                fail(described, code=faults.EXIT_USER_ERROR)
            fail(
                f"internal error ({type(exc).__name__}: {exc}); this is a bug in nlibias: "
                "rerun with `nlibias --debug ...` for the traceback and report it",
                code=faults.EXIT_INTERNAL_ERROR,
            )


TEXT_WARNINGS_SHOWN = 10
"""Texts whose format characters the text door removed that a command names, one line each."""


@contextmanager
def _text_door_warnings() -> Iterator[None]:
    """nlibias's warnings as ``warning: ...`` (the text door's first :data:`TEXT_WARNINGS_SHOWN`, then
    how many more); other libraries' as before."""
    previous = warnings.showwarning
    count = 0

    def show(
        message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None
    ) -> None:
        nonlocal count
        if not issubclass(category, FormatCharactersWarning):
            if category.__module__.startswith("nlibias."):  # ours say what to do: no source line
                warn(str(message))
            else:
                previous(message, category, filename, lineno, file, line)
            return
        count += 1
        if count <= TEXT_WARNINGS_SHOWN:
            warn(str(message))

    with warnings.catch_warnings():
        warnings.showwarning = show
        try:
            yield
        finally:
            if count > TEXT_WARNINGS_SHOWN:
                warn(f"{count - TEXT_WARNINGS_SHOWN} more texts had invisible format characters removed")


def refuse_repeated_options(command: Any, name: str | None, parent: Any, args: list[str]) -> None:
    """Refuse a single-valued option given twice, in a command or a nested group's command.

    Click keeps the last value without a word, so ``gate --margin 1 --margin 30`` would gate with 30.
    A command with ``command_line_refused(args, error)`` (the gate) is told first, to write its CI files.
    """
    ctx = command.context_class(command, info_name=name, parent=parent, **command.context_settings)
    try:
        _, rest, order = command.make_parser(ctx).parse_args(list(args))
    except typer.exceptions.TyperException:
        return  # the command's own parse reports what is wrong
    single = (p for p in order if p.param_type_name == "option" and not (p.multiple or p.count or p.is_flag))
    for param, times in Counter(single).items():
        if times > 1:
            error = typer.BadParameter(
                f"given {times} times; give it once (only the last value would be used)", ctx=ctx, param=param
            )
            refused = getattr(command, "command_line_refused", None)
            if refused is not None:
                refused(list(args), error)
            raise error
    if isinstance(command, TyperGroup) and rest:
        sub = command.get_command(ctx, rest[0])
        if sub is not None:
            refuse_repeated_options(sub, rest[0], ctx, rest[1:])


def name_repeatable_values(command: Any, ctx: Any) -> None:
    """Show a repeatable option's value as one value (``--model <str>``), not as ``<list[str]>``."""
    for param in getattr(command, "params", ()):
        shown = param.display_type(ctx) if hasattr(param, "display_type") else ""
        if not (shown.startswith("<list[") and shown.endswith("]>")):
            continue
        one = f"<{shown[len('<list[') : -len(']>')].lower()}>"
        if getattr(param, "multiple", False) and param.metavar is None:
            param.metavar = one
        elif param.nargs == -1:  # an argument: its name stays ("runs..."), its type shows one value
            param.display_type_rich = lambda ctx=None, one=one: one
    for sub in getattr(command, "commands", {}).values():  # nested groups: nlibias validate ...
        name_repeatable_values(sub, ctx)


PLAIN_HELP = None
"""``rich_markup_mode`` of every Typer app here: help as written (markup would drop ``nlibias[ray]``)."""

app = typer.Typer(
    name="nlibias",
    help="Audit social bias in NLI models and LLMs; extend bias benchmarks the BBNLI-next way.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=PLAIN_HELP,
    cls=GuardedGroup,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"nlibias {__version__}")
        raise typer.Exit()


@app.callback()
def _global_options(
    ctx: typer.Context,
    debug: bool = typer.Option(
        False, "--debug", help="Show the full traceback of an error (put it before the command)."
    ),
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Audit social bias in NLI models and LLMs; extend bias benchmarks the BBNLI-next way."""
    ctx.meta[DEBUG_KEY] = debug
    if not bars_wanted():  # stderr is a log: no "Loading weights" or download bars in it
        silence_library_bars()


def echo_json(data: Any) -> None:
    """Print data as JSON (for every command's ``--json`` flag)."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def echo_text_or_path(text: str, written: Path | None) -> None:
    """``text`` on stdout, or ``wrote PATH`` where it was written to a file."""
    if written is None:
        typer.echo(text, nl=False)
    else:
        typer.echo(f"wrote {written}")


def warn(message: str) -> None:
    typer.secho(f"warning: {message}", fg=typer.colors.YELLOW, err=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print an error without a traceback and exit (CLI only; library code raises)."""
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    sys.exit(code)
