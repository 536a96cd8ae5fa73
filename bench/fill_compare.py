"""Masked-LM fill vs causal-LM fill on the same masked templates (issue #28, item 4).

Same masked samples (the curated templates of two subtopics, pro and anti renderings), same top-k,
same filter and judge; one row per fill model: candidates, distinct fill words per masked template
(averaged), distinct words in all, the share of variants that change the meaning of their BBNLI
hypothesis (proxy: the judge, given the original hypothesis as premise, does not predict
entailment for the variant: :mod:`nlibias.extension.fill_compare`), and the share the filter keeps
(policy any). Everything goes through the prediction cache, so rerunning after an
``nlibias extend --fill-model smollm2 --filter-model prompt:smollm2`` run with the same cache
reuses its fills and filter predictions.

Fill models: the embedded SmolLM2 as a causal fill (built exactly as ``nlibias extend`` builds it),
and, since no pretrained masked LM is available offline here, a tiny in-process masked LM with
random weights (``nlibias.testing.build_tiny_masked_lm``): its words are arbitrary vocabulary
entries, so its row shows what the machinery measures, not what a real masked LM would give.
Pass ``--mlm NAME`` to compare a real masked LM from the local Hugging Face cache instead.

    python bench/fill_compare.py --cache /tmp/h6/e2e-cache.sqlite
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import _common as common

SUBTOPICS = ("jewish_woman_is_to_kids", "Muslim_man_to_many_wives")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--mlm", default=None, help="a real masked LM (hub id in the local cache, or a path)")
    parser.add_argument("--judge", default="prompt:smollm2")
    parser.add_argument("--filter-model", default="prompt:smollm2")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--limit", type=int, default=None, help="evenly spaced masked samples (default: all)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    common.set_threads(args.threads)

    from nlibias.benchmarks.bbnli import load_bbnli_dir
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data
    from nlibias.extension.card import fill_comparison_section
    from nlibias.extension.config import MLMConfig
    from nlibias.extension.fill import causal_filler_for, compare_fills
    from nlibias.extension.masked_templates import expand_masked_templates, load_masked_templates
    from nlibias.models.mlm.hf import HFMaskedLMFiller
    from nlibias.models.registry import create_classifier
    from nlibias.runtime.cache import PredictionCache, default_cache_path

    everything = load_bbnli_dir(resolve_data(BBNLI_DATA))
    chosen = [s for s in everything if s.subtopic in SUBTOPICS]
    masked = expand_masked_templates(load_masked_templates(None, everything), chosen)
    if args.limit:
        masked = masked[:: common.evenly_spaced_step(len(masked), args.limit)][: args.limit]
    if args.mlm:
        mlm_path, mlm_label = args.mlm, args.mlm
    else:
        from nlibias.testing import bbnli_texts, build_tiny_masked_lm

        mlm_path = str(build_tiny_masked_lm(Path(tempfile.mkdtemp()) / "tiny-mlm", bbnli_texts()))
        mlm_label = "tiny-mlm (random weights)"
    causal = causal_filler_for(MLMConfig(model="smollm2", device="cpu"))
    assert causal is not None
    fillers = {mlm_label: HFMaskedLMFiller(mlm_path, device="cpu", name=mlm_label), "smollm2": causal}
    judge = create_classifier(args.judge)
    filters = [create_classifier(args.filter_model)]
    cache = PredictionCache(args.cache or default_cache_path())
    with common.stopwatch() as t:
        rows = compare_fills(
            masked, fillers, chosen, judge=judge, filters=filters, cache=cache, top_k=args.top_k
        )
    cache.close()
    print(
        f"{len(masked)} masked samples ({len({m.hypothesis for m in masked})} unique masked hypotheses) of "
        f"{', '.join(SUBTOPICS)}; top-{args.top_k}; judge {args.judge}; filter {args.filter_model}, policy any\n"
    )
    comparison = {
        "rows": rows,
        "judge": args.judge,
        "filters": [args.filter_model],
        "top_k": args.top_k,
        "masked_samples": len(masked),
    }
    print("\n".join(fill_comparison_section(comparison)))  # the section a run's card shows
    print(f"\n({t['seconds']:.1f} s with the cache {args.cache or default_cache_path()})")
    print(
        f"results: {common.write_results('fill_compare', {'machine': common.machine_info(), 'rows': rows})}"
    )


if __name__ == "__main__":
    main()
