"""``nlibias finetune`` throughput on the CPU: examples/s vs a hand-written loop and the FLOP bound.

A BERT-mini-shaped classifier (4 layers, hidden 256, 4 heads, FFN 1024, vocabulary 30,522; random
weights, built in process) is fine-tuned on SNLI-shaped rows (``nlibias.testing.nli_sets``) for
``--steps`` optimiser steps of ``--batch-size`` examples, three ways:

* **nlibias**: :func:`nlibias.debias.finetune.finetune` (the Hugging Face ``Trainer``, AdamW,
  dynamic padding per batch, no checkpoint inside the timed steps); the time is the Trainer's own
  ``train_runtime`` (the training loop, not loading the model or tokenizing);
* **naive**: a hand-written PyTorch loop over the same batches (tokenized and padded per batch
  beforehand, AdamW with the same settings): the least a training loop can add;
* **bound**: training FLOPs per example (3 x the forward's: forward, and a backward of twice its
  cost) over the matmul rate this CPU sustains on the model's feed-forward shape
  (``_common.matmul_ceiling_tflops``).

Both loops are timed in wall-clock seconds and in the process's CPU seconds: on a machine shared
with other jobs the wall time measures the neighbours as much as the code, while with one torch
thread the CPU time is what the loop would take alone. Writes ``bench/results/finetune_speed.json``.

    python bench/finetune_speed.py                 # 40 steps of 32, ~2 min on 2 cores
    python bench/finetune_speed.py --steps 10
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as common


def naive_loop(model_dir: Path, rows: list[dict[str, str]], batch_size: int, steps: int) -> dict[str, Any]:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from nlibias.debias.training_rows import LABELS

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, betas=(0.9, 0.999), weight_decay=0.01)
    batches = []
    for start in range(0, steps * batch_size, batch_size):
        part = rows[start : start + batch_size]
        encoded = tokenizer(
            [r["sentence1"] for r in part], [r["sentence2"] for r in part],
            padding=True, truncation=True, max_length=128, return_tensors="pt",
        )  # fmt: skip
        encoded["labels"] = torch.tensor([LABELS.index(r["gold_label"]) for r in part])
        batches.append(encoded)
    begin, cpu = time.perf_counter(), time.process_time()
    for batch in batches:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    seconds, cpu_seconds = time.perf_counter() - begin, time.process_time() - cpu
    n = steps * batch_size
    return {
        "seconds": seconds,
        "examples_per_s": n / seconds,
        "cpu_seconds": cpu_seconds,
        "examples_per_cpu_s": n / cpu_seconds,
    }


def cpu_timer() -> Any:
    """A Trainer callback that records the CPU seconds of the training loop."""
    from transformers import TrainerCallback

    class CpuTimer(TrainerCallback):
        seconds = 0.0

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.start = time.process_time()

        def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.seconds = time.process_time() - self.start

    return CpuTimer()


def flop_bound(model_dir: Path, rows: list[dict[str, str]], threads: int) -> dict[str, Any]:
    import numpy as np
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir)
    lengths = np.array([len(tokenizer(r["sentence1"], r["sentence2"])["input_ids"]) for r in rows])
    forward = common.encoder_flops(model, lengths)["total"] / len(lengths)
    ceiling = common.matmul_ceiling_tflops(model.config.hidden_size)
    return {
        "mean_tokens": float(lengths.mean()),
        "train_flops_per_example": 3 * forward,
        "matmul_ceiling_tflops": ceiling,
        "examples_per_s": ceiling * 1e12 / (3 * forward),
        "threads": threads,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    threads = common.set_threads(args.threads)

    from nlibias.debias.finetune import finetune
    from nlibias.testing.nli_sets import snli_shaped_rows, write_snli_shaped

    n = args.steps * args.batch_size
    rows = [r for r in snli_shaped_rows(n + n // 50 + 10, seed=1) if r["gold_label"] != "-"][:n]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model_dir = common.build_model(root / "model", "nli", "bert-mini")
        train = write_snli_shaped(root / "train.jsonl", 0)
        train.write_text("".join(__import__("json").dumps(r) + "\n" for r in rows))
        timer = cpu_timer()
        record = finetune(
            str(model_dir), train, root / "out", max_steps=args.steps, batch_size=args.batch_size,
            save_steps=10**9, progress=False, callbacks=[timer],
        )  # fmt: skip
        ours = {
            "seconds": record["train_seconds"], "examples_per_s": n / record["train_seconds"],
            "cpu_seconds": timer.seconds, "examples_per_cpu_s": n / timer.seconds,
        }  # fmt: skip
        naive = naive_loop(model_dir, rows, args.batch_size, args.steps)
        bound = flop_bound(model_dir, rows, threads)
    print(
        f"BERT-mini shape, {args.steps} steps x {args.batch_size} SNLI-shaped examples, {threads} torch threads"
    )
    print(f"load average at the end: {os.getloadavg()}")
    for name, r in (("nlibias (Trainer)", ours), ("naive loop", naive)):
        print(
            f"{name:18s} {r['seconds']:7.1f} s wall {r['examples_per_s']:7.1f} examples/s | "
            f"{r['cpu_seconds']:7.1f} s CPU {r['examples_per_cpu_s']:7.1f} examples/CPU-s"
        )
    print(
        f"FLOP bound                    {bound['examples_per_s']:7.1f} examples/s "
        f"({bound['train_flops_per_example'] / 1e9:.2f} GFLOP/example, {bound['mean_tokens']:.1f} tokens, "
        f"matmul ceiling {bound['matmul_ceiling_tflops'] * 1e3:.0f} GFLOP/s)"
    )
    print(f"nlibias / naive (CPU time): {ours['examples_per_cpu_s'] / naive['examples_per_cpu_s']:.2f}")
    print(f"nlibias / bound (CPU time): {ours['examples_per_cpu_s'] / bound['examples_per_s']:.2f}")
    common.write_results(
        "finetune_speed",
        {"nlibias": ours, "naive": naive, "bound": bound, "steps": args.steps, "batch_size": args.batch_size,
         "load_average": os.getloadavg(), "machine": common.machine_info()},
    )  # fmt: skip


if __name__ == "__main__":
    main()
