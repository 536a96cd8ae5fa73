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

import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from nlibias.cli.app import echo_json
from nlibias.debias.finetune_record import TrainingOptions
from nlibias.errors import ConfigError
from nlibias.runtime.options import ModelOptions, RunOptions
from nlibias.schema.applies import SEED_APPLIES, TABLES_APPLIES, refuse_inapplicable


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


@functools.cache
def _field_docs(options: type) -> dict[str, str | None]:
    """Each field's documentation, as pydantic reads it (a model's fields; a dataclass's JSON
    Schema, read once for all of its fields)."""
    from pydantic import BaseModel, TypeAdapter

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
    Path | None, typer.Option("--out", help="File to write the result into (default: print it on stdout).")
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
]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the prediction cache.")]

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

# --- models: where and how they run (help: the field's documentation in ModelOptions) -------------

Device = Annotated[str | None, documented(ModelOptions, "device")]
Dtype = Annotated[str | None, documented(ModelOptions, "dtype")]
Revision = Annotated[str | None, documented(ModelOptions, "revision")]
MaxTokens = Annotated[int, documented(ModelOptions, "max_tokens")]
LabelMap = Annotated[str | None, documented(ModelOptions, "label_map")]
Quantize = Annotated[str | None, documented(ModelOptions, "quantize")]
Compile = Annotated[bool, documented(ModelOptions, "compile")]
Threads = Annotated[int | None, documented(ModelOptions, "threads")]
Devices = Annotated[str | None, documented(ModelOptions, "devices")]
"""Given as one comma-separated list (``ModelOptions.devices`` is a tuple)."""
Ray = Annotated[str | None, documented(ModelOptions, "ray_address", "--ray")]
RayWorkers = Annotated[int, documented(ModelOptions, "ray_workers")]
RayGpusPerWorker = Annotated[float, documented(ModelOptions, "ray_gpus_per_worker")]
Concurrency = Annotated[int | None, documented(ModelOptions, "concurrency")]

# --- generative LMs -------------------------------------------------------------------------------

Mode = Annotated[str, documented(ModelOptions, "mode")]
MaxNewTokens = Annotated[int, documented(ModelOptions, "max_new_tokens")]
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
EvalSplit = Annotated[str, documented(TrainingOptions, "eval_split")]

# --- fine-tuning ---------------------------------------------------------------------------------

_MODEL = typer.Option(
    "--model",
    help="Hub name or directory of the model to fine-tune (e.g. bert-base-uncased); debias takes several "
    "(repeatable).",
)
Model = Annotated[str, _MODEL]
Models = Annotated[list[str], _MODEL]
LearningRate = Annotated[float | None, documented(TrainingOptions, "learning_rate")]
Epochs = Annotated[float, documented(TrainingOptions, "epochs")]
BatchSize = Annotated[int, documented(TrainingOptions, "batch_size")]
MaxLength = Annotated[int, documented(TrainingOptions, "max_length")]
MaxSteps = Annotated[int, documented(TrainingOptions, "max_steps")]
SaveSteps = Annotated[int, documented(TrainingOptions, "save_steps")]
LrScheduler = Annotated[str, documented(TrainingOptions, "lr_scheduler")]
WarmupSteps = Annotated[int, documented(TrainingOptions, "warmup_steps")]
WarmupRatio = Annotated[float, documented(TrainingOptions, "warmup_ratio")]

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
    cache); both at once are refused (one would be ignored without a word)."""
    if no_cache and cache is not None:
        raise ConfigError(
            f"{{no_cache}} and cache={str(cache)!r} contradict each other; give one of them",
            parameter="no_cache",
        )
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
