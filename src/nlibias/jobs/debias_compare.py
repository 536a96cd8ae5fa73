"""Before/after debiasing (paper 004 Tables 5-7): S, ΔP, B and accuracy of a baseline and its
debiased model from one occupation audit run, their differences with the gate's paired bootstrap
intervals; pairs, seed groups and when a change is marked: docs/debiasing.md."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict, cast

import numpy as np

from nlibias.catalog.registry import read_benchmark_samples
from nlibias.errors import ConfigError, DataError, SourceError
from nlibias.io.atomic import write_json
from nlibias.io.jsonl import json_object_or_none, read_json_file
from nlibias.io.predictions import PREDICTIONS_JSONL, read_prediction_arrays
from nlibias.io.run_dir import read_run
from nlibias.metrics.meta import ALL_MEASURES
from nlibias.metrics.occupations import MEASURE_KEYS, pair_value_columns
from nlibias.metrics.paired import OVERALL, compare_units, mean_units
from nlibias.report.debias_sections import COMPARISON_JSON
from nlibias.schema.columns import IdPositions
from nlibias.schema.declared import NonNegativeFloat, PathArg, Resamples, Seed, declared
from nlibias.schema.measure_info import METRICS_FILE

MIN_EFFECT = 1.0
"""Smallest difference, in points, marked as a change (the paired interval must exclude 0 too)."""
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
    min_effect: float
    """Smallest difference in points that counts as a change."""
    pairs: list[ModelPair]
    seed_groups: list[dict[str, Any]]
    """Pairs that differ only in their seed, summarised across seeds (:func:`seed_groups`)."""


def model_directory(model: str, run: str | Path) -> Path | None:
    """The directory holding ``model``'s ``finetune.json``: an absolute path as it is; a relative
    one from the working directory, else from the run directory or one of its parents."""
    path = Path(model).expanduser()
    if path.is_absolute():
        return path if (path / _FINETUNE_RECORD).is_file() else None
    root = Path(run).expanduser().absolute()
    for base in (Path.cwd(), root, *root.parents):
        if (base / path / _FINETUNE_RECORD).is_file():
            return base / path
    return None


def _finetune_record(model: str, run: str | Path = ".") -> dict[str, Any] | None:
    """``finetune.json`` of ``model`` with its relative ``train``/``eval`` paths made absolute."""
    directory = model_directory(model, run)
    if directory is None:
        return None
    path = directory / _FINETUNE_RECORD
    record = read_json_file(path)  # not UTF-8, not JSON, a key twice: refused with the line
    if not isinstance(record, dict):
        raise SourceError(path, None, "not a fine-tune record (a JSON object)")
    base = directory if not Path(model).expanduser().is_absolute() else Path.cwd()
    for _ in Path(model).parts if base == directory else ():  # where the relative key was given from
        base = base.parent
    for key in ("train", "eval"):
        value = record.get(key)
        if isinstance(value, str) and value and not Path(value).is_absolute() and (base / value).exists():
            record[key] = str(base / value)
    return record


def _pair_key(record: dict[str, Any]) -> str:
    """Base model and settings: what a before and its after share (their data differ)."""
    base = record.get("base_model", {}).get("name") or record.get("settings", {}).get("model")
    return json.dumps([base, record.get("settings", {})], sort_keys=True, default=str)


def find_pairs(models: Sequence[str], run: str | Path = ".") -> list[tuple[str, str]]:
    """``(before, after)`` pairs among fine-tuned models: an "after" trained on an ``nlibias augment``
    output, its "before" on another set from the same base model and settings (seed included)."""
    trained = {m: r for m in models if (r := _finetune_record(m, run)) is not None}

    def augmented(record: dict[str, Any]) -> bool:
        train = Path(str(record.get("train", "")))
        return (train / _AUGMENT_SUMMARY).is_file() or (train.parent / _AUGMENT_SUMMARY).is_file()

    pairs = []
    for after, record in trained.items():
        if not augmented(record):
            continue
        befores = [m for m, r in trained.items() if not augmented(r) and _pair_key(r) == _pair_key(record)]
        if len(befores) == 1:
            pairs.append((befores[0], after))
    return pairs


@declared
def compare_debiasing(
    run_dir: PathArg,
    pairs: Sequence[tuple[str, str]] | None = None,
    *,
    samples: PathArg | None = None,
    bootstrap: Resamples = 1000,
    seed: Seed = 0,
    write: bool = True,
    min_effect: NonNegativeFloat = MIN_EFFECT,
) -> DebiasComparison:
    """Compare each ``(before, after)`` pair of models of an occupation audit run and (``write``)
    save ``debias_comparison.json`` in it; ``min_effect``: the smallest change in points marked."""
    read = read_run(run_dir)
    run, metrics = read.path, read.metrics
    models = list(metrics["models"])
    chosen = list(pairs) if pairs else find_pairs(models, run)
    missing = [m for pair in chosen for m in pair if m not in models]
    if missing or not chosen:
        reason = (
            f"model {missing[0]!r} is not in {run / METRICS_FILE} ({', '.join(models)})"
            if missing
            else "no before/after pair: pass pairs (before, after), or audit model directories written by "
            "`nlibias finetune`, one trained on an `nlibias augment` output"
        )
        raise ConfigError(reason, parameter="pairs")
    samples_path = read.samples.check(read.samples.file(samples))
    columns = read_benchmark_samples(samples_path).columns
    ids = IdPositions(columns.ids)
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
    records = {model: _finetune_record(model, run) for model in values}
    result = DebiasComparison(
        run=str(run.absolute()), samples=str(samples_path), bootstrap=bootstrap, seed=seed,
        min_effect=float(min_effect), pairs=[], seed_groups=[],
    )  # fmt: skip
    by = {"dominant_gender": groups["dominant_gender"]}
    for before, after in chosen:
        found = paired_differences(values[before], values[after], groups=by, bootstrap=bootstrap, seed=seed)
        roles = {"before": before, "after": after}
        pair = ModelPair(
            before=before,
            after=after,
            accuracy={role: _accuracy(records[model]) for role, model in roles.items()},
            metrics={
                role: {s: cast(Mapping, metrics["models"][m]).get(s) for s in slices}
                for role, m in roles.items()
            },
            difference={s: found[s] for s in slices},
        )
        result["pairs"].append(pair)
    result["seed_groups"] = seed_groups(result, _groups(chosen, records), min_effect=min_effect)
    if write:
        save_comparison(run, result)
    return result


def save_comparison(run_dir: str | Path, comparison: DebiasComparison) -> bool:
    """Write ``debias_comparison.json`` unless the one there holds more: a pair this one lacks,
    or an accuracy this one does not know. True when written."""
    path = Path(run_dir) / COMPARISON_JSON
    old = json_object_or_none(path)  # a damaged file holds nothing worth keeping
    if old is not None and _loses_information(old, comparison):
        return False
    write_json(path, comparison)
    return True


def _loses_information(old: dict[str, Any], new: DebiasComparison) -> bool:
    fresh = {(p["before"], p["after"]): p["accuracy"] for p in new["pairs"]}
    for pair in old.get("pairs") or []:
        match = fresh.get((pair.get("before"), pair.get("after")))
        known = pair.get("accuracy", {})
        if match is None or any(known.get(role) is not None and match.get(role) is None for role in known):
            return True
    return False


def _groups(
    pairs: Sequence[tuple[str, str]], records: Mapping[str, dict[str, Any] | None]
) -> list[list[int]]:
    """Indices of ``pairs`` that differ only in their seed (pairs without records stay alone)."""
    groups: dict[str, list[int]] = {}
    for index, pair in enumerate(pairs):
        found = [records[m] or {} for m in pair]
        settings = [{**r.get("settings", {}), "seed": None} for r in found]
        key = json.dumps([*settings, *(r.get("train_sha256") for r in found)], sort_keys=True, default=str)
        alone = any(records[m] is None for m in pair)
        groups.setdefault(f"#{index}" if alone else key, []).append(index)
    return list(groups.values())


def _seed_of(model: str, run: str | Path) -> int | None:
    record = _finetune_record(model, run)
    seed = None if record is None else record.get("settings", {}).get("seed")
    return seed if isinstance(seed, int) else None


def _spread(values: list[float | None]) -> dict[str, Any]:
    known = [float(v) for v in values if v is not None]
    if not known:
        return {"values": values, "mean": None, "min": None, "max": None}
    return {"values": values, "mean": sum(known) / len(known), "min": min(known), "max": max(known)}


def _changed(
    pairs: list[ModelPair],
    key: str,
    before: dict[str, Any],
    after: dict[str, Any],
    min_effect: float = MIN_EFFECT,
) -> bool:
    """A change beyond resampling noise (every seed's paired 95% interval excludes 0, on one side),
    big enough to matter (every seed's difference at least ``min_effect`` points) and beyond seed
    noise (the before and after ranges across seeds do not overlap)."""
    sides = set()
    for pair in pairs:
        ci = pair["difference"]["overall"].get("ci", {}).get(key)
        if not ci or ci[0] is None or ci[1] is None or ci[0] <= 0 <= ci[1]:
            return False
        value = pair["difference"]["overall"].get(key)
        if value is None or abs(float(value)) < min_effect:
            return False
        sides.add(ci[0] > 0)
    if len(sides) != 1 or None in (before["min"], after["min"]):
        return False
    return len(pairs) == 1 or before["max"] < after["min"] or after["max"] < before["min"]


def seed_groups(
    comparison: DebiasComparison, groups: list[list[int]], *, min_effect: float = MIN_EFFECT
) -> list[dict[str, Any]]:
    """Per group of pairs differing only in the seed: each measure's per-seed values before and
    after, their mean and min-max, the differences and whether it changed (:func:`_changed`)."""
    run = comparison["run"]
    out = []
    for indices in groups:
        pairs = [comparison["pairs"][i] for i in indices]
        summary: dict[str, Any] = {
            "before": [p["before"] for p in pairs],
            "after": [p["after"] for p in pairs],
            "seeds": [_seed_of(p["before"], run) for p in pairs],
            "accuracy": {r: _spread([p["accuracy"].get(r) for p in pairs]) for r in ("before", "after")},
            "measures": {},
        }
        for key in ("S", "delta_p", "B"):
            roles = {
                r: _spread([p["metrics"][r]["overall"].get(key) for p in pairs]) for r in ("before", "after")
            }
            summary["measures"][key] = {
                **roles,
                "difference": _spread([p["difference"]["overall"].get(key) for p in pairs]),
                "changed": _changed(pairs, key, roles["before"], roles["after"], min_effect),
            }
        out.append(summary)
    return out


def paired_differences(
    before: Any, after: Any, *, groups: dict[str, Any], bootstrap: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """After minus before of S, ΔP, B and S_3way (points) over the same pairs, overall and per
    group, with the gate's paired bootstrap intervals (:func:`nlibias.metrics.paired.compare_units`);
    a pair either model leaves undefined is left out of that measure for both, so the difference is
    the difference of the means over the pairs both define.

    >>> import numpy as np
    >>> before = np.array([[1.0, 0.2, 1.0, 1.0], [0.0, 0.4, 0.0, 1.0]])
    >>> after = np.array([[1.0, 0.1, 0.0, 0.0], [1.0, 0.1, 0.0, 1.0]])
    >>> d = paired_differences(before, after, groups={}, bootstrap=0, seed=0)["overall"]
    >>> d["S"], round(d["delta_p"], 6), d["B"], d["S_3way"]  # S 50 -> 100, dP 30 -> 10, B 50 -> 0, S3 100 -> 50
    (50.0, -20.0, -50.0, -50.0)
    """
    before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    if before.shape != after.shape:
        raise ValueError(f"before has shape {before.shape} and after {after.shape}; pass the same pairs")
    either = np.isnan(before) | np.isnan(after)
    base = mean_units(np.where(either, np.nan, before), MEASURE_KEYS, groups=groups)
    cand = mean_units(np.where(either, np.nan, after), MEASURE_KEYS, groups=groups)
    infos = [ALL_MEASURES[key] for key in MEASURE_KEYS]
    found = compare_units(base, cand, infos, slices=(OVERALL, *groups), resamples=bootstrap, seed=seed)
    out: dict[str, Any] = {"overall": {"ci": {}}} | {f"by_{by}": {} for by in groups}
    for c in found:
        part = (
            out["overall"] if c.slicing == OVERALL else out[f"by_{c.slicing}"].setdefault(c.slice, {"ci": {}})
        )
        part["n_pairs"] = c.n_units
        part[c.measure] = c.delta
        part["ci"][c.measure] = None if c.delta_ci is None else list(c.delta_ci)
    return out


def _accuracy(record: Mapping[str, Any] | None) -> float | None:
    accuracy = None if record is None else record.get("eval_accuracy")
    return None if accuracy is None else 100.0 * float(accuracy)
