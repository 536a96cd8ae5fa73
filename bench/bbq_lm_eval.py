"""Scored BBQ on SmolLM2: nlibias vs lm-evaluation-harness's ``multiple_choice`` route, same prompts.

The same BBQ questions (default 96, every 1 in N of the offline examples), the same SmolLM2 weights
(the embedded GGUF, dequantised to fp32), the same prompt text (the ``race`` style with the chat
template applied) and the same options as choices (no delimiter): ``nlibias audit --generative
smollm2 --prompt race --no-cache`` vs ``lm_eval`` on a task written here (``output_type:
multiple_choice``: one log-likelihood request per option, each the whole prompt plus the option).
Each tool runs as its own process, as a user runs it (model loading included), ``--rounds`` times,
alternating which goes first.

Printed: median wall time of each and the ratio; how many questions get the same choice and the
largest difference between the two tools' option log-likelihoods; the tokens each runs through
the model and the FLOPs they cost (2 x non-embedding parameters x tokens + attention + the LM head
where each computes it: nlibias at each prompt's last position and the options' positions,
lm-eval at every position), whose ratio bounds the speed-up that token counts explain.

    python bench/bbq_lm_eval.py --questions 96 --rounds 1
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import machine_info, write_results
from peer_lm_eval import forward_flops, timed_process

BIN = Path(sys.executable).parent


def write_task(work: Path, samples: list[Any], prompts: list[str]) -> str:
    """An lm-eval task over ``prompts`` with each sample's options as choices; its name."""
    import yaml

    docs = work / "task" / "bbq_docs.jsonl"
    docs.parent.mkdir(parents=True, exist_ok=True)
    with docs.open("w", encoding="utf-8") as handle:
        for sample, prompt in zip(samples, prompts, strict=True):
            p = sample.provenance
            handle.write(
                json.dumps(
                    {"id": sample.id, "query": prompt, "choices": list(p["answers"]), "target": p["correct"]}
                )
                + "\n"
            )
    from nlibias.integrations.lm_eval import choice_task

    config = choice_task("nlibias_bbq_race", docs, {"version": 1.0})
    (work / "task" / "bbq.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return str(config["task"])


def lm_eval_tokens(
    tokenizer: Any, prompts: list[str], options: list[list[str]], batch_size: int
) -> tuple[int, int, list[int]]:
    """``(real, padded, lengths)`` of lm-eval's forward passes: one sequence per (prompt, option),
    sorted longest first, in batches of ``batch_size`` padded to their longest."""
    lengths = sorted(
        (
            len(tokenizer(p + o, add_special_tokens=False)["input_ids"])
            for p, opts in zip(prompts, options, strict=True)
            for o in opts
        ),
        reverse=True,
    )
    padded = sum(
        max(lengths[i : i + batch_size]) * len(lengths[i : i + batch_size])
        for i in range(0, len(lengths), batch_size)
    )
    return sum(lengths), padded, lengths


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=8, help="lm-eval's --batch_size")
    args = parser.parse_args()

    from nlibias.catalog.registry import get_benchmark
    from nlibias.integrations.offline import model_dir
    from nlibias.io.samples import write_samples
    from nlibias.jobs.results import load_run
    from nlibias.models.generative.backend import build_backend
    from nlibias.models.generative.hf_causal import HFCausalLM
    from nlibias.models.generative.prompts import CHOICE_STYLES

    work = Path(tempfile.mkdtemp(prefix="nlibias-bbq-lm-eval-"))
    every = get_benchmark("bbq").expand_source(None).samples
    samples = list(every[:: max(1, len(every) // args.questions)][: args.questions])
    write_samples(work / "run", samples)
    smollm2 = build_backend("smollm2", device="cpu")
    assert isinstance(smollm2, HFCausalLM)  # the embedded model is a local causal LM
    race = CHOICE_STYLES["race"]
    prompts = [
        smollm2.format_prompt(race.render(s.premise, s.hypothesis, s.provenance["answers"])) for s in samples
    ]
    task = write_task(work, samples, prompts)
    pretrained = model_dir(smollm2)
    print(f"{len(samples)} questions, 3 options each; work dir {work}")

    nlibias_cmd = [str(BIN / "nlibias"), "audit", "--samples", str(work / "run"), "--generative", "smollm2",
                   "--prompt", "race", "--no-cache", "--bootstrap", "0", "--device", "cpu", "--quiet"]  # fmt: skip
    lm_eval_cmd = [str(BIN / "lm_eval"), "--include_path", str(work / "task"), "--tasks", task,
                   "--model", "hf", "--model_args", f"pretrained={pretrained},add_bos_token=False",
                   "--device", "cpu", "--batch_size", str(args.batch_size), "--log_samples"]  # fmt: skip
    runs: dict[str, list[dict[str, float]]] = {"nlibias": [], "lm-eval": []}
    for round_ in range(args.rounds):
        for tool in ["nlibias", "lm-eval"] if round_ % 2 == 0 else ["lm-eval", "nlibias"]:
            out = work / f"{tool}-{round_}"
            command = (
                [*nlibias_cmd, "--out", str(out)]
                if tool == "nlibias"
                else [*lm_eval_cmd, "--output_path", str(out)]
            )
            runs[tool].append(timed_process(command, work / f"{tool}-{round_}.log"))
            print(
                f"round {round_ + 1} {tool:8s} {runs[tool][-1]['seconds']:7.1f} s  {runs[tool][-1]['peak_gb']:.2f} GB"
            )

    ours = {p.sample_id: p.extra for p in load_run(work / "nlibias-0").predictions}
    [log] = glob.glob(str(work / "lm-eval-0" / "*" / f"samples_{task}_*.jsonl"))
    theirs = {}
    for line in Path(log).read_text().splitlines():
        record = json.loads(line)
        theirs[record["doc"]["id"]] = [float(r[0]) for r in record["filtered_resps"]]
    same = sum(ours[i]["choice"] == max(range(3), key=theirs[i].__getitem__) for i in ours)
    largest = max(
        abs(a - b) for i in ours for a, b in zip(ours[i]["option_logprobs"], theirs[i], strict=True)
    )

    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(pretrained)
    model = AutoModelForCausalLM.from_pretrained(pretrained)
    metrics = json.loads((work / "nlibias-0" / "metrics.json").read_text())
    [stats] = [m["stats"] for m in metrics["run"]["models"].values()]
    options = [list(s.provenance["answers"]) for s in samples]
    lm_real, lm_padded, lm_lengths = lm_eval_tokens(tokenizer, prompts, options, args.batch_size)
    prompt_lengths = [len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prompts]
    option_rows = stats["real_tokens"] - sum(prompt_lengths)  # the options' positions
    flops_ours = forward_flops(
        model, stats["padded_tokens"], prompt_lengths, head_rows=len(prompts) + option_rows
    )
    flops_theirs = forward_flops(model, lm_padded, lm_lengths, head_rows=lm_padded)
    t_ours = statistics.median(r["seconds"] for r in runs["nlibias"])
    t_theirs = statistics.median(r["seconds"] for r in runs["lm-eval"])
    print()
    print(
        f"time (median of {args.rounds}, whole process): nlibias {t_ours:.1f} s, lm-eval {t_theirs:.1f} s -> {t_theirs / t_ours:.2f}x"
    )
    print(
        f"same choice on {same}/{len(ours)} questions; largest |option log-likelihood difference| {largest:.2e}"
    )
    print(f"tokens through the model: nlibias {stats['real_tokens']} real / {stats['padded_tokens']} padded "
          f"(each prompt once); lm-eval {lm_real} real / {lm_padded} padded (batch {args.batch_size})")  # fmt: skip
    print(f"FLOP bound: lm-eval {flops_theirs / 1e12:.3f} TFLOP vs nlibias {flops_ours / 1e12:.3f} TFLOP "
          f"-> at most {flops_theirs / flops_ours:.2f}x from token counts; measured {t_theirs / t_ours:.2f}x")  # fmt: skip
    load = os.getloadavg()
    path = write_results(
        "bbq_lm_eval",
        {
            "machine": machine_info(), "load_average": load, "questions": len(samples), "rounds": runs,
            "time_ratio": t_theirs / t_ours, "same_choices": same, "largest_logprob_difference": largest,
            "nlibias_tokens": {"real": stats["real_tokens"], "padded": stats["padded_tokens"]},
            "lm_eval_tokens": {"real": lm_real, "padded": lm_padded, "batch_size": args.batch_size},
            "flops": {"nlibias": flops_ours, "lm_eval": flops_theirs, "ratio": flops_theirs / flops_ours},
        },
    )  # fmt: skip
    print(f"load average {load[0]:.1f}; wrote {path}")


if __name__ == "__main__":
    main()
