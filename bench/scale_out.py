"""Sharded (one worker process per device) and Ray Data runs vs one process, same model and pairs.

Prints start-up time (model load, plus spawning the workers) and prediction time for each way,
and how far the probabilities are from the single process's; writes
``bench/results/scale_out[_TAG].json``. On a machine with one device (or 2 CPU cores) expect no
gain: the point of the numbers is the fixed cost of the workers and that results agree.

    python bench/scale_out.py --model tiny --pairs 0            # every unique BBNLI pair
    python bench/scale_out.py --model bert-base --pairs 200 --ray
    python bench/scale_out.py --model bert-base --devices cuda:0,cuda:1 --pairs 0
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import bbnli_pairs, build_model, machine_info, print_table, set_threads, subsample, write_results


def timed(run: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    output = run()
    return time.perf_counter() - start, output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["tiny", "bert-base", "roberta-large"], default="tiny")
    parser.add_argument("--pairs", type=int, default=0, help="unique BBNLI pairs (0: all)")
    parser.add_argument("--devices", default="cpu,cpu", help="comma-separated, one worker each")
    parser.add_argument("--ray", action="store_true", help="also run RayNLIClassifier (local Ray)")
    parser.add_argument("--tag", default="")
    args = parser.parse_args()

    from nlibias.models.nli.hf import HFNLIClassifier
    from nlibias.models.nli.sharded import ShardedNLIClassifier, cpu_threads_per_worker
    from nlibias.runtime.classifier import predict_pairs

    threads = set_threads(None)
    devices = args.devices.split(",")
    pairs = bbnli_pairs()[1]
    pairs = subsample(pairs, args.pairs) if args.pairs else pairs
    with tempfile.TemporaryDirectory() as tmp:
        if args.model == "tiny":
            from nlibias.testing import bbnli_texts, build_tiny_nli_classifier

            model = build_tiny_nli_classifier(Path(tmp) / "tiny", bbnli_texts(), seed=0)
        else:
            model = build_model(Path(tmp) / args.model, "nli", args.model)

        rows: list[dict[str, Any]] = []
        single_device = "cuda" if devices[0].startswith("cuda") else "cpu"
        load, single = timed(lambda: HFNLIClassifier(model, device=single_device))
        expected = None
        # All cores, and the threads one worker gets: on a busy machine, torch threads that
        # outnumber the idle cores spin and wait, which is no fault of the single process.
        for n_threads in sorted({threads, cpu_threads_per_worker(len(devices))}, reverse=True):
            set_threads(n_threads)
            seconds, run = timed(lambda: predict_pairs(single, pairs, progress=False))
            expected = run.probs if expected is None else expected
            rows.append(
                {
                    "way": f"one process ({single_device}, {n_threads} threads)",
                    "start_s": load,
                    "predict_s": seconds,
                    "max_abs_diff": float(np.abs(run.probs - expected).max()),
                }
            )
        set_threads(threads)
        assert expected is not None

        start, sharded = timed(lambda: ShardedNLIClassifier(str(model), devices))
        seconds, run = timed(lambda: predict_pairs(sharded, pairs, progress=False))
        sharded.close()
        rows.append(
            {
                "way": f"sharded {devices}",
                "start_s": start,
                "predict_s": seconds,
                "max_abs_diff": float(np.abs(run.probs - expected).max()),
            }
        )

        if args.ray:
            import ray

            from nlibias.models.nli.ray_data import RayNLIClassifier

            init, _ = timed(
                lambda: ray.init(
                    num_cpus=len(devices), include_dashboard=False, logging_level=logging.WARNING
                )
            )
            start, ray_clf = timed(lambda: RayNLIClassifier(str(model), num_workers=len(devices)))
            # predict_s includes starting the actor pool (each actor loads the model).
            seconds, run = timed(lambda: predict_pairs(ray_clf, pairs, progress=False))
            rows.append(
                {
                    "way": f"Ray Data, {len(devices)} actors (local)",
                    "start_s": init + start,
                    "predict_s": seconds,
                    "max_abs_diff": float(np.abs(run.probs - expected).max()),
                }
            )
            ray.shutdown()

    for row in rows:
        row["pairs_per_s"] = round(len(pairs) / row["predict_s"], 1)
        row["total_s"] = round(row["start_s"] + row["predict_s"], 2)
        row["start_s"], row["predict_s"] = round(row["start_s"], 2), round(row["predict_s"], 2)
    print(f"{args.model}, {len(pairs)} unique BBNLI pairs")
    print_table(rows, ["way", "start_s", "predict_s", "total_s", "pairs_per_s", "max_abs_diff"])
    name = "scale_out" + (f"_{args.tag}" if args.tag else "")
    path = write_results(
        name, {"machine": machine_info(), "model": args.model, "pairs": len(pairs), "rows": rows}
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
