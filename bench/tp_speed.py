"""Token-probability scoring speed: nlibias' batched scorers vs a faithful re-implementation of the
reference loops (CrowS-Pairs / WinoQueer ``metric.py`` ``mask_unigram`` and
``metric_autoregressive.py``), same model, same pairs, same machine.

* MLM: a BERT-base-shaped masked LM with random weights (12 layers, hidden 768, 30,522-row head).
  Reference: one masked copy per shared token, batch size 1, the full model (LM head at every
  position), autograd on as in the reference (no ``torch.no_grad``); also timed under
  ``torch.inference_mode`` ("reference, no grad") to separate that from batching. nlibias:
  :class:`nlibias.models.tp.hf.HFMaskedScorer` (all masked copies batched by tokens, LM head only at
  the masked positions).
* Causal: the embedded SmolLM2-135M (fp32). Reference: one forward pass per shared token on the
  prefix before it, batch size 1. nlibias: :class:`nlibias.models.tp.hf.HFCausalScorer` (one pass
  per sentence, batched).

Prints the ratio, the largest score difference, and what bounds the batched MLM path (its FLOP
rate against the matmul ceiling measured here).

    python bench/tp_speed.py              # 30 CrowS-Pairs pairs
    python bench/tp_speed.py --quick      # 6 pairs, smoke run
"""

from __future__ import annotations

import argparse
import csv
import difflib
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as common


def crows_pairs(n: int) -> list[tuple[str, str]]:
    path = Path(os.environ["NLIBIAS_DATA_DIR"]) / "crows-pairs" / "crows_pairs_anonymized.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = [(r["sent_more"], r["sent_less"]) for r in csv.DictReader(handle)]
    step = common.evenly_spaced_step(len(rows), n)
    return rows[::step][:n]


def _span(a: list[int], b: list[int]) -> tuple[list[int], list[int]]:
    matcher = difflib.SequenceMatcher(None, [str(x) for x in a], [str(x) for x in b])
    left: list[int] = []
    right: list[int] = []
    for op in matcher.get_opcodes():
        if op[0] == "equal":
            left += list(range(op[1], op[2]))
            right += list(range(op[3], op[4]))
    return left, right


def reference_mlm(
    model: Any, tokenizer: Any, pairs: list[tuple[str, str]], *, grad: bool
) -> list[tuple[float, float]]:
    """``mask_unigram`` for masked LMs: template positions 1..N-2, one masked copy each, batch 1."""
    import contextlib

    import torch

    log_softmax = torch.nn.LogSoftmax(dim=0)
    out = []
    context = contextlib.nullcontext() if grad else torch.inference_mode()
    with context:
        for s1, s2 in pairs:
            ids1 = tokenizer.encode(s1, return_tensors="pt")
            ids2 = tokenizer.encode(s2, return_tensors="pt")
            t1, t2 = _span(ids1[0].tolist(), ids2[0].tolist())
            score1 = score2 = 0.0
            for i in range(1, len(t1) - 1):
                for ids, template, side in ((ids1, t1, 1), (ids2, t2, 2)):
                    masked = ids.clone().detach()
                    masked[0][template[i]] = tokenizer.mask_token_id
                    hidden = model(masked)[0].squeeze(0)
                    value = log_softmax(hidden[template[i]])[ids[0][template[i]]].item()
                    if side == 1:
                        score1 += value
                    else:
                        score2 += value
            out.append((score1, score2))
    return out


def reference_causal(model: Any, tokenizer: Any, pairs: list[tuple[str, str]]) -> list[tuple[float, float]]:
    """``mask_unigram`` for autoregressive LMs: BOS + sentence; for template positions 1..N-1 one
    forward pass on the prefix before the token, batch 1, autograd on as in the reference."""
    import torch

    log_softmax = torch.nn.LogSoftmax(dim=0)
    bos = tokenizer.bos_token or tokenizer.eos_token
    out = []
    for s1, s2 in pairs:
        ids1 = tokenizer.encode(bos + s1, return_tensors="pt", add_special_tokens=False)
        ids2 = tokenizer.encode(bos + s2, return_tensors="pt", add_special_tokens=False)
        t1, t2 = _span(ids1[0].tolist(), ids2[0].tolist())
        scores = [0.0, 0.0]
        for i in range(1, len(t1)):
            for k, (ids, template) in enumerate(((ids1, t1), (ids2, t2))):
                hidden = model(ids[:, : template[i]])[0].squeeze(0)
                scores[k] += log_softmax(hidden[-1])[ids[0][template[i]]].item()
        out.append((scores[0], scores[1]))
    return out


def nlibias_scores(scorer: Any, pairs: list[tuple[str, str]]) -> list[tuple[float, float]]:
    scorer._memo.clear()  # every timing computes everything
    found: dict[int, tuple[float, float]] = {}
    for batch in scorer.score_pair_batches(pairs, variant="shared"):
        for i, s in zip(batch.indices, batch.scores, strict=True):
            found[i] = (s.more, s.less)
    return [found[i] for i in range(len(pairs))]


