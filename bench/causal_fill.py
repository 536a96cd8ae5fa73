"""Causal-LM fill speed: :class:`nlibias.models.mlm.causal_fill.CausalLMFiller` (batched: every
beam step of every left context of a chunk in length-sorted, token-capped batches, the LM head at
the last position only; every candidate sentence of the chunk re-ranked in batches) against the
one-call-per-sequence loop (:func:`nlibias.testing.causal_fill_reference.reference_fill`: one
forward pass per beam sequence and per candidate sentence), same model, texts and settings.

Inputs: unique masked hypotheses of the curated BBNLI-next templates (two subtopics), evenly
spaced. Model: the embedded SmolLM2-135M-Instruct, float32 on the CPU. Prints both times, the
ratio, whether the candidates agree (words, ranks; largest score difference) and the FLOP bound:
the forward passes' FLOPs (2 x non-embedding parameters x tokens, plus the LM head on the rows
whose logits are read, plus attention) against the matmul rate measured here.

    python bench/causal_fill.py                 # 8 texts
    python bench/causal_fill.py --texts 4       # smaller
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import _common as common

SUBTOPICS = ("jewish_woman_is_to_kids", "Muslim_man_to_many_wives")


def masked_texts(n: int) -> list[str]:
    from nlibias.benchmarks.bbnli import load_bbnli_dir
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data
    from nlibias.extension.masked_templates import expand_masked_templates, load_masked_templates

    everything = load_bbnli_dir(resolve_data(BBNLI_DATA))
    chosen = [s for s in everything if s.subtopic in SUBTOPICS]
    masked = expand_masked_templates(load_masked_templates(None, everything), chosen)
    unique = list(dict.fromkeys(m.hypothesis for m in masked))
    return unique[:: common.evenly_spaced_step(len(unique), n)][:n]


class FlopMeter:
    """FLOPs of a causal LM's forward passes: linear layers on every token, attention on every
    sequence, the LM head on the rows whose logits are returned (``logits_to_keep=1``: one row)."""

    def __init__(self, model: Any) -> None:
        import numpy as np

        cfg = model.config
        self.params = sum(int(np.prod(p.shape)) for n, p in model.named_parameters() if "embed" not in n)
        self.hidden, self.layers, self.vocab = cfg.hidden_size, cfg.num_hidden_layers, cfg.vocab_size
        self.flops = 0.0
        self.calls = 0
        self._handle = model.register_forward_pre_hook(self._count, with_kwargs=True)

    def _count(self, _module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        ids: Any = kwargs.get("input_ids", args[0] if args else None)
        rows, width = int(ids.shape[0]), int(ids.shape[1])
        head_rows = rows if kwargs.get("logits_to_keep") == 1 else rows * width
        self.flops += 2.0 * self.params * rows * width
        self.flops += self.layers * 4.0 * rows * width * width * self.hidden
        self.flops += 2.0 * self.hidden * self.vocab * head_rows
        self.calls += 1

    def reset(self) -> None:
        self.flops, self.calls = 0.0, 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--texts", type=int, default=8)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--spec", default="smollm2?beam=8&depth=3&pool=16")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    threads = common.set_threads(args.threads)

    from nlibias.extension.masked_templates import load_stopwords
    from nlibias.models.mlm.causal_fill import CausalLMFiller
    from nlibias.testing.causal_fill_reference import reference_fill

    stop = load_stopwords()
    filler = CausalLMFiller(args.spec, stopwords=stop, device="cpu", dtype="float32")
    texts = masked_texts(args.texts)
    model, tokenizer = filler.load()
    meter = FlopMeter(model)
    list(filler.fill_batches(texts[:1], top_k=args.top_k, exclude=[()]))  # warm-up
    meter.reset()
    with common.stopwatch() as fast_t:
        fast: dict[int, Any] = {}
        for batch in filler.fill_batches(texts, top_k=args.top_k, exclude=[()] * len(texts)):
            fast.update({int(i): rows for i, rows in zip(batch.indices, batch.candidates, strict=True)})
    fast_flops, fast_calls = meter.flops, meter.calls
    meter.reset()
    with common.stopwatch() as ref_t:
        reference = [
            reference_fill(
                model,
                tokenizer,
                text,
                set(stop),
                top_k=args.top_k,
                beam=filler.beam,
                depth=filler.depth,
                pool=filler.pool_size(args.top_k),
            )[0]
            for text in texts
        ]
    ref_flops, ref_calls = meter.flops, meter.calls
    same_words = all([c.word for c in fast[i]] == [w for w, *_ in reference[i]] for i in range(len(texts)))
    pairs = [
        (c.log_prob, r[2]) for i in range(len(texts)) for c, r in zip(fast[i], reference[i], strict=True)
    ]
    diff = max(abs(a - b) for a, b in pairs)
    relative = max(abs(a - b) / max(abs(b), 1e-12) for a, b in pairs)
    ceiling = common.matmul_ceiling_tflops(filler.load()[0].config.hidden_size)
    fast_s, ref_s = fast_t["seconds"], ref_t["seconds"]
    result = {
        "machine": common.machine_info(),
        "threads": threads,
        "spec": args.spec,
        "texts": len(texts),
        "top_k": args.top_k,
        "batched_s": round(fast_s, 3),
        "one_call_per_sequence_s": round(ref_s, 3),
        "ratio": round(ref_s / fast_s, 2),
        "batched_forward_calls": fast_calls,
        "reference_forward_calls": ref_calls,
        "same_words_and_ranks": same_words,
        "max_abs_score_diff": float(f"{diff:.3g}"),
        "max_relative_score_diff": float(f"{relative:.3g}"),
        "batched_gflop": round(fast_flops / 1e9, 2),
        "reference_gflop": round(ref_flops / 1e9, 2),
        "matmul_ceiling_tflops": round(ceiling, 4),
        "batched_tflops": round(fast_flops / fast_s / 1e12, 4),
        "fraction_of_ceiling": round(fast_flops / fast_s / 1e12 / ceiling, 3),
        "bound_s": round(fast_flops / (ceiling * 1e12), 3),
    }
    for key, value in result.items():
        if key != "machine":
            print(f"{key:>26}: {value}")
    print(
        f"\nbatched fill: {fast_s:.2f} s for {len(texts)} texts ({fast_calls} forward calls) vs "
        f"{ref_s:.2f} s one sequence per call ({ref_calls} calls): {ref_s / fast_s:.2f}x. "
        f"Its {fast_flops / 1e9:.1f} GFLOP at this CPU's measured matmul rate ({ceiling:.3f} TFLOP/s) "
        f"take at least {fast_flops / (ceiling * 1e12):.2f} s: it runs at {result['fraction_of_ceiling']:.0%} of that bound."
    )
    # sentence log-probabilities of about -50 summed in float32 through 30 layers: padded batches
    # and single sequences differ in the last digits, so the check is relative
    common.check("same words and ranks", float(same_words), 1.0)
    common.check("scores agree (max relative difference)", relative, 1e-5, below=True)
    print(f"results: {common.write_results('causal_fill', result)}")


if __name__ == "__main__":
    main()
