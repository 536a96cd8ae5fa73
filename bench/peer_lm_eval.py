"""nlibias vs lm-evaluation-harness on the same yes/no log-likelihoods (issue 20).

The same BBNLI prompts (default 200: 100 pro/anti pairs, every subtopic), the same SmolLM2 weights
(the embedded GGUF, dequantised to fp32), the same chat template and the same answer spellings
(10 for SmolLM2) as choices: ``nlibias audit --generative smollm2 --prompt true --no-cache`` vs
``lm_eval`` on the task ``nlibias export lm-eval`` writes. Each tool runs as its own process, as a
user runs it (model loading included), alternating which goes first, ``--rounds`` times each.

Printed: median wall time and peak RSS of each and their ratios; the largest difference between
the two tools' p(yes); the padded tokens each runs through the model (nlibias: from its run
stats; lm-eval: its batches replayed, one forward per prompt as its one-token-continuation cache
gives); the FLOPs those tokens cost (2 x non-embedding parameters x tokens + attention + the LM
head where each computes it) and their ratio, the bound on the speed-up that token counts explain; and the hardware bound: this machine's
measured fp32 matmul ceiling, and the shortest time nlibias' FLOPs could take at it.

    python bench/peer_lm_eval.py --prompts 200 --rounds 3
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import machine_info, matmul_ceiling_tflops, write_results

BIN = Path(sys.executable).parent


def timed_process(command: list[str], log: Path) -> dict[str, float]:
    """Run a command; its wall time (s) and peak resident memory (GB, ``ru_maxrss``)."""
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    with log.open("w") as handle:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{command[0]} failed; see {log}")
    return {"seconds": seconds, "peak_gb": usage.ru_maxrss / 1024**2}


def lm_eval_padded_tokens(tokenizer: Any, prompts: list[str], batch_size: int) -> tuple[int, int]:
    """``(real, padded)`` tokens of lm-eval's forward passes: one per distinct prompt (the choices
    share context + moved newline and differ in one last token, which lm-eval's logits cache
    reads from one pass), sorted longest first, batches of ``batch_size`` padded to their longest."""
    lengths = sorted(
        (len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in set(prompts)), reverse=True
    )
    padded = sum(
        max(lengths[i : i + batch_size]) * len(lengths[i : i + batch_size])
        for i in range(0, len(lengths), batch_size)
    )
    return sum(lengths), padded


def forward_flops(model: Any, tokens: int, lengths: list[int], head_rows: int) -> float:
    """2 x non-embedding parameters x tokens + attention (4 x L^2 x hidden per layer) + the LM
    head (2 x hidden x vocabulary) at ``head_rows`` positions: nlibias computes it at each
    prompt's last position only, lm-eval (full logits) at every position it runs."""
    params = sum(
        p.numel() for name, p in model.named_parameters() if "embed" not in name and "lm_head" not in name
    )
    config = model.config
    attention = config.num_hidden_layers * 4.0 * sum(n * n for n in lengths) * config.hidden_size
    head = 2.0 * config.hidden_size * config.vocab_size * head_rows
    return 2.0 * params * tokens + attention + head


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--prompts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=8, help="lm-eval's --batch_size")
    parser.add_argument("--work", help="work directory of an earlier (stopped) series to resume")
    args = parser.parse_args()

    from nlibias.catalog.registry import get_benchmark
    from nlibias.integrations.lm_eval import export_lm_eval
    from nlibias.io.samples import write_samples
    from nlibias.jobs.demo import sample_pairs_stratified
    from nlibias.jobs.results import load_run
    from nlibias.jobs.score import run_score

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="nlibias-peer-lm-eval-"))
    bias = [s for s in get_benchmark("bbnli").expand_source(None).samples if s.stereotype]
    samples = sample_pairs_stratified(bias, args.prompts // 2, seed=1, min_per_subtopic=1)[: args.prompts]
    if not (work / "task").is_dir():
        write_samples(work / "run", samples)
        export = export_lm_eval(work / "run", work / "task", prompt="true", model="smollm2", device="cpu")
    else:  # resuming: the same samples (same seed), the export already written
        export = export_lm_eval(
            work / "run", work / "task-check", prompt="true", model="smollm2", device="cpu"
        )
    pretrained = export.command.split("pretrained=")[1].split(",")[0]
    n_choices = sum(len(v) for v in export.spellings.values())
    print(f"{len(samples)} prompts, {n_choices} answer spellings as choices; work dir {work}")

    nlibias_cmd = [str(BIN / "nlibias"), "audit", "--samples", str(work / "run"), "--generative", "smollm2",
                   "--prompt", "true", "--no-cache", "--bootstrap", "0", "--device", "cpu", "--quiet"]  # fmt: skip
    lm_eval_cmd = [str(BIN / "lm_eval"), "--include_path", str(work / "task"), "--tasks", export.task,
                   "--model", "hf", "--model_args", f"pretrained={pretrained},add_bos_token=False",
                   "--device", "cpu", "--batch_size", str(args.batch_size), "--log_samples"]  # fmt: skip
    timings = work / "rounds.json"  # each finished run, so that a stopped series resumes
    done: dict[str, dict[str, float]] = json.loads(timings.read_text()) if timings.is_file() else {}
    runs: dict[str, list[dict[str, float]]] = {"nlibias": [], "lm-eval": []}
    for round_ in range(args.rounds):
        order = ["nlibias", "lm-eval"] if round_ % 2 == 0 else ["lm-eval", "nlibias"]
        for tool in order:
            out = work / f"{tool}-{round_}"
            if f"{tool}-{round_}" in done:
                runs[tool].append(done[f"{tool}-{round_}"])
                continue
            command = (
                [*nlibias_cmd, "--out", str(out)]
                if tool == "nlibias"
                else [*lm_eval_cmd, "--output_path", str(out)]
            )
            runs[tool].append(timed_process(command, work / f"{tool}-{round_}.log"))
            done[f"{tool}-{round_}"] = runs[tool][-1]
            timings.write_text(json.dumps(done, indent=1))
            print(
                f"round {round_ + 1} {tool:8s} {runs[tool][-1]['seconds']:7.1f} s  {runs[tool][-1]['peak_gb']:.2f} GB"
            )

    ours = {p.sample_id: p for p in load_run(work / "nlibias-0").predictions}
    [log] = glob.glob(str(work / "lm-eval-0" / "*" / f"samples_{export.task}_*.jsonl"))
    theirs = {p.sample_id: p for p in run_score(work / "run", log, bootstrap=0).predictions}
    largest = max(
        abs(ours[i].extra["answer_probs"]["yes"] - theirs[i].extra["answer_probs"]["yes"]) for i in ours
    )
    same_answers = sum(ours[i].extra["answer"] == theirs[i].extra["answer"] for i in ours)

    from transformers import AutoModelForCausalLM, AutoTokenizer

    from nlibias.models.generative.backend import build_backend
    from nlibias.models.generative.prompts import PROMPT_STYLES

    tokenizer = AutoTokenizer.from_pretrained(pretrained)
    model = AutoModelForCausalLM.from_pretrained(pretrained)

    def model_stats(round_: int) -> dict[str, Any]:
        metrics = json.loads((work / f"nlibias-{round_}" / "metrics.json").read_text())
        [stats] = [m["stats"] for m in metrics["run"]["models"].values()]
        return dict(stats)

    stats = model_stats(0)  # token counts: the same in every round
    smollm2 = build_backend("smollm2", device="cpu")
    # the text both tools read before the answer (the export checked lm-eval's tokens are these)
    prompts = [smollm2.format_prompt(PROMPT_STYLES["true"].render(s.premise, s.hypothesis)) for s in samples]  # type: ignore[attr-defined]
    lm_real, lm_padded = lm_eval_padded_tokens(tokenizer, prompts, args.batch_size)
    lengths = [len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in set(prompts)]
    flops_ours = forward_flops(model, stats["padded_tokens"], lengths, head_rows=len(set(prompts)))
    flops_theirs = forward_flops(model, lm_padded, lengths, head_rows=lm_padded)
    ceiling = matmul_ceiling_tflops(model.config.hidden_size)

    t_ours = statistics.median(r["seconds"] for r in runs["nlibias"])
    t_theirs = statistics.median(r["seconds"] for r in runs["lm-eval"])
    m_ours = statistics.median(r["peak_gb"] for r in runs["nlibias"])
    m_theirs = statistics.median(r["peak_gb"] for r in runs["lm-eval"])
    model_seconds = statistics.median(model_stats(r)["seconds"] for r in range(args.rounds))
    print()
    print(
        f"time (median of {args.rounds}, whole process): nlibias {t_ours:.1f} s, lm-eval {t_theirs:.1f} s -> {t_theirs / t_ours:.2f}x"
    )
    print(
        f"peak memory (median): nlibias {m_ours:.2f} GB, lm-eval {m_theirs:.2f} GB -> {m_theirs / m_ours:.2f}x less"
    )
    print(f"largest |p(yes) difference|: {largest:.2e}; same answer on {same_answers}/{len(ours)} prompts")
    print(f"tokens through the model: nlibias {stats['real_tokens']} real / {stats['padded_tokens']} padded "
          f"(shared prefixes once); lm-eval {lm_real} real / {lm_padded} padded (batch {args.batch_size})")  # fmt: skip
    print(f"FLOP bound: lm-eval {flops_theirs / 1e12:.3f} TFLOP vs nlibias {flops_ours / 1e12:.3f} TFLOP "
          f"-> at most {flops_theirs / flops_ours:.2f}x from token counts")  # fmt: skip
    print(f"hardware bound: fp32 matmul ceiling {ceiling * 1e3:.1f} GFLOP/s -> nlibias' FLOPs take >= "
          f"{flops_ours / (ceiling * 1e12):.1f} s; its model pass took {model_seconds:.1f} s (median) "
          f"({flops_ours / model_seconds / 1e9:.1f} GFLOP/s, {flops_ours / model_seconds / (ceiling * 1e12):.0%} of the ceiling)")  # fmt: skip
    load = os.getloadavg()
    path = write_results(
        "peer_lm_eval",
        {
            "machine": machine_info(),
            "load_average": load,
            "prompts": len(samples),
            "choices": n_choices,
            "rounds": runs,
            "time_ratio": t_theirs / t_ours,
            "memory_ratio": m_theirs / m_ours,
            "largest_p_yes_difference": largest,
            "same_answers": same_answers,
            "nlibias_tokens": {"real": stats["real_tokens"], "padded": stats["padded_tokens"]},
            "lm_eval_tokens": {"real": lm_real, "padded": lm_padded, "batch_size": args.batch_size},
            "flops": {"nlibias": flops_ours, "lm_eval": flops_theirs, "ratio": flops_theirs / flops_ours},
            "matmul_ceiling_gflops": ceiling * 1e3,
            "nlibias_model_seconds": model_seconds,
        },
    )
    print(f"load average {load[0]:.1f}; wrote {path}")


if __name__ == "__main__":
    main()
