"""Audit throughput against the hardware (issue 38): real architectures' shapes, random weights.

Speed depends on a model's shape, not on its weights' values, so the models are built with
``from_config`` from configurations written below (no download): RoBERTa-large- and
DeBERTa-v3-large-shaped NLI classifiers, Llama-3.2-1B- and Llama-3.1-8B-shaped causal LMs, each
in bfloat16 and float32. Tokenizers are learnt from the BBNLI texts (WordPiece for the
classifiers, word-level with a chat template for the LMs); embeddings keep the real vocabulary
size. Every audit runs through the one audit path (:func:`nlibias.audit`), the models passed
in-process as predictor objects: a classifier is saved in its dtype and loaded by
:class:`HFNLIClassifier` with ``dtype="auto"`` (the checkpoint's own); a causal LM is built on the
device and handed to :class:`HFCausalLM` (saving 16-32 GB of random weights would only cost time).

Rows (one per model and dtype):

* ``nli``: the classifier audit of every sample;
* ``scored``: the generative yes/no audit, both prompt styles, scored in one pass with shared
  prompt prefixes computed once; beside it ``scored-lm-eval`` (lm-evaluation-harness' HF backend
  in-process on the same model object and the same prompts, exported by ``export_lm_eval``; only
  when ``lm_eval`` is importable) and ``scored-one-at-a-time`` (a loop of one forward per prompt,
  full logits, on evenly spaced prompts, rate extrapolated);
* ``generated``: greedy answers of 64 new tokens, beside the memory-bandwidth bound of decoding
  (every step reads every weight once: weight bytes / bandwidth per step).

Figures: items/s, tokens/s (real tokens through the model), achieved TFLOP/s (2 x non-embedding
parameters x tokens, plus attention 4 x L^2 x hidden per layer per sequence, plus the LM head
where it runs; DeBERTa's relative-position terms are not counted), and the share of the matmul
peak measured in the same run (the best of 5 square products in the same dtype; float32 on a GPU
against TF32, the figure torch reaches with TF32 on, and strict float32 beside it).

    python bench/gpu_throughput.py                       # --small: tiny shapes, 32 samples, CPU
    python bench/gpu_throughput.py --device cuda --full  # the real shapes, all of BBNLI
"""

from __future__ import annotations

import argparse
import functools
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as common
from peer_lm_eval import forward_flops, lm_eval_padded_tokens

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")  # lm-eval's task data are local files

