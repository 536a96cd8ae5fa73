"""``nlibias demo``: audit the embedded SmolLM2-135M on BBNLI with both paper prompts, offline.

A seeded, stratified sample of whole BBNLI pro/anti pairs, both prompt styles in scored mode
(through the prediction cache: a rerun reuses the answers), a run directory with its HTML report.
A 135M-parameter model demonstrates the pipeline, no more: :data:`DISCLAIMER` says so in the run.

>>> result = run_demo("runs/demo")   # doctest: +SKIP
>>> sorted(result["models"])         # doctest: +SKIP
['smollm2|prompt=entailed|scored', 'smollm2|prompt=true|scored']
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nlibias.benchmarks.bbnli import expand_bbnli
from nlibias.benchmarks.bbnli_source import BBNLI_DATA
from nlibias.benchmarks.data_locations import resolve_data
from nlibias.catalog.registry import with_benchmarks
from nlibias.errors import ConfigError
from nlibias.io.samples import write_samples
from nlibias.jobs.audit import run_audit
from nlibias.jobs.subset import MIN_PAIRS_PER_SUBTOPIC, sample_pairs_stratified
from nlibias.report.html import write_report
from nlibias.report.load import load_runs
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions, RunOptions
from nlibias.schema import Sample
from nlibias.schema.declared import declared

if TYPE_CHECKING:
    from nlibias.jobs.results import AuditResult

__all__ = [  # the sampler lives in nlibias.jobs.subset (audit --limit shares it); importable here as before
    "DEFAULT_SAMPLE_PAIRS",
    "DEMO_PROMPTS",
    "DISCLAIMER",
    "MIN_PAIRS_PER_SUBTOPIC",
    "demo",
    "run_demo",
    "sample_pairs_stratified",
    "write_demo_report",
]

DEFAULT_SAMPLE_PAIRS = 240
"""Pairs in the default demo sample (15 per subtopic on average). Measured with ``nlibias demo`` on
2 CPU cores (AMD EPYC, torch 2 threads), first run including the GGUF conversion: 4 min 18 s wall
(load average about 2 from other work); about 5 min on a busier machine."""
DEMO_PROMPTS: tuple[str, ...] = ("true", "entailed")
EXPLAIN_PAIRS = 16
"""Pairs of ``nlibias demo --explain``: one per subtopic, the fewest the stratified sample takes
(generated answers are much slower than scored ones)."""
DEMO_JUDGE = "prompt:smollm2"
"""The NLI judge of ``demo --explain``: the embedded SmolLM2 asked for the three labels (offline)."""
DISCLAIMER = (
    "SmolLM2-135M-Instruct is a 135-million-parameter model run here to demonstrate the audit end "
    "to end, offline. Its answers are a demonstration, not a verdict: they say little about larger "
    "models, and a sample of pairs gives wide intervals. Audit real models with `nlibias audit`."
)


@declared
def demo(
    out_dir: str | Path = "runs/demo",
    *,
    full: bool = False,
    pairs: int | None = None,
    seed: int = 0,
    cache: str | Path | None = None,
    bootstrap: int = 1000,
    progress: bool = True,
    explain: bool = False,
) -> dict[str, Any]:
    """Audit the embedded SmolLM2-135M-Instruct with both paper prompts on a sample of BBNLI
    pairs (``pairs``, default :data:`DEFAULT_SAMPLE_PAIRS`; ``full``: every bias-audit sample) and
    write the run, its tables and its HTML report into ``out_dir``; as ``nlibias demo``
    (``nlibias.demo``). Offline. Returns what the command prints. ``explain``: generated answers
    (default :data:`EXPLAIN_PAIRS` pairs) whose explanations the embedded model then labels as an
    NLI judge (:data:`DEMO_JUDGE`), so the report has its explanations section.

    >>> # nlibias.demo("runs/demo", pairs=20)["tables"]"""
    return run_demo(
        out_dir,
        full=full,
        sample_pairs=pairs or (EXPLAIN_PAIRS if explain else DEFAULT_SAMPLE_PAIRS),
        seed=seed,
        cache_path=cache,
        bootstrap=bootstrap,
        progress=progress,
        judge=DEMO_JUDGE if explain else None,
    )


