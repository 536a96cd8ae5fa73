"""Fill models compared on the same masked samples: variants proposed, their variety, how many the
filter keeps, and how often a variant changes the meaning of its BBNLI hypothesis (a proxy: a judge
NLI model does not find the variant entailed by the original)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nlibias.benchmarks.bbnli import BBNLISubtopic
from nlibias.extension.fill import describe_filler, fill_masked_samples
from nlibias.extension.filtering import filter_candidates
from nlibias.extension.masked_samples import MaskedSample, original_hypothesis
from nlibias.models.base import NLIClassifier
from nlibias.models.mlm.mask_filler import MaskFiller
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.classifier import predict_pairs
from nlibias.schema import LABELS, Sample


def fill_statistics(candidates: Sequence[Sample]) -> dict[str, Any]:
    """Candidates, distinct fill words per masked template (averaged over templates) and in all."""
    pairs = {(str(c.provenance["template_id"]), str(c.provenance["fill_word"]).lower()) for c in candidates}
    templates = {template for template, _ in pairs}
    return {
        "candidates": len(candidates),
        "templates": len(templates),
        "variants_per_template": round(len(pairs) / max(1, len(templates)), 2),
        "distinct_words": len({word for _, word in pairs}),
    }


def meaning_changed_share(
    candidates: Sequence[Sample],
    subtopics: Mapping[str, BBNLISubtopic],
    judge: NLIClassifier,
    cache: PredictionCache | None,
    *,
    progress: bool = False,
) -> float:
    """Share of candidates whose original BBNLI hypothesis does not entail them (judge's argmax)."""
    if not candidates:
        return 0.0
    pairs = [(original_hypothesis(c, subtopics[c.subtopic]), c.hypothesis) for c in candidates]
    probs = predict_pairs(judge, pairs, cache, progress=progress).probs
    entailed = LABELS.index("entailment")
    return float((probs.argmax(axis=1) != entailed).mean())


def compare_fills(
    masked: Sequence[MaskedSample],
    fillers: Mapping[str, MaskFiller],
    subtopics: Sequence[BBNLISubtopic],
    *,
    judge: NLIClassifier | None,
    filters: Sequence[NLIClassifier],
    cache: PredictionCache | None,
    top_k: int = 5,
    block_list: Sequence[str] = (),
    policy: str | int | Mapping[str, int] = "any",
    progress: bool = False,
) -> list[dict[str, Any]]:
    """One row per fill model (all fills, judge and filters through the prediction cache)."""
    by_id = {s.subtopic: s for s in subtopics}
    rows: list[dict[str, Any]] = []
    for label, filler in fillers.items():
        run = fill_masked_samples(
            masked, filler, cache, top_k=top_k, block_list=block_list, progress=progress
        )
        described = describe_filler(filler)
        row: dict[str, Any] = {
            "fill_model": label,
            "kind": described["kind"],
            "identity": described["identity"],
            **fill_statistics(run.candidates),
            "short_lists": run.short_requests,
            "fill_seconds": round(run.seconds, 2),
        }
        if judge is not None:
            row["meaning_changed"] = meaning_changed_share(
                run.candidates, by_id, judge, cache, progress=progress
            )
        if filters:
            kept = filter_candidates(run.candidates, filters, cache, policy=policy, progress=progress)
            row["keep_rate"] = len(kept.kept) / max(1, len(kept.candidates))
        rows.append(row)
    return rows
