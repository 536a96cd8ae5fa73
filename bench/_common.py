"""Shared helpers for the benchmarks in bench/: inputs, realistic-shape models, timers, reports.

The models are built in-process from configs with random weights (no downloads): speed depends
on the shape (layers, hidden size, vocabulary, sequence lengths), not on the weights' values.
The tokenizer is a cased WordPiece vocabulary learnt from the BBNLI texts
(:func:`nlibias.testing.tiny_models.train_tiny_tokenizer`), as large as those texts allow, so
BBNLI sentences split into a realistic number of tokens; the model's embedding matrix keeps the
real model's vocabulary size (30,522 for BERT-base, 50,265 for RoBERTa-large).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("NLIBIAS_DATA_DIR", "/work/shared/data")

SHAPES: dict[str, dict[str, Any]] = {
    # BERT-base: 12 layers, hidden 768, 12 heads, FFN 3072, vocabulary 30,522 (~110M parameters).
    "bert-base": {"arch": "bert", "layers": 12, "hidden": 768, "heads": 12, "ffn": 3072, "vocab": 30522},
    # BERT-mini (google/bert_uncased_L-4_H-256_A-4): a small model to fine-tune on a CPU.
    "bert-mini": {"arch": "bert", "layers": 4, "hidden": 256, "heads": 4, "ffn": 1024, "vocab": 30522},
    # RoBERTa-large (the ynie checkpoints' shape): 24 layers, hidden 1024, 16 heads, FFN 4096.
    "roberta-large": {
        "arch": "roberta",
        "layers": 24,
        "hidden": 1024,
        "heads": 16,
        "ffn": 4096,
        "vocab": 50265,
    },
}
ID2LABEL = {0: "entailment", 1: "neutral", 2: "contradiction"}


def set_threads(threads: int | None) -> int:
    """Pin torch's intra-op threads (default: the number of CPU cores) and one inter-op thread."""
    import torch

    wanted = threads or os.cpu_count() or 1
    torch.set_num_threads(wanted)
    with contextlib.suppress(RuntimeError):  # already set once in this process
        torch.set_num_interop_threads(1)
    return torch.get_num_threads()


def machine_info() -> dict[str, Any]:
    """CPU model, cores, library versions and torch thread settings of this run."""
    import tokenizers
    import torch
    import transformers

    cpu = platform.processor() or "unknown"
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        for line in lscpu.splitlines():
            if line.startswith("Model name:"):
                cpu = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
    }


def bbnli_samples() -> list[Any]:
    """Every sample of the BBNLI expansion (bias and test samples) from the shared data copy."""
    from nlibias.benchmarks.bbnli import expand_bbnli
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data

    return list(expand_bbnli(resolve_data(BBNLI_DATA)).samples)


def bbnli_pairs() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(all premise-hypothesis pairs in sample order, the unique pairs in first-seen order)."""
    pairs = [(s.premise, s.hypothesis) for s in bbnli_samples()]
    return pairs, list(dict.fromkeys(pairs))


def samples_pairs(path: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Like :func:`bbnli_pairs`, from a run directory or samples file (e.g. an extension run's
    ``export/`` or ``filter`` candidates written as samples)."""
    from nlibias.io.samples import read_samples

    pairs = [(s.premise, s.hypothesis) for s in read_samples(path)]
    return pairs, list(dict.fromkeys(pairs))


def bbnli_texts() -> list[str]:
    """Every premise and hypothesis text (tokenizer training corpus)."""
    texts: list[str] = []
    for premise, hypothesis in bbnli_pairs()[1]:
        texts += [premise, hypothesis]
    return texts