def run_demo(
    out_dir: str | Path = "runs/demo",
    *,
    full: bool = False,
    sample_pairs: int = DEFAULT_SAMPLE_PAIRS,
    seed: int = 0,
    model: str = "smollm2",
    prompts: Sequence[str] = DEMO_PROMPTS,
    mode: str = "scored",
    cache_path: str | Path | None = None,
    data_dir: str | Path | None = None,
    bootstrap: int = 1000,
    progress: bool = False,
    judge: str | None = None,
) -> dict[str, Any]:
    """Run the demo into ``out_dir`` (:func:`demo`, with the model, prompts and data directory
    open for tests and benchmarks); returns what the CLI prints. ``judge``: label the explanations
    of generated answers (the audit then generates) before the report is written."""
    if not full and sample_pairs < 1:
        raise ConfigError(
            f"{{sample_pairs}} is {sample_pairs}; the demo audits at least one pair (or full=True for all)",
            parameter="sample_pairs",
        )
    started = time.perf_counter()
    out = Path(out_dir)
    samples, pairs_available = _write_demo_samples(out, full, sample_pairs, seed, data_dir)
    demo_info = {
        "disclaimer": DISCLAIMER,
        "full": full,
        "pairs": len({s.pair_key for s in samples}),
        "pairs_available": pairs_available,
        "subtopics": len({s.subtopic for s in samples}),
        "seed": seed,
    }
    result = run_audit(
        out,
        ModelSet.of(generative=[model], prompts=list(prompts)),
        options=ModelOptions(mode="generated" if judge is not None else mode),
        run=RunOptions(cache=cache_path or True, bootstrap=bootstrap, seed=seed, progress=progress),
        out_dir=out,
        extra={"demo": demo_info},
        note=DISCLAIMER,
    )
    if judge is not None:
        from nlibias.jobs.explain import run_explain

        run_explain(out, [judge], cache=cache_path or True, bootstrap=bootstrap, seed=seed, progress=progress)
    report_path = write_demo_report(out)
    return _demo_summary(out, samples, pairs_available, result, report_path, started)


def _write_demo_samples(
    out: Path, full: bool, sample_pairs: int, seed: int, data_dir: str | Path | None
) -> tuple[list[Sample], int]:
    """Expand BBNLI, keep every bias-audit sample (``full``) or a stratified sample of pairs, write
    them into the run directory; returns them and the number of pairs BBNLI has."""
    expansion = expand_bbnli(resolve_data(BBNLI_DATA, data_dir))
    bias = expansion.bias_samples
    samples = bias if full else sample_pairs_stratified(bias, sample_pairs, seed=seed)
    write_samples(out, samples)
    return samples, expansion.n_pairs


def _demo_summary(
    out: Path,
    samples: Sequence[Sample],
    pairs_available: int,
    result: AuditResult,
    report_path: Path,
    started: float,
) -> dict[str, Any]:
    """What :func:`run_demo` returns: files, sizes, per-model stats, overall measures, tables."""
    metrics = result.metrics
    models = metrics["models"]
    runs = metrics["run"]["models"]
    return {
        "out_dir": str(out),
        "files": {
            name: str(out / name)
            for name in (
                "samples.jsonl",
                "samples.parquet",
                "predictions.jsonl",
                "metrics.json",
                "tables.txt",
                "report.html",
            )
        },
        "report": str(report_path),
        "n_samples": len(samples),
        "n_pairs": len({s.pair_key for s in samples}),
        "pairs_available": pairs_available,
        "subtopics": metrics["demo"]["subtopics"],
        "models": {key: runs[key]["stats"] for key in runs},
        "overall": {
            key: {
                name: value["overall"].get(name)
                for name in ("yes_rate_pro", "yes_rate_anti", "n_unparsed", "cf_pro", "cf_anti", "cf_error")
            }
            for key, value in models.items()
        },
        "tables": result.tables_text,
        "disclaimer": DISCLAIMER,
        "seconds": round(time.perf_counter() - started, 2),
    }


def write_demo_report(run_dir: Path) -> Path:
    """``report.html`` in the run directory, as ``nlibias report RUN`` writes it; figures when
    matplotlib is installed (``nlibias[report]``), otherwise the report without them."""
    import importlib.util

    target = run_dir / "report.html"
    write_report(
        with_benchmarks(load_runs([run_dir])),
        target,
        plots=importlib.util.find_spec("matplotlib") is not None,
    )
    return target
