"""What int8 dynamic quantization does to a *trained* model's answers: SmolLM2-135M-Instruct.

``--quantize int8`` (:func:`nlibias.models.hf_common.quantize_int8_dynamic`: every ``nn.Linear``
int8, activations quantized per batch) was measured on the random-weight NLI classifiers of
``nli_throughput.py --variants-only``, whose probabilities are near uniform, so that a tiny change
flips many argmaxes. No trained NLI checkpoint can be downloaded here; the one trained transformer
on the machine is the embedded SmolLM2. This script applies the same quantization to it and
compares its scored yes/no answers with fp32's on the paper's Prompt 1 (every bias-audit prompt of
``--premises`` BBNLI premises, seed 0): answer agreement, the largest and the mean change of
P(yes), and the speed of both (best of ``--repeats`` alternating runs). A causal LM is not an NLI
classifier: the numbers show how far int8 moves a trained transformer's decisions, not an NLI
model's. Writes ``bench/results/int8_trained.json``.

    python bench/int8_trained.py                 # 8 premises, 124 prompts, ~1.5 min
    python bench/int8_trained.py --premises 2    # a smoke run
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import time
from typing import Any

import _common as common
import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def scored_p_yes(lm: Any, prompts: list[str]) -> np.ndarray:
    """P(yes) of each prompt (renormalised over yes/no), in prompt order."""
    p_yes = np.full(len(prompts), np.nan)
    for batch in lm.answer_batches(prompts, answers=("yes", "no"), mode="scored"):
        for i, record in zip(batch.indices, batch.records, strict=True):
            p_yes[int(i)] = record.probs["yes"]
    return p_yes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--premises", type=int, default=8, help="BBNLI premises, every bias prompt of each")
    parser.add_argument(
        "--repeats", type=int, default=2, help="alternating timed runs of each way (best kept)"
    )
    args = parser.parse_args()

    from nlibias.benchmarks.bbnli import expand_bbnli
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data
    from nlibias.models.generative.hf_causal import CausalLMSource, HFCausalLM
    from nlibias.models.generative.prompts import PROMPT_STYLES
    from nlibias.models.hf_common import quantize_int8_dynamic

    threads = common.set_threads(None)
    bias = expand_bbnli(resolve_data(BBNLI_DATA)).bias_samples
    premises = sorted({s.premise for s in bias})
    chosen = set(random.Random(0).sample(premises, min(args.premises, len(premises))))
    prompts = list(
        dict.fromkeys(
            PROMPT_STYLES["true"].render(s.premise, s.hypothesis) for s in bias if s.premise in chosen
        )
    )
    fp32 = HFCausalLM(CausalLMSource.smollm2(), name="smollm2", device="cpu")
    model, _ = fp32.load()
    int8 = copy.copy(fp32)  # same tokenizer and settings; its own model below
    int8._model = quantize_int8_dynamic(copy.deepcopy(model))
    # The same without the LM head (49,152 x 576, tied to the embeddings), which an NLI
    # classifier does not have: the decoder layers int8, the head fp32.
    int8_body = copy.copy(fp32)
    int8_body._model = copy.deepcopy(model)
    int8_body._model.model = quantize_int8_dynamic(int8_body._model.model)

    ways = {"fp32": fp32, "int8": int8, "int8, LM head fp32": int8_body}
    for lm in ways.values():
        scored_p_yes(lm, prompts[:2])  # warm-up
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    p_yes: dict[str, np.ndarray] = {}
    load_before = os.getloadavg()
    for _ in range(args.repeats):
        for name, lm in ways.items():
            start = time.perf_counter()
            p_yes[name] = scored_p_yes(lm, prompts)
            seconds[name].append(time.perf_counter() - start)
    load_after = os.getloadavg()

    answers = {name: np.where(p >= 0.5, "yes", "no") for name, p in p_yes.items()}
    rows = []
    for name in ways:
        change = np.abs(p_yes[name] - p_yes["fp32"])
        rows.append(
            {
                "way": name,
                "prompts": len(prompts),
                "seconds": round(min(seconds[name]), 2),
                "prompts_per_s": round(len(prompts) / min(seconds[name]), 2),
                "x_faster_than_fp32": round(min(seconds["fp32"]) / min(seconds[name]), 2),
                "yes_share": round(float((answers[name] == "yes").mean()), 3),
                "median_margin": round(float(np.median(np.abs(p_yes[name] - 0.5))), 3),
                "answer_agreement_with_fp32": round(float((answers[name] == answers["fp32"]).mean()), 4),
                "mean_abs_p_yes_change": round(float(change.mean()), 4),
                "max_abs_p_yes_change": round(float(change.max()), 4),
            }
        )
    common.print_table(rows, list(rows[0]))
    print(f"{len(prompts)} prompts, torch threads {threads}; margin: |P(yes) - 0.5|")
    path = common.write_results(
        "int8_trained",
        {
            "machine": {**common.machine_info(), "loadavg_before": load_before, "loadavg_after": load_after},
            "model": "SmolLM2-135M-Instruct (embedded GGUF, dequantised to fp32)",
            "prompts": len(prompts),
            "premises": args.premises,
            "repeats": args.repeats,
            "rows": rows,
            "runs_s": {name: [round(s, 2) for s in runs] for name, runs in seconds.items()},
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
