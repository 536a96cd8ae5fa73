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
from typing import Annotated, Any

from nlibias.benchmarks.bbnli import expand_bbnli
from nlibias.benchmarks.bbnli_source import BBNLI_DATA
from nlibias.benchmarks.data_locations import resolve_data
from nlibias.catalog.registry import with_benchmarks
from nlibias.io.atomic import locked_folder
from nlibias.io.run_dir import OUTPUT_FILES
from nlibias.io.samples import SAMPLES_JSONL, SAMPLES_PARQUET, write_samples
from nlibias.jobs.audit import run_audit
from nlibias.jobs.explain import run_explain
from nlibias.jobs.subset import sample_pairs_stratified
from nlibias.report.html import write_report
from nlibias.report.load import load_runs
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions, RunOptions
from nlibias.schema.applies import AppliesTo
from nlibias.schema.declared import PathArg, PositiveInt, Refuse, Resamples, Seed, declared
from nlibias.schema.paths import CachePath

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

SOME_PAIRS = Refuse(
    lambda pairs: pairs < 1,
    lambda pairs: f"is {pairs}; the demo audits at least one pair (or pass {{full}} for all)",
    ("full",),
)
"""The pairs :func:`run_demo` samples: at least one."""
PAIRS_APPLIES = AppliesTo(
    "the stratified sample",
    lambda settings: not settings.get("full"),
    "{full} audits every pair",
    fix="leave {{pairs}} out, or leave {{full}} out",
    names=("full",),
)


@declared
def demo(
    out_dir: PathArg = "runs/demo",
    *,
    full: bool = False,
    pairs: Annotated[PositiveInt | None, PAIRS_APPLIES] = None,
    seed: Seed = 0,
    cache: CachePath | None = None,
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


@declared
def run_demo(
    out_dir: PathArg = "runs/demo",
    *,
    full: bool = False,
    sample_pairs: Annotated[int, SOME_PAIRS] = DEFAULT_SAMPLE_PAIRS,
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
    started = time.perf_counter()
    out = Path(out_dir)
    expansion = expand_bbnli(resolve_data(BBNLI_DATA, data_dir))
    bias = expansion.bias_samples
    samples = bias if full else sample_pairs_stratified(bias, sample_pairs, seed=seed)
    pairs, subtopics = len({s.pair_key for s in samples}), len({s.subtopic for s in samples})
    demo_info = {
        "disclaimer": DISCLAIMER,
        "full": full,
        "pairs": pairs,
        "pairs_available": expansion.n_pairs,
        "subtopics": subtopics,
        "seed": seed,
    }
    drawn = seed if bootstrap else 0  # the bootstrap's seed; with none drawn, it picked the pairs only
    with locked_folder(out):  # another demo into it at once: its sample, run and report wait
        write_samples(out, samples)
        result = run_audit(
            out,
            ModelSet.of(generative=[model], prompts=list(prompts)),
            options=ModelOptions(mode="generated" if judge is not None else mode),
            run=RunOptions(cache=cache_path or True, bootstrap=bootstrap, seed=drawn, progress=progress),
            out_dir=out,
            extra={"demo": demo_info},
            note=DISCLAIMER,
        )
        if judge is not None:
            run_explain(
                out, [judge], cache=cache_path or True, bootstrap=bootstrap, seed=drawn, progress=progress
            )
        report_path = write_demo_report(out)
    shown = ("yes_rate_pro", "yes_rate_anti", "n_unparsed", "cf_pro", "cf_anti", "cf_error")
    return {  # files, sizes, per-model stats, overall measures, tables
        "out_dir": str(out),
        "files": {name: str(out / name) for name in DEMO_FILES},
        "report": str(report_path),
        "n_samples": len(samples),
        "n_pairs": pairs,
        "pairs_available": expansion.n_pairs,
        "subtopics": subtopics,
        "models": {key: run["stats"] for key, run in result.metrics["run"]["models"].items()},
        "overall": {
            key: {n: m["overall"].get(n) for n in shown} for key, m in result.metrics["models"].items()
        },
        "tables": result.tables_text,
        "disclaimer": DISCLAIMER,
        "seconds": round(time.perf_counter() - started, 2),
    }


def write_demo_report(run_dir: Path) -> Path:
    """``report.html`` in the run directory, with figures when matplotlib is installed."""
    plots = importlib.util.find_spec("matplotlib") is not None
    write_report(with_benchmarks(load_runs([run_dir])), run_dir / "report.html", plots=plots)
    return run_dir / "report.html"
