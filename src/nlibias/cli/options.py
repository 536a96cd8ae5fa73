"""The options several commands share, each defined once (annotated Typer options).

A command takes an option by its alias, so a flag means one thing with one help in every command
(``seed: Seed = 0``); the command gives the default (an alias without one is required). A flag
that sets a field of an options object is made by :func:`documented` (its help: the field's
docstring). A printing command takes ``--quiet`` and ``--json`` (the result alone on stdout).

>>> import typer
>>> demo = typer.Typer(add_completion=False)
>>> @demo.command()
... def command(quiet: Quiet = False, as_json: Json = False, seed: Seed = 0) -> None: ...
>>> [p.opts for p in typer.main.get_command(demo).params]
[['--quiet', '-q'], ['--json'], ['--seed']]
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import operator
import types
import typing
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast

import typer
from pydantic import BaseModel

from nlibias.cli.app import echo_json
from nlibias.debias.finetune_record import TrainingOptions
from nlibias.runtime.options import ModelOptions, RunOptions
from nlibias.schema.applies import SEED_APPLIES, TABLES_APPLIES, AppliesTo, refuse_inapplicable
from nlibias.schema.paths import CachePath, OutFile

F = TypeVar("F", bound=Callable[..., Any])


def documented(options: type, field: str, *flags: str) -> Any:
    """A Typer option for ``field`` of ``options`` (a pydantic model or a dataclass whose config
    reads attribute docstrings): its flag ``--field-name`` (or ``flags``), its help the field's
    documentation, so that ``--help`` and the Python API say one thing, written once.

    >>> from nlibias.debias.finetune_record import TrainingOptions
    >>> documented(TrainingOptions, "batch_size").help
    'Training pairs per step.'
    """
    return typer.Option(*(flags or [f"--{field.replace('_', '-')}"]), help=field_help(options, field))


def field_help(options: type, field: str) -> str:
    """The documentation of ``field`` of ``options`` on one line (empty in a frozen application,
    which has no source to read it from).

    >>> from nlibias.runtime.options import ModelOptions
    >>> field_help(ModelOptions, "ray_workers")
    'Ray actors per classifier.'
    """
    docs = _field_docs(options)
    if field not in docs:  # a misspelt field would make a flag of its own, without a word
        raise LookupError(f"{options.__name__} has no field {field!r}: {', '.join(docs)}")
    return " ".join((docs[field] or "").split())


def with_fields(options: type, *, after: str, skip: Collection[str] = ()) -> Callable[[F], F]:
    """Give a command every field of ``options`` (a pydantic model or a dataclass) but ``skip`` as
    an option, placed after its parameter ``after``: made by :func:`documented`, with the field's
    default and its type less the rules (the library holds the value to those); the command takes
    them in ``**fields``. One declaration of an option: the field.

    >>> from nlibias.debias.finetune_record import TrainingOptions
    >>> @with_fields(TrainingOptions, after="name", skip=["seed", "split", "eval_split"])
    ... def command(name: str, **fields: Any) -> None: ...
    >>> list(inspect.signature(command).parameters)[:4]
    ['name', 'learning_rate', 'epochs', 'batch_size']
    """
    if issubclass(options, BaseModel):
        declared = {name: (f.annotation, f.default) for name, f in options.model_fields.items()}
    else:
        hints = typing.get_type_hints(options)
        declared = {f.name: (hints[f.name], f.default) for f in dataclasses.fields(cast(Any, options))}

    def plain(hint: Any) -> Any:  # the rules of a choice or of an optional value left out too
        origin = typing.get_origin(hint)
        if origin in (typing.Union, types.UnionType):
            return functools.reduce(operator.or_, map(plain, typing.get_args(hint)))
        if origin is Annotated:
            return plain(typing.get_args(hint)[0])
        return str if origin is typing.Literal else hint

    added = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=default,
            annotation=Annotated[plain(hint), documented(options, name)],
        )
        for name, (hint, default) in declared.items()
        if name not in skip
    ]

    def wrap(command: F) -> F:
        own = [
            p.replace(kind=p.KEYWORD_ONLY)  # Typer passes every option by name
            for p in inspect.signature(command, eval_str=True).parameters.values()
            if p.kind != p.VAR_KEYWORD
        ]
        at = [p.name for p in own].index(after) + 1
        command.__signature__ = inspect.Signature([*own[:at], *added, *own[at:]])  # type: ignore[attr-defined]
        return command

    return wrap


@functools.cache
def _field_docs(options: type) -> dict[str, str | None]:
    """Each field's documentation, as pydantic reads it (a model's fields; a dataclass's JSON
    Schema, read once for all of its fields)."""
    from pydantic import TypeAdapter

    if issubclass(options, BaseModel):
        return {name: info.description for name, info in options.model_fields.items()}
    properties = TypeAdapter(options).json_schema()["properties"]
    return {name: schema.get("description") for name, schema in properties.items()}


# --- every printing command ------------------------------------------------------------------

Quiet = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress bars or progress messages (results still print).")
]
Json = Annotated[
    bool, typer.Option("--json", help="Print the result as JSON on stdout (and nothing else there).")
]
Progress = Annotated[
    bool, typer.Option("--progress/--no-progress", hidden=True, help="Deprecated: --no-progress is --quiet.")
]

# --- where a command reads and writes -------------------------------------------------------------

Samples = Annotated[
    Path, typer.Option("--samples", help="Run directory or samples file (from `nlibias expand`).")
]
AuditedSamples = Annotated[
    Path | None,
    typer.Option(
        "--samples", help="The samples the runs audited (default: the samples file each run records)."
    ),
]
_OUT_DIR = typer.Option(
    "--out", help="Directory the command writes its files into (its description names them)."
)
Out = Annotated[Path, _OUT_DIR]
OptionalOutDir = Annotated[Path | None, _OUT_DIR]
OptionalOut = Annotated[
    Path | None,
    typer.Option("--out", help="File to write the result into (default: print it on stdout)."),
    OutFile,
]
Force = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Redo the work the output directory holds when its recorded settings or data differ from "
        "these (else refused).",
    ),
]
Cache = Annotated[
    Path | None,
    typer.Option("--cache", help="Prediction cache file. Default: $NLIBIAS_CACHE, else the user cache."),
    CachePath,
]
NO_CACHE_APPLIES = AppliesTo(
    "no cache file",
    lambda settings: settings.get("cache") is None,
    "",
    names=("cache",),
    words=lambda settings: (
        f"{{no_cache}} and {{cache}} {str(settings['cache'])!r} contradict each other; give one of them"
    ),
)
NoCache = Annotated[
    bool, NO_CACHE_APPLIES, typer.Option("--no-cache", help="Do not read or write the prediction cache.")
]

# --- measures and their intervals -----------------------------------------------------------------

_SEED = typer.Option(
    "--seed",
    help="Seed of the command's random draws (bootstrap, samples, training): the same seed, the same result.",
)
Seed = Annotated[int, _SEED]
DrawSeed = Annotated[int, _SEED, SEED_APPLIES]
"""The seed of a bootstrap or a ``--limit`` subset (audit, score, explain): refused where nothing is drawn."""
OptionalSeed = Annotated[int | None, _SEED]
Bootstrap = Annotated[int, documented(RunOptions, "bootstrap")]
By = Annotated[
    str,
    typer.Option(
        "--by", help="Slices in the printed tables: domain or subtopic (metrics.json always has both)."
    ),
    TABLES_APPLIES,
]
Limit = Annotated[int | None, documented(RunOptions, "limit")]

# --- models: where and how they run (the others: with_fields(ModelOptions)) -----------------------

Device = Annotated[str | None, documented(ModelOptions, "device")]
Dtype = Annotated[str | None, documented(ModelOptions, "dtype")]
MaxTokens = Annotated[int, documented(ModelOptions, "max_tokens")]
Compile = Annotated[bool, documented(ModelOptions, "compile")]
Devices = Annotated[str | None, documented(ModelOptions, "devices")]
"""Given as one comma-separated list (``ModelOptions.devices`` is a tuple)."""
Ray = Annotated[str | None, documented(ModelOptions, "ray_address", "--ray")]
OptionScore = Annotated[str, documented(ModelOptions, "option_score")]

# --- judges (explain, validate prescreen) ---------------------------------------------------------

_NLI_JUDGE = typer.Option(
    "--judge",
    help="NLI judge: Hugging Face name or local path, hf:NAME, prompt:MODEL or fake:NAME (explain: repeatable).",
)
NliJudge = Annotated[str | None, _NLI_JUDGE]
NliJudges = Annotated[list[str], _NLI_JUDGE]
LmJudge = Annotated[
    str | None,
    typer.Option(
        "--lm-judge",
        help="A generative LM judge beside the NLI judges: smollm2, hf:NAME, openai:URL#MODEL or fake:NAME.",
    ),
]

# --- BBNLI sources (extend, masks) ----------------------------------------------------------------

BbnliSource = Annotated[
    Path | None, typer.Option("--source", help="BBNLI JSON directory (default: the resolved data dir).")
]
Subtopics = Annotated[list[str], typer.Option("--subtopic", help="Only these subtopics (repeatable).")]


# --- training data (finetune, augment, debias) -------------------------------------------------

Train = Annotated[
    str,
    typer.Option(
        "--train",
        help="Training set: a .jsonl/.csv/.tsv/.parquet file with premise, hypothesis, label (SNLI's "
        "sentence1/sentence2/gold_label work too), an `nlibias augment` directory, a saved `datasets` "
        "directory, or a hub name (NAME[:CONFIG]).",
    ),
]
Eval = Annotated[
    str | None, typer.Option("--eval", help="Evaluation set (same formats) for the accuracy (Acc).")
]
Split = Annotated[str, documented(TrainingOptions, "split")]

# --- fine-tuning: the fields of TrainingOptions (with_fields) -------------------------------------

_MODEL = typer.Option(
    "--model",
    help="Hub name or directory of the model to fine-tune (e.g. bert-base-uncased); debias takes several "
    "(repeatable).",
)
Model = Annotated[str, _MODEL]
Models = Annotated[list[str], _MODEL]

# --- gender-swap augmentation --------------------------------------------------------------------

Select = Annotated[
    str,
    typer.Option(
        "--select",
        help="Rows to swap: occupation (rows whose premise names one of the 38 occupations) or all.",
    ),
]
Match = Annotated[
    str,
    typer.Option(
        "--match",
        help="Occupation matching: words (punctuation, plurals, two-word names) or paper (paper 004's code).",
    ),
]
WordList = Annotated[
    str,
    typer.Option(
        "--word-list",
        help="winobias (default), paper (paper 004's 19-entry map) or a word<TAB>counterpart file.",
    ),
]
Her = Annotated[
    str,
    typer.Option(
        "--her",
        help="Who reads 'her' as 'him' or 'his': rule (fast, default) or lm (a language model reads "
        "each 'her' the rule has no cue for, by the log-probability of both swapped sentences).",
    ),
]
HerModel = Annotated[
    str | None,
    typer.Option(
        "--her-model",
        help="The language model of --her lm: smollm2 (embedded, the default), a causal LM (.gguf, "
        "directory, hub name) or mlm:NAME for a masked LM.",
    ),
]


def cache_setting(cache: Path | None, no_cache: bool) -> Path | bool:
    """The library's ``cache`` of ``--cache`` and ``--no-cache``: False, a file, or True (the user
    cache); both at once are refused by :data:`NoCache`'s declaration (one would be ignored without
    a word)."""
    return False if no_cache else (cache or True)


def show_progress(quiet: bool = False, as_json: bool = False) -> bool:
    """Whether a command shows its progress (a bar on a terminal, a line every 30 s or so in a log):
    not ``--quiet``, not ``--json``."""
    return not quiet and not as_json


def run_and_print(job: Callable[..., Any], given: Mapping[str, Any], text: Callable[[Any], str]) -> None:
    """Call ``job`` with a command's options ``given`` (its ``locals()``; ``--quiet`` and ``--json``
    made ``progress``) and print the result: as JSON, or as ``text`` writes it."""
    options = {name: value for name, value in given.items() if name not in ("quiet", "as_json")}
    result = job(**options, progress=show_progress(given["quiet"], given["as_json"]))
    if given["as_json"]:
        echo_json(result)
    else:
        typer.echo(text(result))


def refuse_inapplicable_options(command: Callable[..., Any], given: Mapping[str, Any]) -> None:
    """Hold the options ``given`` to ``command`` (its ``locals()`` on entry) to what each declares it
    applies to (:class:`~nlibias.schema.applies.AppliesTo` on its type, e.g. :data:`By`): the same
    function that holds the Python API's parameters to theirs."""
    hints = typing.get_type_hints(command, include_extras=True)
    defaults = {name: p.default for name, p in inspect.signature(command).parameters.items()}
    refuse_inapplicable(given, hints, defaults)
