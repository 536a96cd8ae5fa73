"""What a report refuses in a ``metrics.json`` that its schema alone lets through: a key given
twice (JSON readers keep the last one silently), no models, an interval whose lower end is above
its upper end, accuracy and misprediction rate that do not add up to 100.

Each refusal is a :class:`~nlibias.errors.SourceError` naming the file and the field.

>>> check_consistent({"source": "bbnli", "models": {"m": {"overall": {"accuracy": 70.0,
...     "misprediction_rate": 20.0}}}}, path="run/metrics.json")  # doctest: +ELLIPSIS
Traceback (most recent call last):
nlibias.errors.SourceError: run/metrics.json: field models.m.overall: accuracy 70 + misprediction_rate 20 = 90, not 100 (...)
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from nlibias.errors import SourceError
from nlibias.report.metric_readers import is_number

#: Points by which accuracy + misprediction rate may miss 100 (two-decimal rounding of both).
SUM_TOLERANCE = 0.01
_FIX = "this file was not written by nlibias as it is: rerun the audit or score"


class _Keys(dict[str, Any]):
    """A JSON object that remembers the keys it was given more than once, and how often."""

    repeated: dict[str, int]


def _object(pairs: list[tuple[str, Any]]) -> _Keys:
    result = _Keys(pairs)
    counts: dict[str, int] = {}
    for key, _ in pairs:
        counts[key] = counts.get(key, 0) + 1
    result.repeated = {key: n for key, n in counts.items() if n > 1}
    return result


def _repeated(value: Any, where: str = "") -> Iterator[tuple[str, int]]:
    if isinstance(value, _Keys):
        for key, n in value.repeated.items():
            yield (f"{where}.{key}" if where else key), n
        for key, item in value.items():
            yield from _repeated(item, f"{where}.{key}" if where else key)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _repeated(item, f"{where}[{i}]")


def check_unique_keys(path: str | Path) -> None:
    """Refuse a JSON file with a key given twice in one object (the field path names it)."""
    text = Path(path).read_text(encoding="utf-8")
    document = json.loads(text, object_pairs_hook=_object)
    for field, n in _repeated(document):
        raise SourceError(
            path,
            field,
            f"given {n} times in one object; a JSON reader keeps only the last one",
            fix=_FIX,
        )


def _slices(models: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for model, metrics in models.items():
        if not isinstance(metrics, Mapping):
            continue
        for key, value in metrics.items():
            if key == "overall" and isinstance(value, Mapping):
                yield f"models.{model}.overall", value
            elif key.startswith("by_") and isinstance(value, Mapping):
                for name, m in value.items():
                    if isinstance(m, Mapping):
                        yield f"models.{model}.{key}.{name}", m


def check_consistent(document: Mapping[str, Any], *, path: str | Path) -> None:
    """Refuse a metrics document with no models, an interval upside down, or accuracy and
    misprediction rate that do not sum to 100 (within :data:`SUM_TOLERANCE`)."""
    models = document.get("models")
    if not isinstance(models, Mapping) or not models:
        raise SourceError(path, "models", "no models: the file holds no results to report", fix=_FIX)
    for where, m in _slices(models):
        ci = m.get("ci")
        for measure, bounds in ci.items() if isinstance(ci, Mapping) else []:
            pair = isinstance(bounds, list | tuple) and len(bounds) == 2 and all(is_number(b) for b in bounds)
            if pair and bounds[0] > bounds[1]:
                raise SourceError(
                    path,
                    f"{where}.ci.{measure}",
                    f"the interval's lower end {bounds[0]:g} is above its upper end {bounds[1]:g}",
                    fix=_FIX,
                )
        accuracy, wrong = m.get("accuracy"), m.get("misprediction_rate")
        if is_number(accuracy) and is_number(wrong) and abs(accuracy + wrong - 100.0) > SUM_TOLERANCE:
            raise SourceError(
                path,
                where,
                f"accuracy {accuracy:g} + misprediction_rate {wrong:g} = {accuracy + wrong:g}, not 100",
                fix=_FIX,
            )
