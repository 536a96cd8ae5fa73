"""The options several commands share, each defined once (annotated Typer options).

A command takes an option by its alias here, so a flag means one thing with one help text in every
command: ``seed: Seed = 0``. An alias carries no default: a command gives its own in its signature
(``--seed`` is 0 for an audit, 42 for a fine-tune), and an alias without one is a required option.
Where one flag takes a value of another type in another command (one ``--out`` file or none), two
aliases share one definition. The fine-tuning and augmentation flags that ``finetune``, ``augment``
and ``debias`` share are in :mod:`nlibias.cli.training_options`.

A command that prints takes ``--quiet`` (no progress bars or progress lines; results still print)
and ``--json`` (its result as JSON on stdout, nothing else there). Progress bars appear only when
stderr is a terminal (:func:`nlibias.runtime.progress.bars_wanted`), so logs never fill with them.

>>> import typer
>>> demo = typer.Typer(add_completion=False)
>>> @demo.command()
... def command(quiet: Quiet = False, as_json: Json = False, seed: Seed = 0) -> None: ...
>>> [p.opts for p in typer.main.get_command(demo).params]
[['--quiet', '-q'], ['--json'], ['--seed']]
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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
OptionalSeed = Annotated[int | None, _SEED]
Bootstrap = Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples for the 95% CIs (0: none).")]
By = Annotated[
    str,
    typer.Option(
        "--by", help="Slices in the printed tables: domain or subtopic (metrics.json always has both)."
    ),
]
Limit = Annotated[
    int | None,
    typer.Option(
        "--limit",
        help="Audit a stratified subset of about N samples: pro/anti pairs kept whole, every subtopic, "
        "drawn with --seed (recorded in metrics.json under subset). For a quick first look.",
    ),
]

# --- models: where and how they run ---------------------------------------------------------------

Device = Annotated[
    str | None,
    typer.Option(
        "--device", help="cpu, cuda, cuda:1, mps, ... Default: GPU when present (or $NLIBIAS_DEVICE)."
    ),
]
Dtype = Annotated[
    str | None,
    typer.Option(
        "--dtype",
        help="Weights of local models: auto, float32, bfloat16 or float16. Default auto: the checkpoint's "
        "own (float32 unless its config records another), on every device. bfloat16 is faster on a GPU; "
        "its probabilities move a little from float32's.",
    ),
]
Revision = Annotated[
    str | None, typer.Option("--revision", help="Hub revision (branch, tag or commit) to pin.")
]
MaxTokens = Annotated[int, typer.Option("--max-tokens", help="Token budget of one batch (padding included).")]
LabelMap = Annotated[
    str | None,
    typer.Option(
        "--label-map",
        help="Override the classifiers' label mapping, e.g. 0=entailment,1=neutral,2=contradiction.",
    ),
]
Quantize = Annotated[
    str | None,
    typer.Option(
        "--quantize",
        help="CPU only: int8 (dynamic int8 Linear layers). Faster, but changes probabilities and can flip "
        "labels: check agreement on your model first. Measured speed and agreement: docs/benchmarks.md "
        "(Optional speed flags).",
    ),
]
Compile = Annotated[
    bool,
    typer.Option(
        "--compile",
        help="torch.compile the classifiers: tens of seconds of compilation, no reliable gain "
        "measured on CPU (docs/benchmarks.md).",
    ),
]
Threads = Annotated[int | None, typer.Option("--threads", help="torch CPU threads (default: one per core).")]
Devices = Annotated[
    str | None,
    typer.Option(
        "--devices",
        help="Shard each classifier over these devices, one worker process each, e.g. "
        "cuda:0,cuda:1 (docs/scaling.md). Same results and cache entries as one process.",
    ),
]
Ray = Annotated[
    str | None,
    typer.Option(
        "--ray",
        help="Run each classifier on Ray Data actors: 'local' starts a local Ray instance, or a "
        "cluster address ('auto', 'ray://host:10001'). Needs nlibias[ray] (docs/scaling.md).",
    ),
]
RayWorkers = Annotated[int, typer.Option("--ray-workers", help="Ray actors per classifier.")]
RayGpusPerWorker = Annotated[
    float, typer.Option("--ray-gpus-per-worker", help="GPUs each Ray actor asks for (0: CPU actors).")
]
Concurrency = Annotated[
    int | None,
    typer.Option(
        "--concurrency",
        help="Requests in flight to each openai:URL#MODEL server (default 4). Raise it for a GPU server "
        "that batches concurrent requests, such as vLLM (docs/scaling.md).",
    ),
]

# --- generative LMs -------------------------------------------------------------------------------

Mode = Annotated[
    str, typer.Option("--mode", help="Generative answers: scored (one forward pass) or generated.")
]
MaxNewTokens = Annotated[int, typer.Option("--max-new-tokens", help="Token limit of generated answers.")]

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


def show_progress(quiet: bool = False, as_json: bool = False) -> bool:
    """Whether a command draws progress bars: not ``--quiet``, not ``--json``, and stderr is a
    terminal (:func:`nlibias.runtime.progress.bars_wanted`)."""
    from nlibias.runtime.progress import bars_wanted

    return bars_wanted(not quiet and not as_json)
