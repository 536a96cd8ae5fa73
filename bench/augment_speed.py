"""``nlibias augment gender-swap`` on an SNLI-shaped file: rows/s, peak memory, vs the naive way and the floor.

Three ways over the same generated JSONL (``nlibias.testing.nli_sets.snli_shaped_rows``, SNLI's
field names and sentence lengths, 550,152 rows like SNLI's train split):

* **nlibias**: :func:`nlibias.debias.augment.augment_gender_swap` (occupation selection, WinoBias
  list), streamed, written atomically;
* **naive** (the paper authors' notebook): the whole file in a pandas frame, one ``apply`` per
  occupation over every row, then one ``apply`` per gendered word for the filter, then a
  sequential ``re.sub`` per map entry. Run on the first ``--naive-rows`` rows (it is slow) and
  reported in rows/s;
* **floor**: read each line, ``json.loads`` it and write it back with ``json.dumps`` (the parse
  and write cost any JSONL tool pays; the hardware bound of a Python streaming pass here).

Each way is timed in wall-clock seconds and in the child process's CPU seconds (all three are
single-threaded Python: on a machine shared with other jobs the CPU time is what the way costs
alone). Peak memory is the process's maximum resident set size (``ru_maxrss``) after each way, each way
run in its own child process. Writes ``bench/results/augment_speed.json``.

    python bench/augment_speed.py                  # 550,152 rows, ~2-3 min on 2 cores
    python bench/augment_speed.py --rows 50000
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as common

SNLI_TRAIN_ROWS = 550_152


def _nlibias(path: Path, out: Path) -> dict[str, Any]:
    from nlibias.debias.augment import augment_gender_swap

    start, cpu = time.perf_counter(), time.process_time()
    summary = augment_gender_swap(path, out, progress=False)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "cpu_seconds": time.process_time() - cpu,
        "rows": summary["rows_read"],
        "summary": dict(summary),
    }


def _floor(path: Path, out: Path) -> dict[str, Any]:
    start, cpu = time.perf_counter(), time.process_time()
    rows = 0
    with path.open("rb") as source, (out / "copy.jsonl").open("w", encoding="utf-8") as sink:
        for line in source:
            sink.write(json.dumps(json.loads(line)) + "\n")
            rows += 1
    return {"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu, "rows": rows}


def _naive(path: Path, out: Path, rows: int) -> dict[str, Any]:
    """The authors' procedure (Augmentation_Dataset_Creation.ipynb), re-expressed for timing."""
    import pandas as pd

    from nlibias.benchmarks.occupation_list import load_occupations
    from nlibias.debias.wordlists import paper_map

    start, cpu = time.perf_counter(), time.process_time()
    frame = pd.read_json(path, lines=True, nrows=rows)
    occupations = [o.name for o in load_occupations()]

    def present(sentence: str, word: str) -> bool:
        tokens = sentence.lower().split(" ")
        return word in tokens or word + "s" in tokens

    parts = [frame[frame["sentence1"].apply(lambda s, w=w.lower(): present(s, w))] for w in occupations]
    selected = pd.concat(parts).drop_duplicates(subset=["sentence1"])
    mapping = paper_map().mapping
    keep = selected[
        selected.apply(
            lambda r: any(present(r["sentence1"], w) or present(r["sentence2"], w) for w in mapping), axis=1
        )
    ]

    def replace(text: str) -> str:
        text = text.lower()
        for word, counterpart in mapping.items():
            text = re.sub(rf"\b{word}\b", counterpart, text)
        return text

    swapped = keep.assign(
        sentence1=keep["sentence1"].apply(replace), sentence2=keep["sentence2"].apply(replace)
    )
    pd.concat([swapped, frame]).drop_duplicates(subset=["sentence1", "sentence2"]).to_csv(out / "naive.csv")
    return {
        "seconds": time.perf_counter() - start,
        "cpu_seconds": time.process_time() - cpu,
        "rows": len(frame),
    }


def _child(way: str, path: str, out: str, naive_rows: int, queue: Any) -> None:
    target = Path(out)
    result = {
        "nlibias": lambda: _nlibias(Path(path), target),
        "floor": lambda: _floor(Path(path), target),
    }.get(way, lambda: _naive(Path(path), target, naive_rows))()
    result.pop("summary", None) if way != "nlibias" else None
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put(result)


def run_way(way: str, path: Path, naive_rows: int) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    with tempfile.TemporaryDirectory() as out:
        process = context.Process(target=_child, args=(way, str(path), out, naive_rows, queue))
        process.start()
        result = queue.get()
        process.join()
    result["rows_per_s"] = result["rows"] / result["seconds"]
    result["rows_per_cpu_s"] = result["rows"] / result["cpu_seconds"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=SNLI_TRAIN_ROWS)
    parser.add_argument("--naive-rows", type=int, default=50_000)
    args = parser.parse_args()

    from nlibias.testing.nli_sets import write_snli_shaped

    with tempfile.TemporaryDirectory() as tmp:
        path = write_snli_shaped(Path(tmp) / "snli_shaped.jsonl", args.rows)
        size_mib = path.stat().st_size / 2**20
        results = {way: run_way(way, path, args.naive_rows) for way in ("floor", "nlibias", "naive")}
    summary = results["nlibias"].pop("summary")
    print(f"input: {args.rows:,} SNLI-shaped rows, {size_mib:.1f} MiB JSONL")
    for way, r in results.items():
        print(
            f"{way:8s} {r['rows']:>9,} rows  {r['seconds']:7.1f} s wall {r['rows_per_s']:>9,.0f} rows/s | "
            f"{r['cpu_seconds']:7.1f} s CPU {r['rows_per_cpu_s']:>9,.0f} rows/CPU-s | peak RSS {r['peak_rss_mib']:.0f} MiB"
        )
    ours = results["nlibias"]["rows_per_cpu_s"]
    print(f"load average at the end: {os.getloadavg()}")
    print(f"nlibias / naive (CPU time): {ours / results['naive']['rows_per_cpu_s']:.2f}")
    print(f"nlibias / floor (CPU time; parse+write only): {ours / results['floor']['rows_per_cpu_s']:.2f}")
    print(
        f"selected {summary['rows_selected']:,}, swapped rows written {summary['swapped_rows_written']:,}, "
        f"words changed {summary['words_changed']:,}"
    )
    common.RESULTS_DIR.mkdir(exist_ok=True)
    record = {"rows": args.rows, "file_mib": size_mib, "results": results, "summary": summary}
    record["machine"] = common.machine_info()
    (common.RESULTS_DIR / "augment_speed.json").write_text(json.dumps(record, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
