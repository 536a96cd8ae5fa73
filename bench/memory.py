"""Peak memory (RSS) of ``nlibias audit`` over the BBNLI set with a BERT-base-sized model.

The whole command (read the samples, predict through the default caps, score with 200
bootstrap resamples, write the run directory; ``--no-cache``) runs in a child process, which
prints its own peak resident set size (``VmHWM``) when it is done.

Then, growth with the number of samples: the whole ``nlibias audit`` command (read, predict,
score with 200 bootstrap resamples, write) with a tiny classifier, so that the model does not
dominate, on BBNLI copied 6 and 18 times with distinct hypotheses (the shape of an extended run:
18,804 and 56,412 samples) and on a third of WinoQueer-NLI and all of it (25,429 and 76,288);
each run in its own process, which reports its own peak RSS, once with glibc's default
allocator settings and once with a fixed mmap threshold, plus the peak of what the audit
allocates (``tracemalloc``); see :func:`growth`. The growth per added sample between a set and
the one three times its size (same benchmark, so fixed costs cancel) is compared with the bytes
the audit writes per sample (``predictions.jsonl``): the target is "memory does not grow beyond
the outputs themselves".

    python bench/memory.py              # every unique pair (a full audit: long on 2 busy cores)
    python bench/memory.py --pairs 256  # the first 256 unique pairs
    python bench/memory.py --quick      # 32 pairs
    python bench/memory.py --growth-only
    python bench/memory.py --score      # the growth runs of `nlibias score` (~2 min)
    python bench/memory.py --code OLD_CHECKOUT/src   # the growth runs of another commit (RSS only)
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common as common

TARGET_GIB = 2.0


_RSS_MARKER = "peak-rss-kib="


def cli_child(arguments: list[str]) -> None:
    """Run ``nlibias ARGUMENTS`` in this process, then print this process's peak RSS."""
    from nlibias.cli.main import main as nlibias_main

    sys.argv = ["nlibias", *arguments]
    try:
        nlibias_main()
    except SystemExit as stop:
        if stop.code not in (0, None):
            raise
    print(f"{_RSS_MARKER}{own_peak_rss_kib()}")


def own_peak_rss_kib() -> int:
    """This process's peak resident set size in KiB: ``VmHWM``, the high-water mark of its own
    memory map. Not ``getrusage``: its ``ru_maxrss`` keeps the high-water mark of the process
    image before ``exec``, i.e. of this script's parent at fork time, which holds the sample sets.
    """
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # not Linux: the best available


