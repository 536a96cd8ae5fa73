"""Fill stage: each unique masked hypothesis → top-k whole words → candidate samples, through the
prediction cache (each computed batch committed, so a killed run recomputes nothing finished); and
fill models compared on the same masked samples (variants proposed, their variety, how many the
filter keeps, how often a variant changes the meaning of its BBNLI hypothesis: a proxy, a judge NLI
model not finding the variant entailed by the original)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nlibias.benchmarks.bbnli import BBNLISubtopic
from nlibias.extension.config import MLMConfig
from nlibias.extension.filtering import filter_candidates
from nlibias.extension.masked_templates import SOURCE, MaskedSample, load_stopwords, original_hypothesis
from nlibias.models.base import NLIClassifier
from nlibias.models.mlm.causal_fill import CausalLMFiller
from nlibias.models.mlm.mask_filler import MASK, FakeMaskFiller, FillCandidate, MaskFiller, check_fill_batch
from nlibias.models.mlm.server_fill import ServerCausalFiller
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.classifier import predict_pairs
from nlibias.runtime.loop import ComputedBatch, cached_outputs
from nlibias.schema import LABELS, Sample
from nlibias.schema.model_ref import MASKED_LM_KINDS, ModelRef, split_fill_spec


@dataclass(frozen=True)
class FillRun:
    """Candidates (one per masked sample and fill word) and what it took to get them."""

    candidates: list[Sample]
    masked_samples: int
    unique_requests: int
    cached_requests: int
    computed_requests: int
    short_requests: int
    """Requests that got fewer than ``top_k`` acceptable words."""
    duplicates_dropped: int
    """Candidates whose (subtopic, premise, hypothesis) an earlier candidate already had."""
    seconds: float
    fill_model: Mapping[str, Any] = field(default_factory=dict)
    """The filler's name, kind and identity (what the cache keys on)."""

    def stats(self) -> dict[str, Any]:
        return {
            "fill_model": dict(self.fill_model),
            "masked_samples": self.masked_samples,
            "candidates": len(self.candidates),
            "unique_masked_hypotheses": self.unique_requests,
            "cached": self.cached_requests,
            "computed": self.computed_requests,
            "short_lists": self.short_requests,
            "duplicates_dropped": self.duplicates_dropped,
            "seconds": round(self.seconds, 3),
        }


def fill_requests(
    texts: Sequence[str],
    excludes: Sequence[frozenset[str]],
    filler: MaskFiller,
    cache: PredictionCache | None,
    *,
    top_k: int,
    block_list: Sequence[str] = (),
    progress: bool = True,
) -> tuple[list[tuple[FillCandidate, ...]], int]:
    """Candidates for each (text, excluded words) request, in order (through the cache, keyed on the
    filler's identity, ``top_k`` and the block list); also the number computed."""
    blocked = frozenset(w.lower() for w in block_list)
    skips = [frozenset(w.lower() for w in e) | blocked for e in excludes]
    inputs: list[tuple[str, ...]] = [(t, "\n".join(sorted(s))) for t, s in zip(texts, skips, strict=True)]
    skip_of = dict(zip(inputs, skips, strict=True))
    identity = {**dict(filler.identity()), "task": "mask-fill", "top_k": top_k, "block_list": sorted(blocked)}

    def compute(todo: list[tuple[str, ...]]) -> Iterator[ComputedBatch]:
        asked = [text for text, _ in todo]
        for batch in filler.fill_batches(asked, top_k=top_k, exclude=[skip_of[item] for item in todo]):
            check_fill_batch(batch, source=filler.name, texts=len(todo))
            yield ComputedBatch(batch.indices, batch.candidates)

    run = cached_outputs(
        f"fill {filler.name}",
        inputs,
        identity,
        compute,
        cache,
        to_json=lambda cands: [c.to_list() for c in cands],
        from_json=lambda stored: tuple(FillCandidate.from_list(c) for c in stored),
        progress=progress,
        unit="text",
    )
    return [tuple(r) for r in run.outputs], run.computed


_CARRIED = ("template_id", "template_index", "formulation", "premise_index", "combination_index")