def timed(run: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    output = run()
    return time.perf_counter() - start, output


def max_diff(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    return max(abs(x - y) for p, q in zip(a, b, strict=True) for x, y in zip(p, q, strict=True))


def mlm_case(pairs: list[tuple[str, str]], work: Path) -> dict[str, Any]:
    from nlibias.models.tp.hf import HFMaskedScorer

    path = work / "tp-bert-base-mlm"
    if not (path / "config.json").is_file():
        common.build_model(path, "mlm", "bert-base")
    scorer = HFMaskedScorer(path, device="cpu", max_tokens=8192)
    model, tokenizer = scorer.model, scorer.tokenizer
    nlibias_scores(scorer, pairs[:2])  # warm-up
    fast_s, fast = timed(lambda: nlibias_scores(scorer, pairs))
    ref_s, ref = timed(lambda: reference_mlm(model, tokenizer, pairs, grad=True))
    nograd_s, nograd = timed(lambda: reference_mlm(model, tokenizer, pairs, grad=False))
    copies = sum(len(_span(tokenizer.encode(a), tokenizer.encode(b))[0]) - 2 for a, b in pairs) * 2
    tokens = sum(
        (len(_span(tokenizer.encode(a), tokenizer.encode(b))[0]) - 2)
        * (len(tokenizer.encode(a)) + len(tokenizer.encode(b)))
        for a, b in pairs
    )
    cfg = model.config
    per_token = (
        2 * cfg.num_hidden_layers * (4 * cfg.hidden_size**2 + 2 * cfg.hidden_size * cfg.intermediate_size)
    )
    flops = per_token * tokens + 2 * (cfg.hidden_size**2 + cfg.hidden_size * cfg.vocab_size) * copies
    ceiling = common.matmul_ceiling_tflops(cfg.hidden_size)
    return {
        "case": "mlm bert-base-shaped",
        "pairs": len(pairs),
        "masked_copies": copies,
        "nlibias_s": round(fast_s, 3),
        "reference_s": round(ref_s, 3),
        "reference_no_grad_s": round(nograd_s, 3),
        "ratio": round(ref_s / fast_s, 2),
        "ratio_vs_no_grad": round(nograd_s / fast_s, 2),
        "max_abs_diff": max_diff(fast, ref),
        "max_abs_diff_no_grad": max_diff(fast, nograd),
        "nlibias_tflops": round(flops / fast_s / 1e12, 4),
        "matmul_ceiling_tflops": round(ceiling, 4),
        "fraction_of_ceiling": round(flops / fast_s / 1e12 / ceiling, 3),
    }


def causal_case(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    from nlibias.models.tp.hf import HFCausalScorer

    scorer = HFCausalScorer("smollm2", device="cpu", dtype="float32")
    nlibias_scores(scorer, pairs[:2])
    fast_s, fast = timed(lambda: nlibias_scores(scorer, pairs))
    ref_s, ref = timed(lambda: reference_causal(scorer.model, scorer.tokenizer, pairs))
    return {
        "case": "causal SmolLM2-135M",
        "pairs": len(pairs),
        "nlibias_s": round(fast_s, 3),
        "reference_s": round(ref_s, 3),
        "ratio": round(ref_s / fast_s, 2),
        "max_abs_diff": max_diff(fast, ref),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="6 pairs")
    parser.add_argument("--skip-causal", action="store_true")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    threads = common.set_threads(args.threads)
    pairs = crows_pairs(6 if args.quick else args.pairs)
    work = Path(os.environ.get("TMPDIR", tempfile.gettempdir())) / "nlibias-bench"
    work.mkdir(parents=True, exist_ok=True)
    rows = [mlm_case(pairs, work)]
    if not args.skip_causal:
        rows.append(causal_case(pairs))
    common.print_table(rows, ["case", "pairs", "nlibias_s", "reference_s", "ratio", "max_abs_diff"])
    mlm = rows[0]
    print(
        f"MLM: {mlm['ratio_vs_no_grad']}x vs the reference loop without autograd; nlibias runs at "
        f"{mlm['nlibias_tflops']} TFLOP/s = {mlm['fraction_of_ceiling']:.0%} of this CPU's matmul ceiling "
        f"({mlm['matmul_ceiling_tflops']} TFLOP/s): the encoder's FLOPs on every masked copy bound it"
    )
    checks = [
        common.check("MLM speed-up vs reference loop", mlm["ratio"], 5.0),
        common.check("MLM largest score difference", mlm["max_abs_diff"], 1e-4, below=True),
    ]
    load = os.getloadavg()[0]
    print(f"load average during the run: {load:.1f} on {os.cpu_count()} cores (torch threads {threads})")
    common.write_results(
        "tp_speed", {"machine": common.machine_info(), "load_average": load, "rows": rows, "checks": checks}
    )


if __name__ == "__main__":
    main()