NLI_SHAPES: dict[str, dict[str, Any]] = {
    # roberta-large: 24 layers, hidden 1024, 16 heads, FFN 4096, vocabulary 50,265 (355M)
    "roberta-large": {"arch": "roberta", "layers": 24, "hidden": 1024, "heads": 16, "ffn": 4096, "vocab": 50265},
    # microsoft/deberta-v3-large: the same trunk, vocabulary 128,100, relative attention (435M)
    "deberta-v3-large": {"arch": "deberta-v2", "layers": 24, "hidden": 1024, "heads": 16, "ffn": 4096,
                         "vocab": 128100},
}  # fmt: skip
CAUSAL_SHAPES: dict[str, dict[str, Any]] = {
    # Llama-3.2-1B: 16 layers, hidden 2048, 32 query / 8 key-value heads, FFN 8192, tied embeddings
    "llama-1b": {"layers": 16, "hidden": 2048, "heads": 32, "kv_heads": 8, "ffn": 8192, "vocab": 128256,
                 "tie": True},
    # Llama-3.1-8B: 32 layers, hidden 4096, 32 / 8 heads, FFN 14336
    "llama-8b": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336, "vocab": 128256,
                 "tie": False},
}  # fmt: skip
#: ``--small``: the same architectures, tiny (each runs in well under a second on 2 CPU cores).
SMALL: dict[str, dict[str, Any]] = {
    "roberta-large": {"layers": 2, "hidden": 64, "heads": 2, "ffn": 256, "vocab": 2048},
    "deberta-v3-large": {"layers": 2, "hidden": 64, "heads": 2, "ffn": 256, "vocab": 2048},
    "llama-1b": {"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "ffn": 256, "vocab": 2048},
    "llama-8b": {"layers": 2, "hidden": 128, "heads": 4, "kv_heads": 2, "ffn": 384, "vocab": 2048},
}
#: Llama 3's rotary base (transformers 5 files it under ``rope_parameters``, 4 as ``rope_theta``).
ROPE: dict[str, Any] = {"rope_theta": 500000.0}
STYLES = ("true", "entailed")
COLUMNS = ["part", "model", "dtype", "items", "seconds", "items_per_s", "tokens_per_s", "tflops",
           "tflops_forward", "share_of_peak", "note"]  # fmt: skip


_CORPUS: list[str] = []


def texts() -> tuple[str, ...]:
    """BBNLI's distinct premises and hypotheses (the tokenizers' corpus), from :func:`make_samples`."""
    return tuple(_CORPUS)


@functools.cache
def nli_tokenizer(vocab: int) -> Any:
    """A WordPiece tokenizer learnt from :func:`texts` (as large as they allow, up to ``vocab``)."""
    from nlibias.testing.tiny_models import train_tiny_tokenizer

    return train_tiny_tokenizer(texts(), vocab_size=vocab, model_max_length=512, token_type_ids=False)


def shape_of(name: str, small: bool) -> dict[str, Any]:
    """The configuration of ``name`` (tiny dimensions under ``small``, the architecture kept)."""
    base = {**NLI_SHAPES, **CAUSAL_SHAPES}[name]
    return {**base, **SMALL[name]} if small else dict(base)


def make_samples(work: Path, sizes: list[int | None]) -> list[tuple[Path, list[Any]]]:
    """BBNLI expanded by the library once; for each size, every sample (None) or that many in
    whole pro/anti pairs evenly spaced over the set (every subtopic's stretch), written as a
    samples run: ``(run directory, samples)`` for each."""
    import nlibias
    from nlibias.io.samples import read_samples, write_samples

    everything = nlibias.expand("bbnli", out_dir=work / "bbnli")
    samples = list(read_samples(everything.path))
    _CORPUS[:] = dict.fromkeys(text for s in samples for text in (s.premise, s.hypothesis))
    keys = list(dict.fromkeys(s.pair_key for s in samples if s.stereotype))
    found = []
    for n in sizes:
        if n is None or n >= len(samples):
            found.append((Path(everything.path), samples))
            continue
        wanted = max(1, n // 2)
        chosen = set(keys[:: common.evenly_spaced_step(len(keys), wanted)][:wanted])
        picked = [s for s in samples if s.stereotype and s.pair_key in chosen]
        write_samples(work / f"subset-{n}", picked)
        found.append((work / f"subset-{n}", picked))
    return found


def build_classifier(name: str, spec: dict[str, Any], dtype: str, out: Path) -> Path:
    """A random-weight classifier of ``spec`` saved in ``dtype`` (so its config records it)."""
    import torch
    from transformers import AutoModelForSequenceClassification, DebertaV2Config, RobertaConfig

    from nlibias.testing.tiny_models import save_model

    tokenizer = nli_tokenizer(spec["vocab"])
    sizes = dict(vocab_size=max(spec["vocab"], len(tokenizer)), hidden_size=spec["hidden"],
                 num_hidden_layers=spec["layers"], num_attention_heads=spec["heads"],
                 intermediate_size=spec["ffn"], pad_token_id=tokenizer.pad_token_id, id2label=common.ID2LABEL,
                 label2id={v: k for k, v in common.ID2LABEL.items()})  # fmt: skip
    if spec["arch"] == "roberta":
        config: Any = RobertaConfig(max_position_embeddings=512 + tokenizer.pad_token_id + 1, type_vocab_size=1,
                                    bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id,
                                    **sizes)  # fmt: skip
    else:  # DeBERTa-v3: relative attention over 256 log buckets, no absolute positions
        # (keys transformers 5 keeps as extra attributes, as a checkpoint's config.json sets them)
        relative: dict[str, Any] = {
            "position_buckets": 256,
            "norm_rel_ebd": "layer_norm",
            "share_att_key": True,
        }
        config = DebertaV2Config(max_position_embeddings=512, type_vocab_size=0, relative_attention=True,
                                 max_relative_positions=-1, pos_att_type=["p2c", "c2p"], position_biased_input=False,
                                 layer_norm_eps=1e-7, **relative, **sizes)  # fmt: skip
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_config(config).to(getattr(torch, dtype))
    return save_model(model, tokenizer, out / f"{name}-{dtype}")


def build_causal(name: str, spec: dict[str, Any], dtype: str, device: str, out: Path) -> Any:
    """A random-weight Llama-shaped :class:`HFCausalLM` built on ``device`` in ``dtype``; its
    directory holds the config and tokenizer only (the weights stay in memory)."""
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    from nlibias.models.generative.hf_causal import CausalLMSource, HFCausalLM
    from nlibias.models.hf_common import dtype_kwargs
    from nlibias.testing.tiny_causal import train_tiny_causal_tokenizer

    tokenizer = train_tiny_causal_tokenizer(texts(), vocab_size=spec["vocab"])
    config = LlamaConfig(vocab_size=max(spec["vocab"], len(tokenizer)), hidden_size=spec["hidden"],
                         intermediate_size=spec["ffn"], num_hidden_layers=spec["layers"],
                         num_attention_heads=spec["heads"], num_key_value_heads=spec["kv_heads"],
                         max_position_embeddings=8192, tie_word_embeddings=spec["tie"],
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                         bos_token_id=None, **ROPE)  # fmt: skip
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, **dtype_kwargs(getattr(torch, dtype))).eval()
    with torch.inference_mode():  # the first forward imports attention code lazily: not timed
        model(input_ids=torch.ones((1, 4), dtype=torch.long, device=device))
    folder = out / f"{name}-{dtype}"
    config.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    tokenizer.padding_side = "left"  # as HFCausalLM.load sets it
    lm = HFCausalLM(CausalLMSource(str(folder)), name=f"{name}-{dtype}", device=device, dtype=dtype)
    lm._model, lm._tokenizer = model, tokenizer  # in-memory weights: load() returns these
    return lm


def save_standin(lm: Any, out: Path) -> Path:
    """A 1-layer model with ``lm``'s tokenizer and chat template: what ``export_lm_eval`` loads to
    write the prompts (they depend on the tokenizer only), so the big weights are never saved."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from nlibias.testing.tiny_models import save_model

    tokenizer = lm._tokenizer
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                         num_attention_heads=1, num_key_value_heads=1, pad_token_id=tokenizer.pad_token_id,
                         eos_token_id=tokenizer.eos_token_id, bos_token_id=None)  # fmt: skip
    return save_model(LlamaForCausalLM(config), tokenizer, out / "standin")


def timed_audit(samples: Path, predictors: list[Any], meter: Any) -> tuple[Any, float]:
    """``nlibias.audit`` (no cache, no bootstrap) of ``samples``; the result and its wall time."""
    import nlibias

    meter.reset()
    started = time.perf_counter()
    result = nlibias.audit(samples, models=predictors, cache=False, bootstrap=0, progress=False)
    return result, time.perf_counter() - started


def row(part: str, model: str, dtype: str, items: int, seconds: float, meter: Any, tokens: int,
        flops: float, peak: float, **extra: Any) -> dict[str, Any]:  # fmt: skip
    """One result row: rates end to end, TFLOP/s end to end and inside the model's forwards."""
    forward = meter.seconds if meter is not None and meter.seconds > 0 else seconds
    return _significant({
        "part": part, "model": model, "dtype": dtype, "items": items, "seconds": seconds,
        "items_per_s": items / seconds, "tokens": tokens, "tokens_per_s": tokens / seconds,
        "forward_seconds": forward, "flops": flops, "tflops": flops / seconds / 1e12,
        "tflops_forward": flops / forward / 1e12, "peak_tflops": peak,
        "share_of_peak": flops / seconds / 1e12 / peak, "share_of_peak_forward": flops / forward / 1e12 / peak,
        **extra,
    })  # fmt: skip


def _significant(values: dict[str, Any]) -> dict[str, Any]:
    """Floats to 4 significant digits (a CPU's 2e-5 TFLOP/s must not print as 0.0)."""
    return {k: float(f"{v:.4g}") if isinstance(v, float) else v for k, v in values.items()}


def nli_row(
    name: str, spec: dict[str, Any], dtype: str, args: Any, work: Path, peak: float
) -> dict[str, Any]:
    """The classifier audit of every sample, loaded with ``dtype="auto"`` (the saved dtype)."""
    from nlibias.models.nli.hf import HFNLIClassifier
    from nlibias.runtime.classifier import ClassifierPredictor

    folder = build_classifier(name, spec, dtype, work)
    clf = HFNLIClassifier(folder, device=args.device, name=f"{name}-{dtype}", **args.batching)
    meter = common.ForwardMeter(clf.model)
    timed_audit(args.generated_dir, [ClassifierPredictor(clf)], meter)  # warm-up: kernels, allocator
    result, seconds = timed_audit(args.samples_dir, [ClassifierPredictor(clf)], meter)
    (described,) = result.metrics["run"]["models"].values()
    unique = list(dict.fromkeys((s.premise, s.hypothesis) for s in args.samples))
    flops = common.encoder_flops(clf.model, clf.encode(unique)[2])["total"]
    meter.remove()
    return row("nli", name, described["dtype"], len(unique), seconds, meter, meter.real_tokens, flops, peak,
               samples=len(args.samples), padded_tokens=meter.padded_tokens, shape=spec,
               note=f"{len(unique)} unique pairs, dtype auto")  # fmt: skip


def scored_rows(name: str, lm: Any, dtype: str, args: Any, work: Path, peak: float) -> list[dict[str, Any]]:
    """The scored yes/no audit (both prompt styles, shared prefixes once), lm-eval's HF backend on
    the same prompts and model, and a one-prompt-at-a-time loop."""
    from nlibias.models.generative.prompts import PROMPT_STYLES
    from nlibias.runtime.generative import GenerativePredictor

    model, tokenizer = lm.load()
    predictors = [GenerativePredictor(lm, PROMPT_STYLES[s], mode="scored") for s in STYLES]
    meter = common.ForwardMeter(model)
    timed_audit(args.generated_dir, predictors, meter)  # warm-up, on the few samples
    log("  warm-up")
    result, seconds = timed_audit(args.samples_dir, predictors, meter)
    log("  audit")
    stats = [m["stats"] for m in result.metrics["run"]["models"].values()]
    real, padded = sum(s["real_tokens"] for s in stats), sum(s["padded_tokens"] for s in stats)
    prompts = [lm.format_prompt(PROMPT_STYLES[s].render(x.premise, x.hypothesis)) for s in STYLES
               for x in args.samples]  # fmt: skip
    unique = list(dict.fromkeys(prompts))
    lengths = [len(ids) for ids in tokenizer(unique, add_special_tokens=False)["input_ids"]]
    flops = forward_flops(model, real, lengths, head_rows=len(unique))
    rows: list[dict[str, Any] | None] = [row("scored", name, dtype, len(unique), seconds, meter, real, flops, peak, padded_tokens=padded,
                samples=len(args.samples), note=f"{len(unique)} prompts, {real} tokens after prefix sharing "
                f"({sum(lengths)} without)")]  # fmt: skip
    rows.append(lm_eval_row(name, lm, dtype, args, work, peak, unique, lengths, meter, seconds, flops))
    log("  lm-eval")
    rows.append(one_at_a_time_row(name, lm, dtype, args, peak, unique, meter))
    log("  one at a time")
    meter.remove()
    return [r for r in rows if r is not None]


def lm_eval_row(name: str, lm: Any, dtype: str, args: Any, work: Path, peak: float, prompts: list[str],
                lengths: list[int], meter: Any, ours_seconds: float, ours_flops: float) -> dict[str, Any] | None:  # fmt: skip
    """lm-eval's HF backend in-process on the same model object, on the tasks ``export_lm_eval``
    writes for both prompt styles (the export checks its tokens are nlibias'); None without lm_eval."""
    try:
        from lm_eval import simple_evaluate
        from lm_eval.models.huggingface import HFLM
        from lm_eval.tasks import TaskManager
    except ImportError:
        print("lm_eval is not importable: no lm-eval row (pip install 'nlibias[lm-eval]')")
        return None
    from nlibias.integrations.lm_eval import export_lm_eval

    model, tokenizer = lm.load()
    standin = save_standin(lm, work / lm.name)
    exports = [export_lm_eval(args.samples_dir, work / lm.name / f"task-{s}", prompt=s, model=f"hf:{standin}",
                              device="cpu") for s in STYLES]  # fmt: skip
    log("  export")
    harness = HFLM(
        pretrained=model, tokenizer=tokenizer, batch_size=args.lm_eval_batch_size, add_bos_token=False
    )
    tasks = TaskManager(include_path=[str(e.out_dir) for e in exports], include_defaults=False)
    log("  lm-eval set up")
    meter.reset()
    started = time.perf_counter()  # its own tokenization and batching included, no stderr bootstrap
    simple_evaluate(model=harness, tasks=[e.task for e in exports], task_manager=tasks, log_samples=False,
                    bootstrap_iters=0)  # fmt: skip
    seconds = time.perf_counter() - started
    real, padded = lm_eval_padded_tokens(tokenizer, prompts, args.lm_eval_batch_size)
    flops = forward_flops(model, padded, lengths, head_rows=padded)  # full logits at every position
    return row("scored-lm-eval", name, dtype, len(prompts), seconds, meter, real, flops, peak,
               padded_tokens=padded, nlibias_speedup=round(seconds / ours_seconds, 2),
               flop_ratio=round(flops / ours_flops, 2),
               note=f"nlibias {seconds / ours_seconds:.2f}x faster; FLOP ratio {flops / ours_flops:.2f}")  # fmt: skip


def one_at_a_time_row(name: str, lm: Any, dtype: str, args: Any, peak: float, prompts: list[str],
                      meter: Any) -> dict[str, Any]:  # fmt: skip
    """One forward per prompt (full logits, the answer read at the last position), on evenly
    spaced prompts; the rate stands for all of them."""
    import torch

    model, tokenizer = lm.load()
    chosen = prompts[:: common.evenly_spaced_step(len(prompts), args.per_prompt)][: args.per_prompt]
    sequences = tokenizer(chosen, add_special_tokens=False)["input_ids"]
    meter.reset()
    started = time.perf_counter()
    with torch.inference_mode():
        for ids in sequences:
            logits = model(input_ids=torch.tensor([ids], device=lm.device)).logits[0, -1]
            logits.float().softmax(-1).cpu()
    seconds = time.perf_counter() - started
    lengths = [len(ids) for ids in sequences]
    flops = forward_flops(model, sum(lengths), lengths, head_rows=sum(lengths))
    return row("scored-one-at-a-time", name, dtype, len(chosen), seconds, meter, sum(lengths), flops, peak,
               note=f"{len(chosen)} evenly spaced prompts, rate extrapolated")  # fmt: skip


def generated_row(name: str, lm: Any, dtype: str, args: Any, peak: float, bandwidth: float) -> dict[str, Any]:
    """Greedy answers of ``--new-tokens`` tokens (prompt ``true``) on a subset; tokens/s beside
    the memory-bandwidth bound (each decode step reads every weight once)."""
    from nlibias.models.generative.prompts import PROMPT_STYLES
    from nlibias.runtime.generative import GenerativePredictor

    model, _ = lm.load()
    predictor = GenerativePredictor(
        lm, PROMPT_STYLES["true"], mode="generated", max_new_tokens=args.new_tokens
    )
    meter = common.ForwardMeter(model)
    shapes: list[tuple[int, int]] = []  # each forward (prefill, then each step) gives each row a token
    counter = model.register_forward_pre_hook(
        lambda _m, a, kw: shapes.append(tuple(kw.get("input_ids", a[0] if a else None).shape)),
        with_kwargs=True,
    )
    result, seconds = timed_audit(args.generated_dir, [predictor], meter)
    counter.remove()
    new = sum(rows for rows, _ in shapes)  # rows that stopped early are computed too, and counted
    prefilled = sum(rows for rows, width in shapes if width > 1)
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    bound = meter.calls * weight_bytes / (bandwidth * 1e9)  # every forward (step) reads every weight
    (described,) = result.metrics["run"]["models"].values()
    prompt_tokens = described["stats"]["real_tokens"]
    # the prompts once, then one token a row a step; the LM head once per new token (decode
    # attention over the cache is left out: small at these lengths)
    flops = forward_flops(model, prompt_tokens + new - prefilled, [], head_rows=new)
    meter.remove()
    return row("generated", name, dtype, len(result.predictions), seconds, meter, new, flops, peak,
               decode_forwards=meter.calls, weight_gb=weight_bytes / 1e9, bandwidth_gbs=bandwidth,
               bandwidth_bound_seconds=bound, bound_tokens_per_s=new / bound,
               share_of_bandwidth_bound=bound / meter.seconds,
               note=f"{args.new_tokens} new tokens; bandwidth bound {new / bound:.0f} tok/s "
               f"({bound / meter.seconds:.0%} reached in the forwards)")  # fmt: skip


def hardware(device: str, dtypes: list[str], small: bool) -> dict[str, Any]:
    """Matmul peaks per dtype (float32 on a GPU: TF32 and strict) and memory bandwidth."""
    n = 256 if device == "cpu" else 8192  # a CPU without bf16 units takes seconds for 1024 in bf16
    found: dict[str, Any] = {"matmul_size": n, "peak_tflops": {}}
    for dtype in dtypes:
        if dtype == "float32" and device.startswith("cuda"):
            found["peak_tflops"]["float32-strict"] = common.matmul_peak_tflops(device, dtype, n, tf32=False)
            found["peak_tflops"][dtype] = common.matmul_peak_tflops(device, dtype, n, tf32=True)
        else:
            found["peak_tflops"][dtype] = common.matmul_peak_tflops(device, dtype, n)
    found["bandwidth_gbs"] = common.memory_bandwidth_gbs(device, (64 if small else 1024) << 20)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--full", action="store_true", help="the real shapes on all of BBNLI")
    size.add_argument("--small", action="store_true", help="tiny shapes, 32 samples (the default)")
    parser.add_argument("--models", default=",".join([*NLI_SHAPES, *CAUSAL_SHAPES]))
    parser.add_argument("--dtypes", default="bfloat16,float32")
    parser.add_argument("--parts", default="nli,scored,generated")
    parser.add_argument("--samples", type=int, help="samples audited (default: all; --small 32)")
    parser.add_argument(
        "--generated-samples", type=int, help="samples of the generated mode (default 8; --full 256)"
    )
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument(
        "--per-prompt", type=int, help="prompts of the one-at-a-time loop (default 8; --full 64)"
    )
    parser.add_argument("--lm-eval-batch-size", type=int, help="lm-eval's batch size (default 8; --full 32)")
    parser.add_argument("--max-tokens", type=int, help="tokens per batch (default: the library's)")
    parser.add_argument("--max-batch-size", type=int, help="rows per batch (default: the library's)")
    parser.add_argument("--threads", type=int)
    parser.add_argument("--out", help="results file (default bench/results/gpu_throughput_<small|full>.json)")
    args = parser.parse_args()
    run(args)


def run(args: Any) -> None:
    """Every (model, dtype, part) row, the table, the JSON."""
    small = not args.full
    threads = common.set_threads(args.threads)
    args.batching = {k: v for k, v in (("max_tokens", args.max_tokens), ("max_batch_size", args.max_batch_size))
                     if v is not None}  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="nlibias-gpu-throughput-"))
    args.generated_samples = args.generated_samples or (8 if small else 256)
    sizes = [args.samples or (32 if small else None), args.generated_samples]
    (args.samples_dir, args.samples), (args.generated_dir, _) = make_samples(work, sizes)
    args.per_prompt = args.per_prompt or (8 if small else 64)
    args.lm_eval_batch_size = args.lm_eval_batch_size or (8 if small else 32)
    log(f"{len(args.samples)} samples in {args.samples_dir}")
    dtypes, parts = args.dtypes.split(","), args.parts.split(",")
    found = hardware(args.device, dtypes, small)
    log(f"matmul peaks {found['peak_tflops']} TFLOP/s, bandwidth {found['bandwidth_gbs']:.1f} GB/s")
    rows: list[dict[str, Any]] = []
    for name in args.models.split(","):
        spec = shape_of(name, small)
        for dtype in dtypes:
            peak = found["peak_tflops"][dtype]
            if name in NLI_SHAPES and "nli" in parts:
                rows.append(nli_row(name, spec, dtype, args, work, peak))
                log(f"{name} {dtype}: nli")
            if name in CAUSAL_SHAPES and {"scored", "generated"} & set(parts):
                lm = build_causal(name, spec, dtype, args.device, work)
                log(f"{name} {dtype}: built")
                if "scored" in parts:
                    rows += scored_rows(name, lm, dtype, args, work, peak)
                    log(f"{name} {dtype}: scored")
                if "generated" in parts:
                    rows.append(generated_row(name, lm, dtype, args, peak, found["bandwidth_gbs"]))
                    log(f"{name} {dtype}: generated")
                del lm
                release(args.device)
    machine = common.machine_info()
    machine.update(device=args.device, torch_threads=threads, float32_matmul_precision=float32_precision())
    print(f"device {args.device} ({machine['gpu'] or machine['cpu']}), {'small' if small else 'full'} shapes, "
          f"{len(args.samples)} samples; matmul peak {found['peak_tflops']} TFLOP/s, "
          f"memory bandwidth {found['bandwidth_gbs']:.1f} GB/s")  # fmt: skip
    common.print_table(rows, COLUMNS)
    checks = [] if small else targets(rows)
    payload = {"machine": machine, "mode": "small" if small else "full", "samples": len(args.samples),
               "generated_samples": args.generated_samples, "hardware": found,
               "rows": rows, "checks": checks}  # fmt: skip
    if args.out:
        Path(args.out).write_text(__import__("json").dumps(payload, indent=2) + "\n")
        print(f"wrote {args.out}")
    else:
        print(f"wrote {common.write_results('gpu_throughput_' + ('small' if small else 'full'), payload)}")