def evenly_spaced_step(total: int, n: int) -> int:
    """The stride that takes about ``n`` evenly spaced items of ``total`` (``items[::step][:n]``),
    so a subsampled baseline has the length mix of the whole set.

    >>> evenly_spaced_step(320, 40), evenly_spaced_step(10, 40)
    (8, 1)
    """
    return max(1, total // max(1, n))


def subsample(items: list[Any], n: int, seed: int = 0) -> list[Any]:
    """``n`` items drawn without replacement with a fixed seed (all of them when ``n >= len``)."""
    import random

    if n >= len(items):
        return list(items)
    return random.Random(seed).sample(items, n)


def build_model(out_dir: Path, kind: str, shape: str = "bert-base", *, seed: int = 0) -> Path:
    """Save a random-weight model of ``shape`` (``kind``: ``nli`` classifier or ``mlm``) with a
    WordPiece tokenizer learnt from the BBNLI texts; returns the directory."""
    import torch
    from transformers import (
        BertConfig,
        BertForMaskedLM,
        BertForSequenceClassification,
        RobertaConfig,
        RobertaForSequenceClassification,
    )

    from nlibias.testing.tiny_models import train_tiny_tokenizer

    spec = SHAPES[shape]
    bert = spec["arch"] == "bert"
    tokenizer = train_tiny_tokenizer(
        bbnli_texts(), vocab_size=spec["vocab"], model_max_length=512, token_type_ids=bert
    )
    if kind == "mlm":
        fill_vocabulary(tokenizer, spec["vocab"])
    common: dict[str, Any] = {
        "vocab_size": max(spec["vocab"], len(tokenizer)),
        "hidden_size": spec["hidden"],
        "num_hidden_layers": spec["layers"],
        "num_attention_heads": spec["heads"],
        "intermediate_size": spec["ffn"],
        "pad_token_id": tokenizer.pad_token_id,
        "id2label": ID2LABEL,
        "label2id": {v: k for k, v in ID2LABEL.items()},
    }
    torch.manual_seed(seed)
    if bert:
        config: Any = BertConfig(max_position_embeddings=512, **common)
        model: Any = BertForMaskedLM(config) if kind == "mlm" else BertForSequenceClassification(config)
    else:
        config = RobertaConfig(
            max_position_embeddings=512 + tokenizer.pad_token_id + 1,
            type_vocab_size=1,
            bos_token_id=tokenizer.cls_token_id,
            eos_token_id=tokenizer.sep_token_id,
            **common,
        )
        model = RobertaForSequenceClassification(config)
    from nlibias.testing.tiny_models import save_model

    return save_model(model, tokenizer, out_dir)


def fill_vocabulary(tokenizer: Any, size: int) -> None:
    """Grow a WordPiece tokenizer's vocabulary to ``size`` with made-up whole words (``zzabcd``)
    that never occur in the texts: tokenization is unchanged, but every id of a ``size``-row LM
    head is a real token (as in a real checkpoint), so mask fillers see whole-word candidates."""
    import itertools
    import string

    from tokenizers import models

    vocab = dict(tokenizer.get_vocab())
    for letters in itertools.product(string.ascii_lowercase, repeat=4):
        if len(vocab) >= size:
            break
        vocab.setdefault("zz" + "".join(letters), len(vocab))
    tokenizer.backend_tokenizer.model = models.WordPiece(
        vocab=vocab, unk_token="[UNK]", max_input_chars_per_word=100
    )


class ForwardMeter:
    """Counts time inside ``module.forward`` and the real / padded tokens it was given.

    Hooks read ``attention_mask`` from the call (keyword or the second positional argument);
    a call without one counts every position as real.
    """

    def __init__(self, module: Any) -> None:
        self.seconds = 0.0
        self.calls = 0
        self.real_tokens = 0
        self.padded_tokens = 0
        self._start = 0.0
        # CUDA kernels run asynchronously: wait for them before reading the clock after a forward
        self._sync = any(p.is_cuda for p in module.parameters())
        self._handles = [
            module.register_forward_pre_hook(self._before, with_kwargs=True),
            module.register_forward_hook(self._after, with_kwargs=True),
        ]

    def _before(self, _module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        mask = kwargs.get("attention_mask")
        if mask is None and len(args) > 1:
            mask = args[1]
        ids = kwargs.get("input_ids", args[0] if args else None)
        if mask is not None:
            self.real_tokens += int(mask.sum())
            self.padded_tokens += int(mask.numel())
        elif ids is not None:
            self.real_tokens += int(ids.numel())
            self.padded_tokens += int(ids.numel())
        self.calls += 1
        self._start = time.perf_counter()

    def _after(self, *_: Any) -> None:
        if self._sync:
            import torch

            torch.cuda.synchronize()
        self.seconds += time.perf_counter() - self._start

    def reset(self) -> None:
        self.seconds, self.calls, self.real_tokens, self.padded_tokens = 0.0, 0, 0, 0

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()


@contextmanager
def stopwatch() -> Iterator[dict[str, float]]:
    """``with stopwatch() as t: ...`` then ``t["seconds"]``."""
    timing: dict[str, float] = {}
    start = time.perf_counter()
    try:
        yield timing
    finally:
        timing["seconds"] = time.perf_counter() - start


def measure(
    name: str, items: int, run: Callable[[], Any], meter: ForwardMeter, **extra: Any
) -> dict[str, Any]:
    """Run ``run()`` once, timing it end to end and its model forwards; one result row."""
    meter.reset()
    with stopwatch() as t:
        output = run()
    row = {
        "method": name,
        "items": items,
        "seconds": round(t["seconds"], 3),
        "items_per_s": round(items / t["seconds"], 3),
        "forward_seconds": round(meter.seconds, 3),
        "forward_share": round(meter.seconds / t["seconds"], 3),
        "forward_calls": meter.calls,
        "real_tokens": meter.real_tokens,
        "padded_tokens": meter.padded_tokens,
        "padding_efficiency": round(meter.real_tokens / meter.padded_tokens, 3)
        if meter.padded_tokens
        else None,
        **extra,
    }
    row["_output"] = output
    return row


def print_table(rows: list[dict[str, Any]], columns: list[str]) -> None:
    """Plain fixed-width table of ``rows`` restricted to ``columns``."""
    cells = [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)))


