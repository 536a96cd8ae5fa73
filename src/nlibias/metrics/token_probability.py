"""Token-probability (TP) bias measures (CrowS-Pairs, WinoQueer; paper 003) and their agreement with NLI."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from nlibias.errors import DataError
from nlibias.metrics.agreement import cohen_kappa
from nlibias.metrics.bbnli_scorer import rows_by_sample
from nlibias.metrics.meta import TOKEN_PROBABILITY_MEASURES
from nlibias.metrics.metric_frame import units_frame
from nlibias.metrics.pairing import ANTI, pair_rows
from nlibias.schema import Prediction, Sample
from nlibias.schema.columns import NO_CODE, Categorical, SampleColumns
from nlibias.schema.outputs import ModelOutputs

TP_MEASURES: tuple[str, ...] = tuple(TOKEN_PROBABILITY_MEASURES)
TP_GROUPINGS: tuple[str, ...] = ("identity_group", "predicate_category")  # WQ-NLI's M1 slices


def preferences(more: Sequence[float], less: Sequence[float]) -> list[int]:
    """Per pair: 1 when the more-stereotypical sentence is preferred, -1 for the other, 0 for a tie
    (scores equal to 3 decimals)."""
    out = []
    for a, b in zip(more, less, strict=True):
        ra, rb = round(float(a), 3), round(float(b), 3)
        out.append(1 if ra > rb else (-1 if ra < rb else 0))
    return out


def tp_unit_values(more: Sequence[float], less: Sequence[float], *, direction: Sequence[str]) -> np.ndarray:
    """``(pairs x 6)``: each pair's contribution to :data:`TP_MEASURES` (NaN: not applicable;
    ``likelihood_diff`` as |diff| / 100, the frame reporting 100 x means)."""
    prefer = np.array(preferences(more, less), dtype=float)
    tie = prefer == 0
    stereo = np.array([d != "antistereo" for d in direction], dtype=bool)
    preferred = (prefer > 0).astype(float)
    values = np.full((len(prefer), len(TP_MEASURES)), np.nan)
    values[:, 0] = preferred
    values[:, 1] = tie.astype(float)
    values[stereo & ~tie, 2] = preferred[stereo & ~tie]
    values[~stereo & ~tie, 3] = preferred[~stereo & ~tie]
    values[:, 4] = np.abs(np.asarray(more, dtype=float) - np.asarray(less, dtype=float)) / 100.0
    values[:, 5] = preferred + 0.5 * tie
    return values


def tp_measures(
    more: Sequence[float],
    less: Sequence[float],
    *,
    direction: Sequence[str],
    groups: Mapping[str, Sequence[Any]],
    bootstrap: int,
    seed: int,
) -> dict[str, Any]:
    """:data:`TP_MEASURES` overall and per group (``groups``: grouping name → one label per pair)."""
    values = tp_unit_values(more, less, direction=direction)
    out = units_frame(
        values, TP_MEASURES, groups=groups, count_measures={"tp_bias_score", "ties"},
        bootstrap=bootstrap, seed=seed, n_key="n_pairs",
    ).to_dict()  # fmt: skip
    for part in [out["overall"], *(s for key, v in out.items() if key.startswith("by_") for s in v.values())]:
        n_stereo = part.get("n_defined", {}).get("stereo_score")
        part["n_stereo"], part["n_antistereo"] = n_stereo, part.get("n_defined", {}).get("antistereo_score")
    return out


def _aligned_rows(
    samples: Sequence[Sample], predictions: Sequence[Prediction], *, kind: str
) -> list[Prediction | None]:
    """One model's row per sample (None: no row); rows of another ``kind`` are refused."""
    by_id = rows_by_sample(predictions)
    for prediction in by_id.values():
        if prediction.kind != kind:
            raise _not_sentence_scores(prediction.model, prediction.kind, prediction.sample_id)
    return [by_id.get(sample.id) for sample in samples]


def _not_sentence_scores(model: str, kind: str, sample_id: str | None = None) -> DataError:
    return DataError(
        f"{model or 'the model'}: token-probability measures need sentence scores (score_more, "
        f"score_less) of a sentence-logprob model, got {kind} outputs",
        sample=sample_id,
        model=model or None,
        field="kind",
    )


def _labels(column: Categorical, rows: np.ndarray, text: Callable[[Any], Any]) -> Categorical:
    """The labels of ``column`` at ``rows``, each value ``text(value)``."""
    return Categorical(column.codes[rows], tuple(text(v) for v in column.values))


def _tp_groups(columns: SampleColumns, rows: np.ndarray) -> dict[str, Categorical]:
    """The slicings of the scored pairs at ``rows``, less those that slice as one before them."""
    candidates = {"domain": _labels(columns.domain, rows, lambda v: v)}
    for key in TP_GROUPINGS:  # named as the same slices of M1 where the samples have them
        column = columns.provenance.get(key)
        if column is not None and all(column.values[c] is not None for c in np.unique(column.codes[rows])):
            candidates[key] = _labels(column, rows, str)
    candidates["group"] = _labels(columns.group, rows, lambda v: v or "")
    candidates["subtopic"] = _labels(columns.subtopic, rows, lambda v: v)
    groups: dict[str, Categorical] = {}
    kept: list[list[Any]] = []
    for name, labels in candidates.items():
        values = labels.tolist()
        if not any(values == earlier for earlier in kept):
            groups[name] = labels
            kept.append(values)
    return groups