def audit_peak_rss(
    samples_dir: Path, model_dir: Path, out_dir: Path, repeats: int = 1, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Peak RSS of ``nlibias audit`` over ``samples_dir`` (own process each time, with ``env``
    added to the environment; the median of ``repeats`` runs), with the files' sizes."""
    arguments = [
        "audit", "--samples", str(samples_dir), "--model", str(model_dir), "--out", str(out_dir),
        "--no-cache", "--bootstrap", "200", "--quiet",
    ]  # fmt: skip
    return command_peak_rss(arguments, samples_dir, out_dir, repeats, env)


def score_peak_rss(
    samples_dir: Path, predictions: Path, out_dir: Path, repeats: int = 1, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Peak RSS of ``nlibias score`` of ``predictions`` against ``samples_dir`` (as
    :func:`audit_peak_rss`)."""
    arguments = [
        "score", "--samples", str(samples_dir), "--predictions", str(predictions), "--out", str(out_dir),
        "--bootstrap", "200",
    ]  # fmt: skip
    return command_peak_rss(arguments, samples_dir, out_dir, repeats, env)


def command_peak_rss(
    arguments: list[str], samples_dir: Path, out_dir: Path, repeats: int, env: dict[str, str] | None
) -> dict[str, Any]:
    peaks, times = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, __file__, "--cli-child", *arguments],
            capture_output=True, text=True, check=True, env={**os.environ, **(env or {})},
        )  # fmt: skip
        times.append(time.perf_counter() - start)
        peaks.append(int(result.stdout.strip().splitlines()[-1].removeprefix(_RSS_MARKER)))
    peak_kib, seconds = statistics.median(peaks), statistics.median(times)
    samples_file = samples_dir / "samples.jsonl"
    n = sum(1 for _ in samples_file.open(encoding="utf-8"))
    return {
        "samples": n,
        "seconds": round(seconds, 1),
        "peak_rss_mib": round(peak_kib / 1024, 1),
        "peak_rss_mib_runs": [round(k / 1024, 1) for k in peaks],
        "samples_jsonl_bytes": samples_file.stat().st_size,
        "predictions_jsonl_bytes": (out_dir / "predictions.jsonl").stat().st_size,
    }


def replicated(samples: list[Any], copies: int) -> list[Any]:
    """``copies`` copies of ``samples`` with their own ids, pair keys and hypotheses (each copy's
    hypotheses end in " (copy k)"), so every copy is predicted: the shape of an extended run."""
    from dataclasses import replace

    out = list(samples)
    for k in range(1, copies):
        out += [
            replace(
                s,
                id=f"{s.id}#copy{k}",
                pair_key=None if s.pair_key is None else f"{s.pair_key}#copy{k}",
                hypothesis=f"{s.hypothesis} (copy {k})",
            )
            for s in samples
        ]
    return out


#: The sets the growth per sample is measured between: the same benchmark, three times the samples.
SEGMENTS = (("bbnli-x6", "bbnli-x18"), ("wq-nli-third", "wq-nli"))
#: glibc's fixed mmap threshold (see :func:`growth`).
FIXED_MMAP_THRESHOLD = {"MALLOC_MMAP_THRESHOLD_": "131072"}


def growth_sets() -> dict[str, Callable[[], list[Any]]]:
    """How to make each set of :data:`SEGMENTS`."""
    from nlibias.benchmarks.wq_nli import expand_wq_nli

    return {
        "bbnli-x6": lambda: replicated(common.bbnli_samples(), 6),
        "bbnli-x18": lambda: replicated(common.bbnli_samples(), 18),
        "wq-nli-third": lambda: (wq := list(expand_wq_nli().samples))[: len(wq) // 3],
        "wq-nli": lambda: list(expand_wq_nli().samples),
    }


def audit_job(samples_dir: Path, predictors: list[Any]) -> Callable[[], object]:
    """A streamed audit of ``samples_dir`` (no output files), for :func:`nlibias.testing.memory.traced_peak`."""
    from nlibias.catalog.registry import read_benchmark_samples
    from nlibias.jobs.audit import audit_samples

    return lambda: audit_samples(read_benchmark_samples(samples_dir), predictors, out_dir=None,
                                 cache=None, bootstrap=200, progress=False)  # fmt: skip


def score_job(samples_dir: Path, predictions: Path) -> Callable[[], object]:
    """A streamed scoring of ``predictions`` (no output files), for :func:`nlibias.testing.memory.traced_peak`."""
    from nlibias.jobs.score import run_score

    return lambda: run_score(samples_dir, predictions, out_dir=None, bootstrap=200)


def tiny_model(work: Path) -> Path:
    """The tiny classifier of the growth runs (built once under ``work``)."""
    from nlibias.testing import bbnli_texts, build_tiny_nli_classifier

    model_dir = work / "tiny-nli"
    if not (model_dir / "config.json").exists():
        build_tiny_nli_classifier(model_dir, bbnli_texts())
    return model_dir


def growth(work: Path, repeats: int, code: Path | None = None) -> dict[str, Any]:
    """Growth of an audit's memory with the number of samples, three ways, between each pair of
    :data:`SEGMENTS`:

    - ``rss``: peak RSS of ``nlibias audit`` in its own process (median of ``repeats``). With
      glibc's default (dynamic) mmap threshold, buffers freed during inference stay in the heap,
      so this rises with the number of batches run and varies by +-25 MB between identical runs.
    - ``rss_fixed_mmap``: the same with ``MALLOC_MMAP_THRESHOLD_=131072`` (big buffers go back to
      the system when freed; ~10% slower inference for a BERT-base model): one run, stable.
    - ``traced``: the peak of what the audit allocates (:func:`nlibias.testing.memory.traced_peak`).

    ``code``: a ``src`` directory of another nlibias checkout (e.g. an older commit) that the
    audits run instead (``PYTHONPATH``); only the RSS measures are taken then.
    """
    from nlibias.io.samples import write_samples
    from nlibias.runtime.build import build_predictors
    from nlibias.testing.memory import traced_peak  # not at the top: the measured child imports this file

    model_dir = tiny_model(work)
    env = {} if code is None else {"PYTHONPATH": str(code)}
    predictors = build_predictors([str(model_dir)])
    if code is None:  # imports and the first forward, not to be counted by traced_peak
        write_samples(work / "warm-up", common.bbnli_samples()[:2000])
        audit_job(work / "warm-up", predictors)()
    rows: dict[str, dict[str, Any]] = {}
    for name, build in growth_sets().items():
        write_samples(work / name, build())
        args = (work / name, model_dir, work / f"out-{name}")
        traced = (
            None if code is not None else functools.partial(traced_peak, audit_job(work / name, predictors))
        )
        rows[name] = measured_set(name, audit_peak_rss, args, env, traced, repeats)
    return {"runs": list(rows.values()), "segments": growth_segments(rows)}


def measured_set(
    name: str,
    peak_rss: Callable[..., dict[str, Any]],
    args: tuple[Any, ...],
    env: dict[str, str],
    traced: Callable[[], int] | None,
    repeats: int,
) -> dict[str, Any]:
    """One growth set's row: ``peak_rss(*args, runs, env=...)`` with glibc's defaults (median of
    ``repeats`` runs) and with a fixed mmap threshold (one run), and the traced peak (NaN without
    ``traced``)."""
    row = {"set": name, **peak_rss(*args, repeats, env=env)}
    row["peak_rss_mib_fixed_mmap"] = peak_rss(*args, 1, env={**env, **FIXED_MMAP_THRESHOLD})["peak_rss_mib"]
    row["traced_peak_mib"] = round((traced() if traced is not None else math.nan) / 2**20, 1)
    print(f"  {name}: {row['samples']} samples, peak RSS {row['peak_rss_mib_runs']} MiB", flush=True)
    return row


def growth_segments(rows: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Bytes per added sample between the sets of each of :data:`SEGMENTS`, each way measured."""
    segments = []
    for small_name, large_name in SEGMENTS:
        small, large = rows[small_name], rows[large_name]

        def per_sample(key: str, small: dict[str, Any] = small, large: dict[str, Any] = large) -> int | None:
            growth = (large[key] - small[key]) * 2**20 / (large["samples"] - small["samples"])
            return None if math.isnan(growth) else round(growth)  # NaN: not measured (--code)

        segments.append(
            {
                "from": small_name,
                "to": large_name,
                "rss_bytes_per_sample": per_sample("peak_rss_mib"),
                "rss_fixed_mmap_bytes_per_sample": per_sample("peak_rss_mib_fixed_mmap"),
                "traced_bytes_per_sample": per_sample("traced_peak_mib"),
                "written_bytes_per_sample": round(large["predictions_jsonl_bytes"] / large["samples"]),
                "read_bytes_per_sample": round(large["samples_jsonl_bytes"] / large["samples"]),
            }
        )
    return segments


def score_growth(work: Path, repeats: int, code: Path | None = None) -> dict[str, Any]:
    """:func:`growth` for ``nlibias score``: scoring each set's ``predictions.jsonl`` (one tiny
    model, from the growth audits; made first where missing) against its samples."""
    from nlibias.io.samples import write_samples
    from nlibias.testing.memory import traced_peak

    model_dir = tiny_model(work)
    env = {} if code is None else {"PYTHONPATH": str(code)}
    names = [name for segment in SEGMENTS for name in segment]
    for name in names:
        if not (work / f"out-{name}" / "predictions.jsonl").exists():
            if not (work / name / "samples.jsonl").exists():
                write_samples(work / name, growth_sets()[name]())
            audit_peak_rss(work / name, model_dir, work / f"out-{name}")
    if code is None:  # imports and first calls, not to be counted by traced_peak
        score_job(work / names[0], work / f"out-{names[0]}" / "predictions.jsonl")()
    rows: dict[str, dict[str, Any]] = {}
    for name in names:
        predictions = work / f"out-{name}" / "predictions.jsonl"
        args = (work / name, predictions, work / f"score-{name}")
        traced = (
            None if code is not None else functools.partial(traced_peak, score_job(work / name, predictions))
        )
        rows[name] = measured_set(name, score_peak_rss, args, env, traced, repeats)
    return {"runs": list(rows.values()), "segments": growth_segments(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="32 samples for the BERT-base audit")
    parser.add_argument("--pairs", type=int, default=0, help="first N BBNLI samples to audit (0: all)")
    parser.add_argument("--growth-only", action="store_true", help="only the growth runs (~5 min)")
    parser.add_argument(
        "--score", action="store_true", help="the growth runs of `nlibias score` instead of `nlibias audit`"
    )
    parser.add_argument(
        "--repeats", type=int, default=1, help="default-allocator runs per growth set (median)"
    )
    parser.add_argument(
        "--code", type=Path, default=None, help="src/ of another checkout to measure (growth RSS only)"
    )
    if len(sys.argv) > 1 and sys.argv[1] == "--cli-child":
        cli_child(sys.argv[2:])
        return
    args = parser.parse_args()
    if args.code is not None:
        args.growth_only, args.code = True, args.code.resolve()
    if args.score:
        args.growth_only = True
    if args.quick:
        args.pairs, args.repeats = 32, 1
    from nlibias.io.samples import write_samples

    work = Path(tempfile.gettempdir()) / "nlibias-bench" / "memory"
    payload: dict[str, Any] = {"machine": common.machine_info()}
    checks = []
    if not args.growth_only:
        model_dir = Path(tempfile.gettempdir()) / "nlibias-bench" / "bert-base-nli"
        if not (model_dir / "config.json").exists():
            common.build_model(model_dir, "nli", "bert-base")
        samples = common.bbnli_samples()
        samples = samples[: args.pairs] if args.pairs > 0 else samples
        write_samples(work / f"bbnli-{len(samples)}", samples)
        audit = audit_peak_rss(work / f"bbnli-{len(samples)}", model_dir, work / "out-bert-base")
        print(f"nlibias audit of {audit['samples']} BBNLI samples, bert-base-sized model (fp32, CPU)")
        common.print_table([audit], list(audit))
        peak_gib = audit["peak_rss_mib"] / 1024
        checks.append(common.check(f"peak RSS under {TARGET_GIB} GiB", peak_gib, TARGET_GIB, below=True))
        payload["audit"] = audit
    command = "nlibias score" if args.score else "nlibias audit"
    grown = (score_growth if args.score else growth)(work, args.repeats, args.code)
    print(f"\ngrowth with the number of samples, tiny classifier ({command}, --bootstrap 200)")
    common.print_table(grown["runs"], list(grown["runs"][0]))
    print(f"\ngrowth per added sample (bytes), against the bytes {command} writes per sample")
    common.print_table(grown["segments"], list(grown["segments"][0]))
    for segment in grown["segments"]:
        for measure in ("rss", "rss_fixed_mmap") + (("traced",) if args.code is None else ()):
            checks.append(
                common.check(
                    f"{measure} growth {segment['from']} -> {segment['to']} within the outputs (B/sample)",
                    segment[f"{measure}_bytes_per_sample"],
                    segment["written_bytes_per_sample"],
                    below=True,
                )
            )
    payload["growth"] = grown
    payload["checks"] = checks
    payload["code"] = str(args.code) if args.code is not None else None
    name = "memory" + ("_quick" if args.quick else "") + ("_growth" if args.growth_only else "")
    name += "_score" if args.score else ""
    name += "_other_code" if args.code is not None else ""
    path = common.write_results(name, payload)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
