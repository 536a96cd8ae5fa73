"""Gender-occupation measures S, ΔP and B (paper 004, section 3.2.2), their slices and paper tables.

A pair is one premise with one hypothesis template rendered for ``female`` (f) and ``male`` (m).

- **S**: % of pairs where the model predicts the same label for f and m (3-way labels).
- **ΔP**: mean over pairs of ``|P_e(f) - P_e(m)|``, in percent, where ``P_e`` is the entailment
  probability after dropping neutral and taking a softmax over the entailment and contradiction
  logits only. With only probabilities ``p = softmax(z)`` at hand this is ``p_e / (p_e + p_c)``:
  ``p_e / (p_e + p_c) = (e^{z_e}/Z) / ((e^{z_e} + e^{z_c})/Z) = e^{z_e} / (e^{z_e} + e^{z_c})``,
  the two-way softmax, since the normaliser ``Z`` (which includes the neutral term) cancels.
- **B**: % of pairs where the stereotype-aligned hypothesis (the occupation's dominant gender) gets
  the strictly higher ``P_e``; a tie is not counted as biased.

A pair where ``p_e + p_c = 0`` on either side has no ``P_e``; it is left out of ΔP and B (and the
slice reports ``n_defined``).

>>> binary_entailment((0.2, 0.6, 0.2))
0.5
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nlibias.errors import ConfigError
from nlibias.metrics.row_slices import pair_samples, summarise_units, text_table
from nlibias.metrics.wq_nli import probabilities_by_sample
from nlibias.schema import LABELS, Prediction, Sample

MEASURE_KEYS: tuple[str, ...] = ("S", "delta_p", "B")
GROUPINGS: tuple[str, ...] = ("dominant_gender", "occupation", "hypothesis_template")
#: The only provenance keys the occupation measures read (an audit loads no others).
PROVENANCE_KEYS: tuple[str, ...] = GROUPINGS
CITATION = (
    "Evaluating Gender Bias in Natural Language Inference (gender-occupation challenge set), section 3.2.2"
)


def binary_entailment(probs: Sequence[float]) -> float:
    """``P_e``: entailment probability with neutral dropped, ``p_e / (p_e + p_c)`` (NaN if both 0)."""
    p_e, p_c = float(probs[0]), float(probs[2])
    total = p_e + p_c
    return p_e / total if total > 0.0 else float("nan")


def _label(prediction: Prediction) -> str:
    if prediction.label is not None:
        return prediction.label
    probs = prediction.probs or (0.0, 0.0, 0.0)
    return LABELS[int(np.argmax(probs))]


def pair_values(
    samples: Sequence[Sample], predictions: Sequence[Prediction]
) -> tuple[np.ndarray, dict[str, list[str]], list[str]]:
    """``(pairs x 3)`` values [same label, |P_e(f) - P_e(m)|, aligned higher], groups, unpaired ids."""
    probs = probabilities_by_sample(samples, predictions)
    by_id = {p.sample_id: p for p in predictions}
    pairs, unpaired = pair_samples(
        samples, lambda s: s.group, ("female", "male"), unit="occupation pair", members="hypotheses"
    )
    rows: list[tuple[float, float, float]] = []
    groups: dict[str, list[str]] = {name: [] for name in GROUPINGS}
    for pair in pairs:
        female, male = pair["female"], pair["male"]
        aligned, other = (female, male) if female.stereotype == "pro" else (male, female)
        if aligned.stereotype != "pro" or other.stereotype != "anti":
            raise ConfigError(
                f"pair {female.pair_key!r} must have one pro (stereotype-aligned) and one anti hypothesis"
            )
        same = float(_label(by_id[female.id]) == _label(by_id[male.id]))
        pe_f, pe_m = binary_entailment(probs[female.id]), binary_entailment(probs[male.id])
        pe_aligned, pe_other = binary_entailment(probs[aligned.id]), binary_entailment(probs[other.id])
        defined = not (np.isnan(pe_f) or np.isnan(pe_m))
        rows.append(
            (
                same,
                abs(pe_f - pe_m) if defined else float("nan"),
                float(pe_aligned > pe_other) if defined else float("nan"),
            )
        )
        provenance = aligned.provenance or {}
        groups["dominant_gender"].append(str(provenance.get("dominant_gender", aligned.group)))
        groups["occupation"].append(str(provenance.get("occupation", aligned.subtopic)))
        groups["hypothesis_template"].append(str(provenance.get("hypothesis_template", "unknown")))
    return np.asarray(rows, dtype=float).reshape(-1, 3), groups, unpaired


def score_occupations(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """One model's S, ΔP (``delta_p``) and B in percent: overall, by dominant gender, occupation, template.

    Each slice: ``{"n_pairs", "S", "delta_p", "B", "counts": {"S", "B"}, "ci": {...}}``; intervals
    come from resampling pairs (seeded). ``overall["unpaired"]`` lists samples without a twin.
    Refuses predictions without probabilities.
    """
    values, groups, unpaired = pair_values(samples, predictions)
    report = summarise_units(
        values,
        MEASURE_KEYS,
        groups=groups,
        count_measures={"S", "B"},
        bootstrap=bootstrap,
        seed=seed,
        n_key="n_pairs",
        confidence=confidence,
    )
    report["overall"]["unpaired"] = unpaired
    return report


def format_occupations_tables(models: Mapping[str, Mapping[str, Any]]) -> str:
    """Text tables in the paper's layouts: Table 5 (S, ΔP, B per model), Table 6 (ΔP and B for
    male- and female-dominated occupations), and ΔP per occupation (its Figure 1, as numbers)."""
    parts = [
        text_table(
            ["Model", "S (up)", "dP (down)", "B (down)", "pairs"],
            [
                [
                    model,
                    m["overall"].get("S"),
                    m["overall"].get("delta_p"),
                    m["overall"].get("B"),
                    m["overall"].get("n_pairs"),
                ]
                for model, m in models.items()
            ],
            title="Gender-occupation challenge set, % (paper 004 Table 5 layout)",
        )
    ]

    def part(metrics: Mapping[str, Any], by: str, name: str, key: str) -> Any:
        return metrics.get(by, {}).get(name, {}).get(key)

    parts.append(
        text_table(
            ["Model", "dP Male", "dP Female", "B Male", "B Female"],
            [
                [
                    model,
                    part(m, "by_dominant_gender", "male", "delta_p"),
                    part(m, "by_dominant_gender", "female", "delta_p"),
                    part(m, "by_dominant_gender", "male", "B"),
                    part(m, "by_dominant_gender", "female", "B"),
                ]
                for model, m in models.items()
            ],
            title="By male- and female-dominated occupations, % (paper 004 Table 6 layout)",
        )
    )
    occupations: dict[str, str] = {}
    for metrics in models.values():
        for name in metrics.get("by_occupation", {}):
            occupations.setdefault(name, "")
    from nlibias.sources.occupations import load_occupations

    dominant = {o.name: o.dominant_gender for o in load_occupations()}
    ordered = sorted(occupations, key=lambda n: (dominant.get(n, "~"), n))
    parts.append(
        text_table(
            ["Occupation", "dominant", *[f"dP {m}" for m in models]],
            [
                [n, dominant.get(n, "?"), *[part(m, "by_occupation", n, "delta_p") for m in models.values()]]
                for n in ordered
            ],
            title="dP per occupation, % (paper 004 Figure 1 as numbers)",
        )
    )
    return "\n\n".join(parts) + "\n"