def targets(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Issue 38's targets, for the rows this run has: the bf16 classifier audit of the
    roberta-large shape at >= 30% of the measured bf16 matmul peak; the bf16 scored audit of the
    8B shape at >= 40% of it in the forward passes, and faster than lm-eval by at least the ratio
    of their FLOPs."""
    found = []
    for r in rows:
        if r["dtype"] != "bfloat16":
            continue
        if (r["part"], r["model"]) == ("nli", "roberta-large"):
            found.append(
                common.check("roberta-large bf16 audit, share of the bf16 peak", r["share_of_peak"], 0.3)
            )
        if (r["part"], r["model"]) == ("scored", "llama-8b"):
            found.append(common.check("8B bf16 scored, forwards' share of the bf16 peak",
                                      r["share_of_peak_forward"], 0.4))  # fmt: skip
        if (r["part"], r["model"]) == ("scored-lm-eval", "llama-8b"):
            found.append(common.check("8B bf16 speed-up over lm-eval / FLOP ratio",
                                      r["nlibias_speedup"] / r["flop_ratio"], 1.0))  # fmt: skip
    return found


_STARTED = time.perf_counter()


def log(message: str) -> None:
    """A progress line with the seconds since the start."""
    print(f"[{time.perf_counter() - _STARTED:7.1f} s] {message}", flush=True)


def float32_precision() -> str:
    import torch

    return torch.get_float32_matmul_precision()


def release(device: str) -> None:
    """Free a model's memory before the next is built (the 8B shape needs the room)."""
    import gc

    gc.collect()
    if device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
