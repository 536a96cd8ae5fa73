"""nlibias: audit social bias in NLI models and LLMs, and extend bias benchmarks (BBNLI-next).

The Python API is the command line's, function for function (both call :mod:`nlibias.jobs.run`):

>>> import nlibias
>>> samples = nlibias.expand("occupations")
>>> result = nlibias.audit(samples, models=["fake:a"], cache=False, bootstrap=0, progress=False)
>>> frame = result.to_frame()
>>> list(frame.columns)
['model', 'slicing', 'slice', 'measure', 'value', 'ci_low', 'ci_high', 'n']
>>> frame.query("slicing == 'overall' and measure == 'S'")["value"].round(2).tolist()
[49.91]

The package imports nothing heavy at import time; torch, transformers and pandas are imported by
the functions that need them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nlibias.version import __version__

if TYPE_CHECKING:
    from nlibias.benchmarks.base import Benchmark
    from nlibias.benchmarks.registry import register_benchmark
    from nlibias.jobs.audit import AuditResult
    from nlibias.jobs.expand import Samples
    from nlibias.jobs.run import CacheOption
    from nlibias.models.base import NLIClassifier
    from nlibias.runtime.base import Predictor
    from nlibias.schema import Prediction, Sample

_PUBLIC_TYPES = {
    "AuditResult": "nlibias.jobs.audit",
    "Samples": "nlibias.jobs.expand",
    "Sample": "nlibias.schema",
    "Prediction": "nlibias.schema",
    "Benchmark": "nlibias.benchmarks.base",
    "register_benchmark": "nlibias.benchmarks.registry",
    "Predictor": "nlibias.runtime.base",
    "NLIClassifier": "nlibias.models.base",
}
"""The public types, imported when first used (the package itself imports nothing heavy)."""

__all__ = [
    "AuditResult",
    "Benchmark",
    "NLIClassifier",
    "Prediction",
    "Predictor",
    "Sample",
    "Samples",
    "__version__",
    "audit",
    "expand",
    "list_benchmarks",
    "load_run",
    "register_benchmark",
    "score",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC_TYPES.get(name)
    if module is None:
        raise AttributeError(f"module 'nlibias' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def expand(
    name: str, source: str | Path | None = None, *, out_dir: str | Path | None = None, **options: Any
) -> Samples:
    """Expand a registered benchmark (``bbnli``, ``wq-nli``, ``occupations``, ...) from ``source``
    (default: its file in the data dir) into samples written to ``out_dir`` (default: a new
    temporary directory). ``options``: the benchmark's own (occupations: ``balance``)."""
    from nlibias.jobs.expand import expand_samples

    return expand_samples(name, source, out_dir=out_dir, **options)


@contextmanager
def _samples_on_disk(samples: Samples | str | Path | Sequence[Sample]) -> Iterator[str | Path]:
    """A samples file for the audit: the given one, or the given sample objects written to a
    temporary run directory that is removed when the audit is done."""
    from nlibias.jobs.expand import Samples

    if isinstance(samples, Samples):
        yield samples.path
        return
    if isinstance(samples, str | Path):
        yield samples
        return
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
    with tempfile.TemporaryDirectory(prefix="nlibias-samples-") as directory:
        write_samples(directory, records)
        yield directory


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

    with _samples_on_disk(samples) as path:
        return run_audit(
            path,
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

    with _samples_on_disk(samples) as path:
        return run_score(path, predictions, out_dir=out_dir, bootstrap=bootstrap, seed=seed).materialised()


def load_run(directory: str | Path) -> AuditResult:
    """The result of an earlier audit or scoring, from its run directory."""
    from nlibias.jobs.run import load_run as load

    return load(directory)


def list_benchmarks() -> list[dict[str, Any]]:
    """The registered benchmarks: name, description, sample sources, whether they expand."""
    from nlibias.benchmarks.registry import describe_benchmarks

    return describe_benchmarks()
