"""``nlibias demo``: the embedded SmolLM2-135M audited offline on a seeded, stratified sample of
BBNLI pairs with both paper prompts; a demonstration, not a verdict (:data:`DISCLAIMER`).

>>> result = run_demo("runs/demo")   # doctest: +SKIP
>>> sorted(result["models"])         # doctest: +SKIP
['smollm2|prompt=entailed|scored', 'smollm2|prompt=true|scored']
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlibias.benchmarks.bbnli import expand_bbnli
from nlibias.benchmarks.bbnli_source import BBNLI_DATA
from nlibias.benchmarks.data_locations import resolve_data
from nlibias.catalog.registry import with_benchmarks
from nlibias.errors import ConfigError
from nlibias.io.run_dir import OUTPUT_FILES
from nlibias.io.samples import SAMPLES_JSONL, SAMPLES_PARQUET, write_samples
from nlibias.jobs.audit import run_audit
from nlibias.jobs.explain import run_explain
from nlibias.jobs.results import AuditResult
from nlibias.jobs.subset import MIN_PAIRS_PER_SUBTOPIC, sample_pairs_stratified
from nlibias.report.html import write_report
from nlibias.report.load import load_runs
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions, RunOptions
from nlibias.schema import Sample
from nlibias.schema.declared import PositiveInt, Resamples, Seed, declared

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
"""Pairs in the default demo sample (15 per subtopic on average; about 5 min on 2 CPU cores)."""
DEMO_PROMPTS: tuple[str, ...] = ("true", "entailed")
DEMO_FILES = (SAMPLES_JSONL, SAMPLES_PARQUET, *OUTPUT_FILES, "report.html")
EXPLAIN_PAIRS = 16
"""Pairs of ``nlibias demo --explain``: one per subtopic (generated answers are slow)."""
DEMO_JUDGE = "prompt:smollm2"
"""The NLI judge of ``demo --explain``: the embedded SmolLM2 asked for the three labels."""
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
    pairs: PositiveInt | None = None,
    seed: Seed = 0,
    cache: str | Path | None = None,
    bootstrap: Resamples = 1000,
    progress: bool = True,
    explain: bool = False,
) -> dict[str, Any]:
    """``nlibias demo``: audit SmolLM2-135M-Instruct on ``pairs`` BBNLI pairs (``full``: all) into
    ``out_dir`` with its HTML report; returns what the command prints. ``explain``: generated
    answers, their explanations labelled by :data:`DEMO_JUDGE`.

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
    """:func:`demo` with the model, prompts and data directory open (tests, benchmarks); ``judge``
    labels the explanations of generated answers before the report is written."""
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
        run_explain(out, [judge], cache=cache_path or True, bootstrap=bootstrap, seed=seed, progress=progress)
    report_path = write_demo_report(out)
    return _demo_summary(out, samples, pairs_available, result, report_path, started)


def _write_demo_samples(
    out: Path, full: bool, sample_pairs: int, seed: int, data_dir: str | Path | None
) -> tuple[list[Sample], int]:
    """BBNLI's bias-audit samples (all, or a stratified sample of pairs) written into ``out``, and
    the number of pairs BBNLI has."""
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
        "files": {name: str(out / name) for name in DEMO_FILES},
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
    """``report.html`` in the run directory, with figures when matplotlib is installed."""
    target = run_dir / "report.html"
    write_report(
        with_benchmarks(load_runs([run_dir])),
        target,
        plots=importlib.util.find_spec("matplotlib") is not None,
    )
    return target
