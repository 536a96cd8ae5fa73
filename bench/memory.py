"""Peak memory (RSS) of ``nlibias audit`` over the BBNLI set with a BERT-base-sized model.

The whole command (read the samples, predict through the default caps, score with 200
bootstrap resamples, write the run directory; ``--no-cache``) runs in a child process, which
prints its own peak resident set size (``resource.getrusage(RUSAGE_SELF)``) when it is done.

Then, growth with the number of samples: the whole ``nlibias audit`` command (read, predict,
score with 200 bootstrap resamples, write) with a tiny classifier, so that the model does not
dominate, on BBNLI (3,134 samples) and WinoQueer-NLI (76,288); each run in its own process,
which reports its own peak RSS. Growth per sample is compared with the bytes the audit writes
per sample (``predictions.jsonl``) and the bytes it reads (``samples.jsonl``).

    python bench/memory.py              # every unique pair (a full audit: long on 2 busy cores)
    python bench/memory.py --pairs 256  # the first 256 unique pairs
    python bench/memory.py --quick      # 32 pairs
    python bench/memory.py --growth-only
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
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
    print(f"{_RSS_MARKER}{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}")


def audit_peak_rss(samples_dir: Path, model_dir: Path, out_dir: Path, repeats: int = 1) -> dict[str, Any]:
    """Peak RSS of ``nlibias audit`` over ``samples_dir`` (own process each time; the median of
    ``repeats`` runs: identical runs differ by up to ~10% here), with the files' sizes."""
    arguments = [
        "audit", "--samples", str(samples_dir), "--model", str(model_dir), "--out", str(out_dir),
        "--no-cache", "--bootstrap", "200", "--quiet",
    ]  # fmt: skip
    peaks, times = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, __file__, "--cli-child", *arguments],
            capture_output=True, text=True, check=True, env=dict(os.environ),
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


def growth(work: Path, repeats: int) -> dict[str, Any]:
    """Peak RSS of the small and the large audit and the growth per sample between them."""
    from nlibias.io.samples import write_samples
    from nlibias.sources.wq_nli import expand_wq_nli
    from nlibias.testing import bbnli_texts, build_tiny_nli_classifier

    model_dir = work / "tiny-nli"
    if not (model_dir / "config.json").exists():
        build_tiny_nli_classifier(model_dir, bbnli_texts())
    sets = {"bbnli": common.bbnli_samples(), "wq-nli": list(expand_wq_nli().samples)}
    rows = []
    for name, samples in sets.items():
        write_samples(work / name, samples)
        del samples
        rows.append({"set": name, **audit_peak_rss(work / name, model_dir, work / f"out-{name}", repeats)})
    small, large = rows
    extra = large["samples"] - small["samples"]
    per_sample = (large["peak_rss_mib"] - small["peak_rss_mib"]) * 2**20 / extra
    written = large["predictions_jsonl_bytes"] / large["samples"]
    read = large["samples_jsonl_bytes"] / large["samples"]
    return {
        "runs": rows,
        "growth_bytes_per_sample": round(per_sample),
        "written_bytes_per_sample": round(written),
        "read_bytes_per_sample": round(read),
        "growth_over_written": round(per_sample / written, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="32 samples for the BERT-base audit")
    parser.add_argument("--pairs", type=int, default=0, help="first N BBNLI samples to audit (0: all)")
    parser.add_argument("--growth-only", action="store_true", help="only the growth runs (~1.5 min)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per growth set (median taken)")
    if len(sys.argv) > 1 and sys.argv[1] == "--cli-child":
        cli_child(sys.argv[2:])
        return
    args = parser.parse_args()
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
    grown = growth(work, args.repeats)
    print("\ngrowth with the number of samples, tiny classifier (nlibias audit, --bootstrap 200)")
    common.print_table(grown["runs"], list(grown["runs"][0]))
    print(
        f"peak RSS grows {grown['growth_bytes_per_sample']} bytes a sample; the audit writes "
        f"{grown['written_bytes_per_sample']} bytes a sample (predictions.jsonl, one model) and reads "
        f"{grown['read_bytes_per_sample']} (samples.jsonl): growth / written = {grown['growth_over_written']}"
    )
    payload["growth"] = grown
    payload["checks"] = checks
    name = "memory" + ("_quick" if args.quick else "") + ("_growth" if args.growth_only else "")
    path = common.write_results(name, payload)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
