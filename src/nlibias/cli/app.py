"""The Typer application every command module registers on (imported by :mod:`nlibias.cli.main`)
and the command line's one error boundary (:class:`GuardedGroup`): an
:class:`~nlibias.errors.NlibiasError` (its parameters named by their options: :func:`message_of`)
or a fault of the environment or a file (:func:`describe_fault`) is one line and exit code 2;
anything else an internal error, exit 70.

>>> import errno
>>> describe_fault(PermissionError(errno.EACCES, "Permission denied", "/ro/run"))
'/ro/run: permission denied (make it writable or choose another location; nothing was changed there)'
>>> describe_fault(ValueError("x")) is None
True
"""

from __future__ import annotations

import csv
import errno
import json
import sqlite3
import sys
import typing
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePath
from typing import Annotated, Any, NoReturn

import typer
import typer.exceptions
from typer.core import TyperGroup

from nlibias.errors import NlibiasError
from nlibias.runtime.progress import bars_wanted, silence_library_bars
from nlibias.textio.text_door import FormatCharactersWarning
from nlibias.version import __version__

DEBUG_KEY = "nlibias.debug"
INVOKED_KEY = "nlibias.invoked"
"""Where the root context keeps the command that runs (its options name a parameter in errors)."""


HELP_ORDER = (
    *("demo", "benchmarks", "expand", "audit", "score", "report", "gate", "explain", "export"),
    *("extend", "masks", "validate", "augment", "finetune", "debias", "doctor", "schema"),
)
"""``nlibias --help`` lists the commands in the order a user meets them; any other comes last."""


