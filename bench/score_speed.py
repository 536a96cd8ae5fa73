"""``nlibias score``'s streamed scoring vs the object scoring (every sample and row as an object).

The same samples and predictions file are scored both ways in one process, alternating, for a
few rounds (this machine's timings move by +-20% between identical runs, so the table gives the
fastest and the median run of each way): the streamed way (:func:`nlibias.jobs.score.run_score`,
what ``nlibias score`` runs) and the object way it replaced (samples and predictions loaded as
objects, then :func:`nlibias.jobs.audit.score`). Both write a run directory; the script checks that
the files are the same. Two predictions files per set: rows as nlibias writes them, and rows as
another tool might (other field order, no ``model``: each row is rewritten for the output).
Writes ``bench/results/score_speed.json``.

    python bench/score_speed.py              # BBNLI x18 (56,412 samples) and WQ-NLI (76,288), ~3 min
    python bench/score_speed.py --rounds 5
    python bench/score_speed.py --quick      # BBNLI x2, one round
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common as common
from memory import growth_sets, replicated

FORMATS = ("nlibias", "other tool")


def predictions_rows(sample_ids: list[str], *, seed: int, style: str) -> list[dict[str, Any]]:
    """Random probabilities for every sample, the label their argmax: rows as nlibias writes
    them (``id, model, label, probs``) or as another tool might (``label, id, probs``, no model)."""
    rng = random.Random(seed)
    labels = ("entailment", "neutral", "contradiction")
    rows = []
    for sample_id in sample_ids:
        weights = [rng.random() + 1e-3 for _ in labels]
        probs = {label: w / sum(weights) for label, w in zip(labels, weights, strict=True)}
        label = max(probs, key=probs.__getitem__)
        if style == "nlibias":
            rows.append({"id": sample_id, "model": "m", "label": label, "probs": probs})
        else:
            rows.append({"label": label, "id": sample_id, "probs": probs})
    return rows


def prepare(work: Path, name: str, make: Callable[[], list[Any]]) -> tuple[Path, dict[str, Path]]:
    """The set's samples directory and one predictions file per format (made once under ``work``)."""
    from nlibias.io.samples import write_samples

    run = work / name
    files = {style: work / f"{name}-{style.replace(' ', '-')}.jsonl" for style in FORMATS}
    if not (run / "samples.jsonl").exists() or not all(p.exists() for p in files.values()):
        samples = make()
        write_samples(run, samples)
        ids = [s.id for s in samples]
        for style, path in files.items():
            rows = predictions_rows(ids, seed=0, style=style)
            path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return run, files


def score_objects(samples: Path, predictions: Path, out: Path) -> None:
    """The object scoring: what ``nlibias score`` ran before the streamed one."""
    from nlibias.testing.reference_audit import score_objects as reference

    reference(samples, predictions, out_dir=out, bootstrap=200)


def score_streamed(samples: Path, predictions: Path, out: Path) -> None:
    from nlibias.jobs.score import run_score

    run_score(samples, predictions, out_dir=out, bootstrap=200)


WAYS: dict[str, Callable[[Path, Path, Path], None]] = {"objects": score_objects, "streamed": score_streamed}


def same_files(a: Path, b: Path) -> bool:
    models = [json.loads((d / "metrics.json").read_text())["models"] for d in (a, b)]
    return (
        models[0] == models[1]
        and (a / "predictions.jsonl").read_bytes() == (b / "predictions.jsonl").read_bytes()
        and (a / "tables.txt").read_bytes() == (b / "tables.txt").read_bytes()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating runs of each way")
    parser.add_argument("--quick", action="store_true", help="BBNLI x2, one round (a smoke run)")
    args = parser.parse_args()

    makers = growth_sets()
    sets: dict[str, Callable[[], list[Any]]] = (
        {"bbnli-x2": lambda: replicated(common.bbnli_samples(), 2)}
        if args.quick
        else {"bbnli-x18": makers["bbnli-x18"], "wq-nli": makers["wq-nli"]}
    )
    rounds = 1 if args.quick else args.rounds
    work = Path(tempfile.gettempdir()) / "nlibias-bench" / "score-speed"
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, make in sets.items():
            samples, files = prepare(work, name, make)
            for style, predictions in files.items():
                seconds: dict[str, list[float]] = {way: [] for way in WAYS}
                outs = {way: Path(scratch) / way for way in WAYS}
                for _ in range(rounds):
                    for way, run in WAYS.items():
                        shutil.rmtree(outs[way], ignore_errors=True)
                        gc.collect()
                        start = time.perf_counter()
                        run(samples, predictions, outs[way])
                        seconds[way].append(time.perf_counter() - start)
                fastest = {way: min(s) for way, s in seconds.items()}
                median = {way: statistics.median(s) for way, s in seconds.items()}
                rows.append(
                    {
                        "set": name,
                        "rows": style,
                        "samples": sum(1 for _ in predictions.open()),
                        "objects_s": round(fastest["objects"], 2),
                        "streamed_s": round(fastest["streamed"], 2),
                        "objects_median_s": round(median["objects"], 2),
                        "streamed_median_s": round(median["streamed"], 2),
                        "streamed_x_faster": round(fastest["objects"] / fastest["streamed"], 2),
                        "streamed_x_faster_median": round(median["objects"] / median["streamed"], 2),
                        "same_files": same_files(outs["objects"], outs["streamed"]),
                        "runs_s": {way: [round(s, 2) for s in runs] for way, runs in seconds.items()},
                    }
                )
                print(f"{name}, rows as {style}: {rows[-1]['runs_s']}", flush=True)
    print()
    common.print_table(
        rows,
        ["set", "rows", "samples", "objects_s", "streamed_s", "streamed_x_faster",
         "objects_median_s", "streamed_median_s", "streamed_x_faster_median", "same_files"],
    )  # fmt: skip
    path = common.write_results(
        "score_speed_quick" if args.quick else "score_speed",
        {"machine": common.machine_info(), "rounds": rounds, "bootstrap": 200, "rows": rows},
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