def scored_pairs(
    columns: SampleColumns, outputs: ModelOutputs
) -> tuple[np.ndarray, list[float], list[float], list[str]]:
    """The positions of the scored pairs (``score_more`` given), their two scores and directions."""
    nan = np.full(len(columns), np.nan)
    more, less = outputs.values.get("score_more", nan), outputs.values.get("score_less", nan)
    rows = np.flatnonzero(np.isfinite(more))
    direction = np.where(columns.stereotype[rows] == ANTI, "antistereo", "stereo").tolist()
    return rows, more[rows].tolist(), less[rows].tolist(), direction


def score_token_probability_columns(
    columns: SampleColumns, outputs: ModelOutputs, *, model: str = "", bootstrap: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """One sentence scorer's TP measures from its ``score_more`` / ``score_less`` (NaN: no pair)."""
    if len(outputs) != len(columns):
        raise ValueError(f"{len(outputs)} outputs for {len(columns)} samples; pass one per sample")
    if outputs.kind != "sentence-logprob":
        raise _not_sentence_scores(model, outputs.kind)
    rows, more, less, direction = scored_pairs(columns, outputs)
    if not len(rows):
        raise DataError(
            f"{model or 'the model'} scored no sentence pair: the samples stand for no sentence pairs",
            model=model or None,
            field="score_more",
        )
    groups = _tp_groups(columns, rows)
    out = tp_measures(more, less, direction=direction, groups=groups, bootstrap=bootstrap, seed=seed)
    nan = np.full(len(columns), np.nan)
    tokens = [outputs.values.get(f"tokens_{side}", nan)[rows] for side in ("more", "less")]
    shared = np.logical_and.reduce([np.isfinite(t) & (t != 0) for t in tokens])
    out["overall"]["no_shared_tokens"] = int((~shared).sum())
    # a pair is scored on one sample; its partner (the same pair_key) is not without a pair
    partnered = np.isin(columns.pair_code, np.setdiff1d(columns.pair_code[rows], [NO_CODE]))
    partnered[rows] = True
    out["overall"]["samples_without_pair"] = int((~partnered).sum())
    return out


def score_token_probability(
    samples: Sequence[Sample], predictions: Sequence[Prediction], *, bootstrap: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """:func:`score_token_probability_columns` over sample objects and one model's rows."""
    rows = _aligned_rows(samples, predictions, kind="sentence-logprob")
    columns = SampleColumns.from_samples(samples, provenance_keys=TP_GROUPINGS)
    outputs = ModelOutputs.of_predictions(rows, "sentence-logprob")
    model = predictions[0].model if predictions else ""
    return score_token_probability_columns(columns, outputs, model=model, bootstrap=bootstrap, seed=seed)


def r_and_r2(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """Pearson r, R² and n between two scores across models (None below three points or for a constant).

    >>> r_and_r2([1, 2, 3], [2, 4, 6.5])["r2"] == round(60.75 / 61, 12) or None
    True
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) != len(b):
        raise ValueError("x and y must have the same length")
    out: dict[str, Any] = {"r": None, "r2": None, "n": len(a)}
    if len(a) < 3:
        return out
    da, db = a - a.mean(), b - b.mean()
    ssa, ssb = float(da @ da), float(db @ db)
    if ssa == 0.0 or ssb == 0.0:
        return out
    r = float(da @ db) / float(np.sqrt(ssa * ssb))
    out["r"], out["r2"] = r, round(r * r, 12)
    return out


def item_agreement(tp_preference: Sequence[int], m1: Sequence[bool]) -> dict[str, Any]:
    """How often TP preference (ties: not preferred) and M1 agree on the same WinoQueer-NLI items.

    >>> item_agreement([1, 1, 0, -1], [True, False, False, True])
    {'n': 4, 'agreement': 50.0, 'both': 1, 'tp_only': 1, 'm1_only': 1, 'neither': 1, 'kappa': 0.0}
    """
    tp = np.asarray(tp_preference) > 0
    nli = np.asarray(m1, dtype=bool)
    if len(tp) != len(nli):
        raise ValueError("tp_preference and m1 must have one entry per item")
    n = len(tp)
    both, tp_only = int((tp & nli).sum()), int((tp & ~nli).sum())
    m1_only, neither = int((~tp & nli).sum()), int((~tp & ~nli).sum())
    kappa = cohen_kappa(tp.tolist(), nli.tolist())
    return {
        "n": n,
        "agreement": 100.0 * (both + neither) / n if n else None,
        "both": both, "tp_only": tp_only, "m1_only": m1_only, "neither": neither,
        "kappa": None if kappa is None else round(kappa, 12),
    }  # fmt: skip


def wq_nli_item_agreement(columns: SampleColumns, tp: ModelOutputs, nli: ModelOutputs) -> dict[str, Any]:
    """:func:`item_agreement` of a sentence scorer and an NLI classifier on the rows both scored."""
    for name, outputs in (("tp", tp), ("nli", nli)):
        if len(outputs) != len(columns):
            raise ValueError(
                f"{name} has {len(outputs)} outputs for {len(columns)} samples; pass one per sample"
            )
    paired = pair_rows(columns)
    pro, anti = paired.first, paired.second
    nan = np.full(len(columns), np.nan)
    more, less = tp.values.get("score_more", nan)[pro], tp.values.get("score_less", nan)[pro]
    stereo, counter = nli.probs[pro], nli.probs[anti]
    both = np.isfinite(more) & np.isfinite(less)
    both &= np.isfinite(stereo).all(axis=1) & np.isfinite(counter).all(axis=1)
    prefer = preferences(more[both].tolist(), less[both].tolist())
    return item_agreement(prefer, (stereo[both, 0] > counter[both, 0]).tolist())
