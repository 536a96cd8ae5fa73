"""Before/after debiasing: S, ΔP, B and accuracy of a baseline and its debiased model, and their
differences with paired bootstrap intervals (paper 004 Tables 5-7), from one audit run directory.

Both models must have been audited on the same occupation samples (one ``nlibias audit`` with two
``--model``). The differences come from the per-pair values of each model
(:func:`nlibias.metrics.occupations.pair_value_columns`), resampled by pair for both at once
(:func:`nlibias.metrics.occupations.paired_differences`); the models' own values and intervals
are those of the run's ``metrics.json``. Accuracy is read from each model directory's
``finetune.json`` (``nlibias finetune --eval``), when there is one.

Pairs are given as ``(before, after)`` model keys, or found: a model directory whose
``finetune.json`` names an ``nlibias augment`` output as its training set is an "after", and the
model trained from the same base model on anything else is its "before".
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

from nlibias.errors import ConfigError, DataError, SourceError
from nlibias.io.atomic import write_json
from nlibias.io.predictions import PREDICTIONS_JSONL, read_prediction_arrays
from nlibias.jobs.streamed_audit import read_sample_columns_and_ids
from nlibias.metrics.occupations import pair_value_columns, paired_differences

COMPARISON_JSON = "debias_comparison.json"
_AUGMENT_SUMMARY = "augment_summary.json"
_FINETUNE_RECORD = "finetune.json"


class ModelPair(TypedDict):
    """One baseline and its debiased model in ``debias_comparison.json``."""

    before: str
    after: str
    accuracy: dict[str, float | None]
    """``before``/``after``: evaluation accuracy in percent from ``finetune.json`` (None: unknown)."""
    metrics: dict[str, dict[str, Any]]
    """``before``/``after``: the models' ``overall`` and ``by_dominant_gender`` slices."""
    difference: dict[str, Any]
    """After minus before, percentage points: ``overall`` and ``by_dominant_gender`` slices."""


class DebiasComparison(TypedDict):
    run: str
    samples: str
    bootstrap: int
    seed: int
    pairs: list[ModelPair]


def _finetune_record(model: str) -> dict[str, Any] | None:
    path = Path(model) / _FINETUNE_RECORD
    if not path.is_file():
        return None
    try:
        record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SourceError(path, None, f"not valid JSON ({error})") from None
    return record


def find_pairs(models: Sequence[str]) -> list[tuple[str, str]]:
    """``(before, after)`` pairs among fine-tuned model directories: an "after" was trained on an
    ``nlibias augment`` output, its "before" on another set from the same base model."""
    records = {m: _finetune_record(m) for m in models}
    trained = {m: r for m, r in records.items() if r is not None}

    def augmented(record: dict[str, Any]) -> bool:
        train = Path(str(record.get("train", "")))
        return (train / _AUGMENT_SUMMARY).is_file() or (train.parent / _AUGMENT_SUMMARY).is_file()

    pairs = []
    for after, record in trained.items():
        if not augmented(record):
            continue
        base = record.get("settings", {}).get("model")
        befores = [
            m for m, r in trained.items() if not augmented(r) and r.get("settings", {}).get("model") == base
        ]
        if len(befores) == 1:
            pairs.append((befores[0], after))
    return pairs


def compare_debiasing(
    run_dir: str | Path,
    pairs: Sequence[tuple[str, str]] | None = None,
    *,
    samples: str | Path | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    write: bool = True,
) -> DebiasComparison:
    """Compare each ``(before, after)`` pair of models of an occupation audit run; write
    ``debias_comparison.json`` into the run (``write``). ``samples``: where the audit's samples are
    (default: the path the run recorded)."""
    run = Path(run_dir)
    metrics_path = run / "metrics.json"
    if not metrics_path.is_file():
        raise SourceError(
            run, None, "no metrics.json here", fix="pass a run directory written by `nlibias audit`"
        )
    metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
    models = list(metrics.get("models", {}))
    chosen = list(pairs) if pairs else find_pairs(models)
    if not chosen:
        raise ConfigError(
            "no before/after pair: pass pairs (before, after), or audit model directories written by "
            "`nlibias finetune`, one trained on an `nlibias augment` output",
            parameter="pairs",
        )
    for model in (m for pair in chosen for m in pair):
        if model not in metrics["models"]:
            raise ConfigError(
                f"model {model!r} is not in {metrics_path} ({', '.join(models)})", parameter="pairs"
            )
    samples_path = samples or (metrics.get("run") or {}).get("samples")
    if not samples_path:
        raise ConfigError(f"{metrics_path} does not record its samples; pass samples", parameter="samples")
    columns, ids = read_sample_columns_and_ids(samples_path)
    if columns.source != "occupations":
        raise DataError(
            f"the run's samples are {columns.source!r}; before/after needs occupation samples", field="source"
        )
    arrays = read_prediction_arrays(run / PREDICTIONS_JSONL, position_of=ids, n_samples=len(columns))
    values = {}
    for model in {m for pair in chosen for m in pair}:
        rows = arrays.models[model]
        if not rows.predicted().all():
            raise SourceError(run / PREDICTIONS_JSONL, None, f"{model} has no prediction for some samples")
        values[model], groups, _ = pair_value_columns(columns, rows.probs, model=model, labels=rows.label)
    slices = ("overall", "by_dominant_gender")
    result = DebiasComparison(
        run=str(run), samples=str(samples_path), bootstrap=bootstrap, seed=seed, pairs=[]
    )
    for before, after in chosen:
        difference = paired_differences(
            values[before], values[after], groups={"dominant_gender": groups["dominant_gender"]},
            bootstrap=bootstrap, seed=seed,
        )  # fmt: skip
        result["pairs"].append(
            ModelPair(
                before=before,
                after=after,
                accuracy={role: _accuracy(model) for role, model in (("before", before), ("after", after))},
                metrics={
                    role: {s: metrics["models"][model].get(s) for s in slices}
                    for role, model in (("before", before), ("after", after))
                },
                difference={s: difference[s] for s in slices},
            )
        )
    if write:
        write_json(run / COMPARISON_JSON, result)
    return result


def _accuracy(model: str) -> float | None:
    record = _finetune_record(model)
    accuracy = None if record is None else record.get("eval_accuracy")
    return None if accuracy is None else 100.0 * float(accuracy)