class GuardedGroup(TyperGroup):
    """The root command group: runs a command inside the one error boundary."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        return sorted(
            names, key=lambda name: HELP_ORDER.index(name) if name in HELP_ORDER else len(HELP_ORDER)
        )

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            name_repeatable_values(command, ctx)
        return command

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None:
            ctx.meta[INVOKED_KEY] = refuse_malformed_options(command, name, ctx, rest)
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
                code=EXIT_INTERRUPTED,
            )
        except Exception as exc:
            if ctx.meta.get(DEBUG_KEY):
                raise
            if isinstance(exc, NlibiasError):
                fail(message_of(exc, ctx.meta.get(INVOKED_KEY)), code=EXIT_USER_ERROR)
            described = describe_fault(exc)
            if described is not None:
                fail(described, code=EXIT_USER_ERROR)
            fail(
                f"internal error ({type(exc).__name__}: {exc}); this is a bug in nlibias: "
                "rerun with `nlibias --debug ...` for the traceback and report it",
                code=EXIT_INTERNAL_ERROR,
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


def refuse_malformed_options(command: Any, name: str | None, parent: Any, args: list[str]) -> Any:
    """Refuse options malformed on the command line before the command runs: a single-valued option
    given twice, or a blank path (an option's or an argument's), in a command or a nested group's
    command; return the command that will run (a nested group's command: ``validate import``).

    Click keeps the last value without a word, so ``gate --margin 1 --margin 30`` would gate with 30;
    and a blank path becomes ``Path("")``, the folder ``.``, before the library sees it.
    A command with ``command_line_refused(args, error)`` (the gate) is told first, to write its CI files.
    """
    ctx = command.context_class(command, info_name=name, parent=parent, **command.context_settings)
    try:
        given, rest, order = command.make_parser(ctx).parse_args(list(args))
    except typer.exceptions.TyperException:
        return command  # the command's own parse reports what is wrong
    single = (p for p in order if p.param_type_name == "option" and not (p.multiple or p.count or p.is_flag))
    twice = "given {} times; give it once (only the last value would be used)"
    problems = [(p, twice.format(n)) for p, n in Counter(single).items() if n > 1]
    problems += [(p, _BLANK_PATH) for p in dict.fromkeys(order) if _blank_path(p, given.get(p.name))]
    problems += [
        (p, why) for p in dict.fromkeys(order) if (why := _declared_refusal(command, p, given.get(p.name)))
    ]
    for param, problem in problems[:1]:
        error = typer.BadParameter(problem, ctx=ctx, param=param)
        refused = getattr(command, "command_line_refused", None)
        if refused is not None:
            refused(list(args), error)
        raise error
    if isinstance(command, TyperGroup) and rest:
        sub = command.get_command(ctx, rest[0])
        if sub is not None:
            return refuse_malformed_options(sub, rest[0], ctx, rest[1:])
    return command


_BLANK_PATH = "a blank path; give a file or folder (`.` for this folder)"


def _blank_path(param: Any, value: Any) -> bool:
    """Whether a path parameter (one value, or a repeatable one's values) was given a blank one."""
    values = value if isinstance(value, list | tuple) else [value]
    hint = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    kinds = typing.get_args(hint) if typing.get_origin(hint) in (list, tuple) else (hint,)
    is_path = any(isinstance(kind, type) and issubclass(kind, PurePath) for kind in kinds)
    return is_path and any(isinstance(v, str) and not v.strip() for v in values)


def _declared_refusal(command: Any, param: Any, value: Any) -> str | None:
    """What a declared path type on an option's hint refuses in its text as given
    (``Annotated[Path | None, typer.Option(...), OutFile]``): Typer's ``Path`` drops a trailing
    separator before the command sees it, so ``--out DIR/name/`` would be written as a file."""
    callback = getattr(command, "callback", None)
    if callback is None or value is None:
        return None
    hint = typing.get_type_hints(callback, include_extras=True).get(param.name)
    kinds = [item for item in getattr(hint, "__metadata__", ()) if typing.get_origin(item) is Annotated]
    if not kinds:
        return None
    from nlibias.schema.paths import text_refusal

    texts = [v for v in (value if isinstance(value, list | tuple) else [value]) if isinstance(v, str)]
    return next((why for kind in kinds for text in texts if (why := text_refusal(kind, text))), None)


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


EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 70  # EX_SOFTWARE (sysexits.h)
EXIT_INTERRUPTED = 130

# Library parameters whose command-line option is not simply ``--`` + the name with dashes.
_FLAGS = {
    "models": "--model",
    "tp_variants": "--tp-variant",
    "out_dir": "--out",
    "samples_path": "--samples",
    "eval_path": "--eval",
    "pairs": "--pair",
    "prompts": "--prompt",
    "from_stage": "--from",
    "run_dir": "--out",
    "ray_address": "--ray",
    "classifiers": "--filter-model",
    "holdout": "--holdout-model",
    "subtopics": "--subtopic",
    "fmt": "--format",
    "num_workers": "--ray-workers",
    "num_gpus": "--ray-gpus-per-worker",
    "sample_pairs": "--pairs",
    "judges": "--judge",
    "plots": "--no-plots",
    "as_json": "--json",
}

# Library parameters a command takes as an argument, not an option.
_ARGUMENTS = {"benchmark": "NAME", "runs": "RUNS", "candidate": "CANDIDATE", "run": "RUN"}

_NOT_OPTIONS = frozenset(
    """api api_key_env arch augment_options base_url chunk_pairs expand finetune_options fingerprint
    kind label max_batch_size measures name_or_path num_cpus options overrides predictors round_
    sentence_pairs sources spec summary_table tables target use_chat_template vocab_size""".split()  # noqa: SIM905 (a list of names reads better as text)
)
"""Library parameters no command takes (the Python API's, plug-ins', backends' own; for api_key_env
the command line reads $OPENAI_API_KEY): messages name their value. An environment variable at
fault (upper case: ``NLIBIAS_DEVICE``) is named as it is, never by an option (:func:`_on_command_line`)."""

_OS_REASONS = {
    errno.EACCES: (
        "permission denied",
        "make it writable or choose another location; nothing was changed there",
    ),
    errno.EPERM: ("operation not permitted", "make it writable or choose another location"),
    errno.EROFS: ("read-only file system", "choose a directory on a writable file system"),
    errno.ENOSPC: ("no space left on the device", "free some space or choose another directory"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or choose another directory"),
    errno.ENOENT: ("no such file or directory", "check the path"),
    errno.EISDIR: ("is a directory, not a file", "pass a file"),
    errno.ENOTDIR: ("a part of the path is not a directory", "check the path"),
    errno.ENAMETOOLONG: ("file name too long", "choose a shorter path"),
    errno.EMFILE: ("too many open files", "raise the limit (ulimit -n) and rerun"),
}


def flag_of(parameter: str, command: Any = None) -> str:
    """The command-line option of a library parameter named in an error: the running command's own
    option of that name first (``demo``'s ``pairs`` is ``--pairs``, a count; the gate's is
    ``--pair``), else :data:`_FLAGS`, else ``--`` and the name with dashes.

    >>> flag_of("bootstrap"), flag_of("chunk_pairs"), flag_of("models")
    ('--bootstrap', '--chunk-pairs', '--model')
    """
    for param in getattr(command, "params", ()):
        long = [opt for opt in param.opts if opt.startswith("--")]
        if param.name == parameter and param.param_type_name == "option" and long:
            return long[0]
    return _FLAGS.get(parameter) or "--" + parameter.replace("_", "-")


def message_of(error: NlibiasError, command: Any = None) -> str:
    """An error's message as the command line shows it: each parameter it names
    (:class:`~nlibias.errors.NlibiasError`'s fields) by its option, never by its Python name; the
    parameter at fault, where the message does not name it, added by its option or argument
    (``command``, the click command that ran, decides: :func:`flag_of`).

    >>> from nlibias.errors import ConfigError, FileAccessError, SourceError
    >>> message_of(ConfigError("{seed} is -5; pass 0 or more", parameter="seed"))
    '--seed is -5; pass 0 or more'
    >>> message_of(ConfigError("unknown dtype 'x'", parameter="dtype"))  # not named in the text
    "unknown dtype 'x' (option --dtype)"
    >>> message_of(ConfigError("no benchmark named 'bbnl'", parameter="benchmark"))
    "no benchmark named 'bbnl' (argument NAME)"
    >>> message_of(ConfigError("{runs} names 2; name one run in {runs}", parameter="runs"))
    'RUNS names 2; name one run in RUNS'
    >>> message_of(ConfigError("use_chat_template must be true or false", parameter="use_chat_template"))
    'use_chat_template must be true or false'
    >>> message_of(ConfigError("no model given: name one in {models} or {generative}", parameter="models",
    ...                        names=("generative",)))
    'no model given: name one in --model or --generative'
    >>> message_of(SourceError("r/x.jsonl", None, "damaged", fix="rerun ({parameter from_stage})", names=("from_stage",)))
    'r/x.jsonl: damaged (rerun (option --from))'
    >>> message_of(FileAccessError("/runs/m", "no space left", parameter="out_dir"))
    '/runs/m: no space left (option --out)'
    >>> message_of(ConfigError("unknown device 'tpu'", parameter="NLIBIAS_DEVICE"))  # from the environment
    "unknown device 'tpu' (NLIBIAS_DEVICE)"
    """
    text = error.render(
        lambda name: _on_command_line(name, command) or name,
        lambda name: _on_command_line(name, command, referred=True) or f"parameter {name}",
    )
    parameter = error.parameter
    if not parameter or error.mentions(parameter):
        return text
    named = _on_command_line(parameter, command, referred=True)
    return f"{text} ({named})" if named else text


def _on_command_line(parameter: str, command: Any = None, *, referred: bool = False) -> str | None:
    """How the command line names a library parameter: by its flag (``--seed``), or referred to
    (``option --seed``, ``argument NAME``); an argument by its name (``RUNS``); None for a parameter
    no command takes."""
    if parameter in _NOT_OPTIONS:
        return None
    if parameter.isupper():  # an environment variable the value came from: named as it is
        return parameter
    if parameter in _ARGUMENTS:
        return f"argument {_ARGUMENTS[parameter]}" if referred else _ARGUMENTS[parameter]
    flag = flag_of(parameter, command)
    return f"option {flag}" if referred else flag


def describe_fault(exc: BaseException) -> str | None:
    """A message with the path, the reason and the fix for a fault of the environment or of an
    input file, or ``None`` when ``exc`` is not one (an internal error)."""
    if isinstance(exc, OSError):
        return _os_message(exc)
    if isinstance(exc, sqlite3.DatabaseError):
        return (
            f"a database file is damaged or cannot be used ({exc}): move the prediction cache "
            "($NLIBIAS_CACHE or --cache) or the run's annotation database aside and rerun; nothing "
            "in your run directory was changed"
        )
    if isinstance(exc, UnicodeDecodeError):
        return f"a file is not UTF-8 text ({exc.reason} at byte {exc.start}): save it as UTF-8"
    if isinstance(exc, UnicodeEncodeError):
        return f"a text holds a character that cannot be written as UTF-8 ({exc.reason}): remove it from the input"
    if isinstance(exc, csv.Error):
        return f"a CSV file is malformed ({exc}): check its quoting and row lengths"
    if type(exc).__module__.startswith("pyarrow"):
        return (
            f"a parquet file cannot be read ({exc}): write it again (nlibias expand) or pass the .jsonl file"
        )
    return None


def _os_message(exc: OSError) -> str:
    reason, fix = _OS_REASONS.get(exc.errno or -1, (exc.strerror or str(exc), "check the path and rerun"))
    paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
    where = " -> ".join(paths)
    return f"{where}: {reason} ({fix})" if where else f"{reason} ({fix})"
