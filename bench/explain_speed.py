"""``nlibias explain``'s judge pass: the batched, cached classifier runtime against a loop that calls
the same judge once per sentence pair, with the FLOP bound beside the ratio.

Canned generated answers (a yes/no and a two-to-four-sentence explanation built from each
sample's own premise and hypothesis, four shapes in turn) for a few hundred BBNLI samples are split
as ``explain`` splits them (:mod:`nlibias.explanations.split`: the parser's short answer, pysbd
sentences). Two ways to get every probability the judge needs (premise ⊨ sentence and
hypothesis ⊨ sentence per sentence, explanation ⊨ hypothesis per answer):

* ``explain``: :func:`nlibias.explanations.judge.judge_answers`, what ``nlibias explain`` runs per
  judge (distinct pairs once, length-sorted token-capped batches, a prediction cache: cold, then
  warm as on a rerun);
* ``per-sentence loop``: for each pair in turn, the tokenizer and one forward of the same model
  (batch of one, no cache, no deduplication): what a script without the runtime would do.

The judge is a tiny in-process Hugging Face NLI model (:mod:`nlibias.testing.tiny_models`: BERT
layout, 2 layers, hidden 32, random weights; ``--shape bert-base`` for a full-size random one).
The FLOP bound: 2 x non-embedding parameters x real tokens plus attention
(``_common.encoder_flops``) for the forward passes, at the matmul rate measured on this machine
(``_common.matmul_ceiling_tflops``); the loop's time over the batched run's FLOPs at that rate is
the most any implementation doing those FLOPs could gain over the loop.

    python bench/explain_speed.py                # 300 samples (~1 min on 2 cores)
    python bench/explain_speed.py --samples 60   # smoke run
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

import _common as common
import numpy as np

SHAPES = ("yes-restates", "no-rejects", "yes-because", "no-generalises")


def canned_text(index: int, premise: str, hypothesis: str) -> str:
    """A generated answer of one of four shapes (by ``index``) made of the sample's own texts.

    >>> canned_text(1, "They work.", "Men are nurses.")
    'No. The premise does not say that. They work.'
    """
    shape = SHAPES[index % len(SHAPES)]
    premise = premise.strip().rstrip(".") + "."
    hypothesis = hypothesis.strip().rstrip(".") + "."
    if shape == "yes-restates":
        return f"Yes. {premise} {hypothesis}"
    if shape == "no-rejects":
        return f"No. The premise does not say that. {premise}"
    if shape == "yes-because":
        return f"Yes, because {premise[0].lower()}{premise[1:]} So {hypothesis[0].lower()}{hypothesis[1:]}"
    return f"No. {hypothesis} That is a generalisation. Nothing in the text supports it. People differ."


def canned_answers(count: int) -> list[Any]:
    """``count`` BBNLI samples (evenly spaced over the set) with canned answers, split as explain does."""
    from nlibias.explanations.judge import GeneratedAnswer
    from nlibias.explanations.split import split_answer, split_sentences

    samples = common.bbnli_samples()
    chosen = samples[:: common.evenly_spaced_step(len(samples), count)][:count]
    answers = []
    for index, sample in enumerate(chosen):
        text = canned_text(index, sample.premise, sample.hypothesis)
        split = split_answer(text)
        answers.append(
            GeneratedAnswer(
                id=sample.id, model="canned", prompt="true", text=text, answer=split.answer,
                answer_rule=split.rule, explanation=split.explanation,
                sentences=tuple(split_sentences(split.explanation)), premise=sample.premise,
                hypothesis=sample.hypothesis, stereotype=sample.stereotype, pair_key=sample.pair_key,
                domain=sample.domain, subtopic=sample.subtopic,
            )
        )  # fmt: skip
    return answers


def per_sentence_loop(clf: Any, pairs: list[tuple[str, str]]) -> np.ndarray:
    """One tokenizer call and one forward per pair (batch of one), probabilities in the
    entailment / neutral / contradiction order."""
    import torch

    id2label = {int(k): str(v).lower() for k, v in clf.model.config.id2label.items()}
    order = [
        next(i for i, name in id2label.items() if name == want)
        for want in ("entailment", "neutral", "contradiction")
    ]
    out = np.zeros((len(pairs), 3))
    with torch.inference_mode():
        for at, (premise, hypothesis) in enumerate(pairs):
            enc = clf.tokenizer(premise, hypothesis, return_tensors="pt", truncation=True, max_length=512)
            logits = clf.model(**{k: v.to(clf.device) for k, v in enc.items()}).logits[0]
            out[at] = logits.softmax(-1)[order].float().cpu().numpy()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=300, help="BBNLI samples with canned answers")
    parser.add_argument("--shape", choices=["tiny", *sorted(common.SHAPES)], default="tiny")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: CPU cores)")
    parser.add_argument("--device", default=None)
    args = parser.parse_args()

    threads = common.set_threads(args.threads)
    from nlibias.explanations.judge import judge_answers, judge_pairs
    from nlibias.models.nli.hf import HFNLIClassifier
    from nlibias.runtime.cache import PredictionCache

    load_before = os.getloadavg()
    answers = canned_answers(args.samples)
    pairs = judge_pairs(answers)
    work = Path(tempfile.mkdtemp(prefix="nlibias-explain-bench-"))
    model_dir = work / f"{args.shape}-nli"
    if args.shape == "tiny":
        from nlibias.testing.tiny_models import build_tiny_nli_classifier

        build_tiny_nli_classifier(model_dir, common.bbnli_texts())
    else:
        common.build_model(model_dir, "nli", args.shape)
    clf = HFNLIClassifier(model_dir, device=args.device, name="judge")
    meter = common.ForwardMeter(clf.model)
    cache = PredictionCache(work / "cache.sqlite")

    cold = common.measure(
        "explain (cold cache)", len(pairs), lambda: judge_answers(answers, clf, cache, progress=False), meter
    )
    warm = common.measure(
        "explain (warm cache)", len(pairs), lambda: judge_answers(answers, clf, cache, progress=False), meter
    )
    loop = common.measure("per-sentence loop", len(pairs), lambda: per_sentence_loop(clf, pairs), meter)
    rows = [cold, warm, loop]
    unique = list(dict.fromkeys(pairs))
    for row in rows:
        row["speedup_over_loop"] = round(loop["seconds"] / row["seconds"], 2)

    # The same probabilities both ways (the loop's, in judge_answers' pair order)
    batched = _row_probs(cold["_output"].rows, answers)
    max_diff = float(np.abs(batched - loop["_output"]).max())

    flops_loop = common.encoder_flops(clf.model, clf.encode(pairs)[2])
    flops_batched = common.encoder_flops(clf.model, clf.encode(unique)[2])
    dtype = str(next(clf.model.parameters()).dtype).removeprefix("torch.")
    ceiling = common.matmul_ceiling_tflops(clf.model.config.hidden_size, str(clf.device), dtype) * 1e12
    bound = {
        "non_embedding_params": flops_loop["non_embedding_params"],
        "loop_flops": flops_loop["total"],
        "loop_linear_flops": flops_loop["linear"],
        "batched_flops": flops_batched["total"],
        "matmul_ceiling_tflops": round(ceiling / 1e12, 4),
        "batched_tflops": round(flops_batched["total"] / cold["seconds"] / 1e12, 6),
        "loop_tflops": round(flops_loop["total"] / loop["seconds"] / 1e12, 6),
        # the loop's time against the batched run's FLOPs at the measured matmul rate
        "max_possible_speedup_over_loop": round(loop["seconds"] / (flops_batched["total"] / ceiling), 1),
    }
    machine = common.machine_info()
    machine["loadavg_before"] = [round(x, 2) for x in load_before]
    machine["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    print(f"load average before/after: {machine['loadavg_before']} / {machine['loadavg_after']}")
    print(
        f"{len(answers)} canned answers, {sum(len(a.sentences) for a in answers)} sentences, {len(pairs)} judge "
        f"pairs ({len(unique)} distinct); judge: {args.shape} NLI model ({flops_loop['non_embedding_params']:.0f} "
        f"non-embedding parameters), {clf.device}, torch threads={threads}"
    )
    common.print_table(
        rows,
        [
            "method",
            "items",
            "seconds",
            "items_per_s",
            "forward_calls",
            "padding_efficiency",
            "speedup_over_loop",
        ],
    )
    print(f"max |probability difference| batched vs loop: {max_diff:.2e}")
    print(
        f"ratio: explain (cold) is {cold['speedup_over_loop']}x the per-sentence loop; FLOP bound: the forward "
        f"passes are {flops_batched['total'] / 1e9:.3f} GFLOP (2 x params x tokens {flops_batched['linear'] / 1e9:.3f} "
        f"+ attention), the matmul rate measured here is {bound['matmul_ceiling_tflops']} TFLOP/s, so at most "
        f"{bound['max_possible_speedup_over_loop']}x over the loop; explain runs at {bound['batched_tflops']} TFLOP/s, "
        f"the loop at {bound['loop_tflops']} TFLOP/s"
    )
    path = common.write_results(
        "explain_speed" + ("" if args.shape == "tiny" else f"_{args.shape}"),
        {
            "machine": machine,
            "judge": f"{args.shape} NLI model (random weights)",
            "answers": len(answers),
            "pairs": len(pairs),
            "distinct_pairs": len(unique),
            "rows": rows,
            "max_abs_prob_diff": max_diff,
            "flop_bound": bound,
        },
    )
    print(f"wrote {path}")


def _row_probs(rows: list[dict[str, Any]], answers: list[Any]) -> np.ndarray:
    """The probabilities of ``judge_answers``' rows in :func:`judge_pairs` order."""
    order = ("entailment", "neutral", "contradiction")
    out = []
    for row, item in zip(rows, answers, strict=True):
        for sentence in row["sentences"]:
            out += [[sentence["premise"][k] for k in order], [sentence["hypothesis"][k] for k in order]]
        if item.sentences:
            out.append([row["stance_probs"][k] for k in order])
    return np.asarray(out)


if __name__ == "__main__":
    main()
