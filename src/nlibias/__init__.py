"""nlibias: audit social bias in NLI models and LLMs, and extend bias benchmarks (BBNLI-next).

The Python API is the command line's, function for function (both call :mod:`nlibias.jobs.run`):

>>> import nlibias
>>> samples = nlibias.expand("occupations")
>>> result = nlibias.audit(samples, models=["fake:a"], cache=False, bootstrap=0, progress=False)
>>> frame = result.to_frame()
>>> list(frame.columns)
['model', 'slicing', 'slice', 'measure', 'value', 'ci_low', 'ci_high', 'n']
>>> frame.query("slicing == 'overall' and measure == 'S'")["value"].round(2).tolist()
[33.04]

The package imports nothing heavy at import time; torch, transformers and pandas are imported by
the functions that need them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nlibias.jobs.audit import AuditResult
    from nlibias.jobs.expand import Samples
    from nlibias.jobs.run import CacheOption
    from nlibias.schema import Sample

__version__ = "0.1.0"
__all__ = ["__version__", "audit", "expand", "list_benchmarks", "load_run", "score"]


def expand(
    name: str, source: str | Path | None = None, *, out_dir: str | Path | None = None, **options: Any
) -> Samples:
    """Expand a registered benchmark (``bbnli``, ``wq-nli``, ``occupations``, ...) from ``source``
    (default: its file in the data dir) into samples written to ``out_dir`` (default: a new
    temporary directory). ``options``: the benchmark's own (occupations: ``balance``)."""
    from nlibias.jobs.expand import expand_samples

    return expand_samples(name, source, out_dir=out_dir, **options)


def _samples_path(samples: Samples | str | Path | Sequence[Sample]) -> str | Path:
    """A samples file for the audit: the given one, or the given sample objects written to a
    temporary run directory."""
    from nlibias.jobs.expand import Samples

    if isinstance(samples, Samples):
        return samples.path
    if isinstance(samples, str | Path):
        return samples
    import tempfile

    from nlibias.errors import ConfigError
    from nlibias.io.samples import write_samples
    from nlibias.schema import Sample

    records = list(samples)
    if not records or not all(isinstance(s, Sample) for s in records):
        raise ConfigError(
            "samples must be what expand() returned, a run directory or samples file, or Sample objects",
            parameter="samples",
        )
    directory = tempfile.mkdtemp(prefix="nlibias-samples-")
    write_samples(directory, records)
    return directory


def audit(
    samples: Samples | str | Path | Sequence[Sample],
    models: str | Sequence[str] = (),
    generative: str | Sequence[str] = (),
    prompts: str | Sequence[str] = (),
    *,
    cache: CacheOption = True,
    out_dir: str | Path | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    progress: bool = True,
    **model_options: Any,
) -> AuditResult:
    """Audit NLI classifiers (``models``: hub names, local directories, ``fake:NAME``) and
    generative LMs (``generative``: ``smollm2``, ``hf:NAME``, ``gguf:PATH``,
    ``openai:URL#MODEL``, asked with each of ``prompts``: ``true``, ``entailed`` or prompt files)
    on ``samples``; as ``nlibias audit``. ``mlm=`` / ``causal=`` add language models scoring the
    samples' sentence pairs (token-probability bias; ``tp_variants=["shared", "whole"]``).
    ``cache``: True (the user prediction cache), False, or a file. Returns an :class:`~nlibias.jobs.audit.AuditResult` with its predictions in memory."""
    from nlibias.jobs.run import run_audit

    return run_audit(
        _samples_path(samples),
        models,
        generative,
        prompts,
        cache=cache,
        out_dir=out_dir,
        bootstrap=bootstrap,
        seed=seed,
        progress=progress,
        **model_options,
    ).materialised()


def score(
    samples: Samples | str | Path | Sequence[Sample],
    predictions: str | Path,
    *,
    out_dir: str | Path | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> AuditResult:
    """Score a predictions file (from nlibias or any tool: JSONL with ``id``, ``label``, optional
    ``model`` and ``probs``) with the samples' measures; as ``nlibias score``."""
    from nlibias.jobs.run import run_score

    return run_score(
        _samples_path(samples), predictions, out_dir=out_dir, bootstrap=bootstrap, seed=seed
    ).materialised()


def load_run(directory: str | Path) -> AuditResult:
    """The result of an earlier audit or scoring, from its run directory."""
    from nlibias.jobs.run import load_run as load

    return load(directory)


def list_benchmarks() -> list[dict[str, Any]]:
    """The registered benchmarks: name, description, sample sources, whether they expand."""
    from nlibias.benchmarks.registry import describe_benchmarks

    return describe_benchmarks()
