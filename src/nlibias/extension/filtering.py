"""Adversarial filtering: keep the candidates the filter ensemble finds hard (a gold ``neutral``
mispredicted, as :class:`~.config_rules.FilterPolicy` counts), docs/design.md, "Data flow"."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from nlibias.extension.config import FilterConfig, FilterModelConfig
from nlibias.extension.config_rules import FilterPolicy, ensemble_refusal, parse_policy
from nlibias.models.base import NLIClassifier
from nlibias.models.registry import create_classifier, split_spec
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.classifier import predict_pairs
from nlibias.schema import LABELS, Sample


@dataclass(frozen=True)
class FilterRun:
    """Every candidate with the filter predictions in its provenance, and the kept ones."""

    candidates: list[Sample]
    kept: list[Sample]
    models: list[str]
    policy: FilterPolicy
    model_stats: dict[str, dict[str, Any]]
    seconds: float


def filter_candidates(
    candidates: Sequence[Sample],
    classifiers: Sequence[NLIClassifier],
    cache: PredictionCache | None,
    *,
    policy: FilterPolicy | str | int | Mapping[str, Any] = "any",
    holdout: Sequence[str] = (),
    progress: bool = True,
) -> FilterRun:
    """Classify every candidate with each filter model and keep those the policy accepts (provenance
    gains ``filter``, ``mispredicted_by`` and ``kept``)."""
    started = time.perf_counter()
    rule = parse_policy(policy)
    names = [c.name for c in classifiers]
    refusal = ensemble_refusal(names, rule, holdout=set(holdout))
    if refusal is not None:
        raise refusal
    pairs = [(c.premise, c.hypothesis) for c in candidates]
    labels: dict[str, list[str]] = {}
    probs: dict[str, np.ndarray] = {}
    model_stats: dict[str, dict[str, Any]] = {}
    for classifier in classifiers:
        run = predict_pairs(classifier, pairs, cache, progress=progress)
        probs[classifier.name] = run.probs
        labels[classifier.name] = [LABELS[int(i)] for i in run.probs.argmax(axis=1)] if len(pairs) else []
        model_stats[classifier.name] = {
            "unique_pairs": run.unique_pairs,
            "cached": run.cached_pairs,
            "computed": run.computed_pairs,
            "seconds": round(run.seconds, 3),
            "mispredicted": sum(1 for label in labels[classifier.name] if label != "neutral"),
            "identity": dict(classifier.identity()),
        }
    annotated: list[Sample] = []
    kept: list[Sample] = []
    for i, candidate in enumerate(candidates):
        record = {
            name: {
                "label": labels[name][i],
                "probs": {label: round(float(p), 6) for label, p in zip(LABELS, probs[name][i], strict=True)},
            }
            for name in names
        }
        wrong = sum(1 for name in names if labels[name][i] != "neutral")
        keep = rule.keeps(wrong, len(names))
        provenance = {**dict(candidate.provenance), "filter": record, "mispredicted_by": wrong, "kept": keep}
        sample = replace(candidate, provenance=provenance)
        annotated.append(sample)
        if keep:
            kept.append(sample)
    return FilterRun(
        candidates=annotated,
        kept=kept,
        models=names,
        policy=rule,
        model_stats=model_stats,
        seconds=time.perf_counter() - started,
    )


def misprediction_table(candidates: Sequence[Sample], models: Sequence[str]) -> list[dict[str, Any]]:
    """Paper Table 11: candidates each filter model mispredicts, per domain and in all (rows model, domain, count)."""
    domains = sorted({c.domain for c in candidates})
    counts: Counter[tuple[str, str]] = Counter()
    for candidate in candidates:
        record = candidate.provenance.get("filter", {})
        for model in models:
            if record.get(model, {}).get("label", "neutral") != "neutral":
                counts[(model, candidate.domain)] += 1
    rows: list[dict[str, Any]] = []
    for model in models:
        for domain in domains:
            rows.append({"model": model, "domain": domain, "count": counts[(model, domain)]})
        rows.append({"model": model, "domain": "all", "count": sum(counts[(model, d)] for d in domains)})
    return rows


def policy_counts(candidates: Sequence[Sample], models: int) -> dict[str, int]:
    """How many candidates each policy would keep: ``any``, ``all`` and ``at_least:k`` for k = 1..models."""
    wrong = [int(c.provenance.get("mispredicted_by", 0)) for c in candidates]
    policies = [FilterPolicy("any"), FilterPolicy("all")]
    policies += [FilterPolicy("at_least", k) for k in range(1, models + 1)]
    return {policy.describe(): sum(policy.keeps(w, models) for w in wrong) for policy in policies}


def filter_classifier(spec: FilterModelConfig, settings: FilterConfig) -> NLIClassifier:
    """A filter model's classifier, built as an audit's are, with the filter's and its own settings."""
    options = settings.loading()
    if (
        split_spec(spec.model)[0] != "hf"
    ):  # other backends keep their own batch cap (a prompted LM's is smaller)
        del options["max_batch_size"]
    own = spec.model_dump(include={"revision", "label_map", "quantize"})
    return create_classifier(spec.model, name=spec.key, compile=spec.compile or None, **own, **options)