def candidate_sample(masked: MaskedSample, candidate: FillCandidate) -> Sample:
    """The candidate sample of one fill word: premise unchanged, the mask replaced by the word."""
    return Sample(
        id=f"{masked.id}:w{candidate.rank:02d}",
        source=SOURCE,
        domain=masked.domain,
        subtopic=masked.subtopic,
        premise=masked.premise,
        hypothesis=masked.hypothesis.replace(MASK, candidate.word),
        gold="neutral",
        stereotype=masked.formulation,
        pair_key=None,
        group=masked.group,
        counterfactual_group=masked.counterfactual_group,
        provenance={
            "masked_id": masked.id,
            **{name: getattr(masked, name) for name in _CARRIED},
            "words": dict(masked.words),
            "masked_hypothesis": masked.hypothesis,
            "masked_template": masked.masked_template,
            "bbnli_template": masked.bbnli_template,
            "fill_word": candidate.word,
            "fill_rank": candidate.rank,
            "lm_score": candidate.log_prob,
            "vocab_rank": candidate.vocab_rank,
        },
    )


def fill_masked_samples(
    masked: Sequence[MaskedSample],
    filler: MaskFiller,
    cache: PredictionCache | None,
    *,
    top_k: int = 20,
    block_list: Sequence[str] = (),
    progress: bool = True,
) -> FillRun:
    """Candidate samples for every masked sample: one per fill word, duplicates dropped."""
    started = time.perf_counter()
    requests: dict[tuple[str, frozenset[str]], int] = {}
    request_of = [requests.setdefault((m.hypothesis, frozenset(m.exclude)), len(requests)) for m in masked]
    unique = list(requests)
    fills, computed = fill_requests(
        [text for text, _ in unique],
        [skip for _, skip in unique],
        filler,
        cache,
        top_k=top_k,
        block_list=block_list,
        progress=progress,
    )
    candidates: list[Sample] = []
    seen: set[tuple[str, str, str]] = set()
    duplicates = 0
    for sample, request in zip(masked, request_of, strict=True):
        for candidate in fills[request]:
            built = candidate_sample(sample, candidate)
            key = (built.subtopic, built.premise, built.hypothesis)
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            candidates.append(built)
    return FillRun(
        candidates=candidates,
        masked_samples=len(masked),
        unique_requests=len(unique),
        cached_requests=len(unique) - computed,
        computed_requests=computed,
        short_requests=sum(1 for f in fills if len(f) < top_k),
        duplicates_dropped=duplicates,
        seconds=time.perf_counter() - started,
        fill_model=describe_filler(filler),
    )


def describe_filler(filler: MaskFiller) -> dict[str, Any]:
    """``{"name", "kind", "identity"}`` of a filler (kind: ``causal``, ``masked`` or ``fake``)."""
    kind = getattr(filler, "fill_kind", None) or ("fake" if isinstance(filler, FakeMaskFiller) else "masked")
    return {"name": filler.name, "kind": kind, "identity": dict(filler.identity())}


def causal_filler_for(settings: MLMConfig) -> MaskFiller | None:
    """The causal-LM filler the fill model names, with ``settings.stopwords``; ``None`` for another."""
    kind, target = split_fill_spec(settings.model)
    if kind != "causal":
        return None
    if ModelRef.unread(target).is_server:
        return ServerCausalFiller(target, stopwords=load_stopwords(settings.stopwords), name=settings.model)
    if settings.revision and ModelRef.named(target).pinned[1] is None:
        ref = ModelRef.parse(target, parameter="fill_model")
        target = str(ModelRef(ref.kind, f"{ref.name}@{settings.revision}", ref.option_items))
    loading = {**settings.loading(), "max_tokens": min(settings.max_tokens, 2048)}
    return CausalLMFiller(
        target, stopwords=load_stopwords(settings.stopwords), name=settings.model, **loading
    )


def masked_target(spec: str) -> str:
    """A masked LM's spec without its ``masked:`` / ``mlm:`` / ``hf:`` prefix.

    >>> masked_target("masked:bert-base-cased"), masked_target("./my-mlm"), masked_target("hf:./my-mlm")
    ('bert-base-cased', './my-mlm', './my-mlm')
    """
    return ModelRef.unread(spec).named_for(MASKED_LM_KINDS)


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