def check(name: str, value: float, target: float, *, below: bool = False) -> dict[str, Any]:
    """A PASS/FAIL line for a target (``value >= target``, or ``<=`` with ``below``)."""
    ok = value <= target if below else value >= target
    sign = "<=" if below else ">="
    print(f"{'PASS' if ok else 'FAIL'}  {name}: {value:.3g} (target {sign} {target})")
    value = float(f"{value:.4g}")  # 4 significant digits: a 5.7e-6 difference must not read 0.0
    return {"target": name, "value": value, "threshold": target, "pass": ok}


def write_results(name: str, payload: dict[str, Any]) -> Path:
    """Write ``bench/results/<name>.json`` (rows' private ``_`` keys dropped)."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if not str(k).startswith("_")}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(clean(payload), indent=2) + "\n")
    return path


#: Dense (no sparsity) bf16 tensor-core peaks in TFLOP/s from NVIDIA's datasheets, matched in this
#: order against ``torch.cuda.get_device_name()``; ``--peak-tflops`` overrides (other GPUs).
BF16_PEAK_TFLOPS: tuple[tuple[str, float], ...] = (
    ("H100 PCIe", 756.0),
    ("H100 NVL", 835.0),
    ("H200", 989.0),
    ("H100", 989.0),  # SXM ("NVIDIA H100 80GB HBM3")
    ("A100", 312.0),
)


def bf16_peak_tflops(device: str) -> tuple[float, str] | None:
    """``(peak TFLOP/s, device name)`` of a known GPU, else None (CPU, unknown GPU)."""
    if not str(device).startswith("cuda"):
        return None
    import torch

    name = torch.cuda.get_device_name(torch.device(device))
    for key, peak in BF16_PEAK_TFLOPS:
        if key in name:
            return peak, name
    return None


def encoder_flops(model: Any, lengths: Any) -> dict[str, float]:
    """FLOPs of an encoder classifier's forward over pairs of these real token lengths:
    2 x non-embedding parameters x real tokens (every weight is one multiply-add per token) plus
    attention, 4 x L^2 x hidden per layer per pair (scores QK^T and the weighted sum AV).

    >>> class Cfg: num_hidden_layers, hidden_size = 2, 4
    >>> class Toy:
    ...     config = Cfg()
    ...     def named_parameters(self):
    ...         import numpy as np
    ...         yield "embeddings.word", np.zeros(100)
    ...         yield "encoder.w", np.zeros(10)
    >>> encoder_flops(Toy(), [3, 5])["total"]   # 2*10*8 + 2 layers * 4 * (9 + 25) * 4
    1248.0
    """
    import numpy as np

    params = sum(int(np.prod(p.shape)) for name, p in model.named_parameters() if "embeddings" not in name)
    lengths = np.asarray(lengths, dtype=np.float64)
    config = model.config
    linear = 2.0 * params * float(lengths.sum())
    attention = float(config.num_hidden_layers) * 4.0 * float((lengths**2).sum()) * float(config.hidden_size)
    return {
        "non_embedding_params": float(params),
        "linear": linear,
        "attention": attention,
        "total": linear + attention,
    }


def matmul_ceiling_tflops(
    hidden: int, device: str = "cpu", dtype: str = "float32", rows: int = 4096
) -> float:
    """What this device sustains on the model's biggest matmul: the best of 5 timed
    ``(rows x hidden) @ (hidden x 4*hidden)`` products (the feed-forward shape, at a size where
    the BLAS library is at its most efficient), in TFLOP/s.

    The datasheet peak assumes every multiply-add unit busy every cycle; no library reaches it.
    This is the ceiling an implementation doing the same FLOPs can approach on this machine.
    """
    import torch

    kind = getattr(torch, dtype)
    left = torch.randn(rows, hidden, device=device, dtype=kind)
    right = torch.randn(hidden, 4 * hidden, device=device, dtype=kind)
    sync = torch.cuda.synchronize if str(device).startswith("cuda") else (lambda: None)
    best = float("inf")
    with torch.inference_mode():
        for _ in range(2):  # warm-up
            left @ right
        for _ in range(5):
            sync()
            start = time.perf_counter()
            left @ right
            sync()
            best = min(best, time.perf_counter() - start)
    return 2.0 * rows * hidden * 4 * hidden / best / 1e12


def matmul_peak_tflops(device: str, dtype: str, n: int = 8192, *, tf32: bool | None = None) -> float:
    """The matmul peak this device reaches in ``dtype``: the best of 5 timed ``n x n`` products,
    in TFLOP/s. ``tf32`` (float32 on a GPU) turns TF32 tensor cores on or off for the measurement
    only (torch's setting is put back).

    >>> matmul_peak_tflops("cpu", "float32", 64) > 0
    True
    """
    import torch

    kind = getattr(torch, dtype)
    left = torch.randn(n, n, device=device, dtype=kind)
    right = torch.randn(n, n, device=device, dtype=kind)
    sync = torch.cuda.synchronize if str(device).startswith("cuda") else (lambda: None)
    before = torch.backends.cuda.matmul.allow_tf32
    if tf32 is not None:
        torch.backends.cuda.matmul.allow_tf32 = tf32
    best = float("inf")
    try:
        with torch.inference_mode():
            for _ in range(2):  # warm-up
                left @ right
            for _ in range(5):
                sync()
                start = time.perf_counter()
                left @ right
                sync()
                best = min(best, time.perf_counter() - start)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before
    return 2.0 * n**3 / best / 1e12


def memory_bandwidth_gbs(device: str, nbytes: int = 1 << 30) -> float:
    """Memory bandwidth in GB/s: the best of 5 copies of ``nbytes`` (each reads and writes them).

    >>> memory_bandwidth_gbs("cpu", 1 << 20) > 0
    True
    """
    import torch

    source = torch.empty(nbytes, dtype=torch.uint8, device=device).fill_(1)
    target = torch.empty_like(source)
    sync = torch.cuda.synchronize if str(device).startswith("cuda") else (lambda: None)
    best = float("inf")
    for i in range(7):  # 2 warm-ups
        sync()
        start = time.perf_counter()
        target.copy_(source)
        sync()
        if i >= 2:
            best = min(best, time.perf_counter() - start)
    return 2.0 * nbytes / best / 1e9
