"""The one grouped-result object of every benchmark: measures overall and per group, with CIs
(after fairlearn's ``MetricFrame``), each slice computed once by ``summarise(index, rng)``.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from nlibias.metrics.bootstrap import mean_intervals
from nlibias.metrics.meta import measure_info
from nlibias.metrics.verdicts import is_number, slice_size
from nlibias.schema.columns import Categorical
from nlibias.schema.declared import is_int

if TYPE_CHECKING:
    import pandas as pd

#: ``summarise(index, rng)``: the measures of the units at ``index`` (``None``: every unit).
SliceSummary = Callable[[np.ndarray | None, np.random.Generator], dict[str, Any]]

#: Columns of :meth:`MetricFrame.to_frame`.
FRAME_COLUMNS = ("slicing", "slice", "measure", "value", "ci_low", "ci_high", "n")
_NOT_MEASURES = frozenset({"n", "degenerate_pairs", "repeated_rows"})


def check_resampling(bootstrap: Any, confidence: Any) -> None:
    """Refuse a bootstrap size or confidence level no interval can be computed with.

    >>> check_resampling(-1, 0.95)
    Traceback (most recent call last):
    ...
    ValueError: bootstrap is -1; pass the number of resamples (0 disables CIs)
    """
    if not is_int(bootstrap) or bootstrap < 0:
        raise ValueError(f"bootstrap is {bootstrap!r}; pass the number of resamples (0 disables CIs)")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence is {confidence!r}; pass a level between 0 and 1, e.g. 0.95")


def slice_rng(seed: int, slice_name: str) -> np.random.Generator:
    """The random stream of one slice, whatever other slices exist."""
    return np.random.default_rng([seed, zlib.crc32(slice_name.encode("utf-8"))])


def group_positions(labels: Sequence[Any]) -> dict[str, np.ndarray]:
    """``{str(label): ascending positions}``.

    >>> {k: v.tolist() for k, v in group_positions(["b", "a", "b"]).items()}
    {'b': [0, 2], 'a': [1]}
    >>> {k: v.tolist() for k, v in group_positions(Categorical.from_values([2, "2", None])).items()}
    {'2': [0, 1], 'None': [2]}
    """
    if isinstance(labels, Categorical):
        return labels.members()
    positions: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        positions.setdefault(str(label), []).append(i)
    return {key: np.asarray(found, dtype=np.int64) for key, found in positions.items()}


def is_measure_value(key: str, value: Any) -> bool:
    """True for a slice entry that is a measure's value (a number that is not a count)."""
    return is_number(value) and key not in _NOT_MEASURES and not key.startswith("n_")


def slice_rows(slicing: str, name: str, part: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The tidy rows (:data:`FRAME_COLUMNS`) of one slice dict: one per measure with a value."""
    intervals = part.get("ci", {})
    n = slice_size(part)
    for measure, value in part.items():
        if not is_measure_value(measure, value):
            continue
        low, high = intervals.get(measure) or (None, None)
        yield {
            "slicing": slicing,
            "slice": name,
            "measure": measure,
            "value": float(value),
            "ci_low": low,
            "ci_high": high,
            "n": n,
        }


def grouped_rows(grouped: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The tidy rows of ``{"overall": slice, "by_<grouping>": {group: slice}}``."""
    if isinstance(grouped.get("overall"), Mapping):
        yield from slice_rows("overall", "all", grouped["overall"])
    for key, parts in grouped.items():
        if key.startswith("by_") and isinstance(parts, Mapping):
            for name, part in parts.items():
                if isinstance(part, Mapping):
                    yield from slice_rows(key.removeprefix("by_"), str(name), part)


class MetricFrame:
    """Measures overall and per value of every grouping (``groups``: one label per unit)."""

    def __init__(
        self,
        summarise: SliceSummary,
        *,
        n_units: int,
        groups: Mapping[str, Sequence[Any]] | None = None,
        seed: int = 0,
    ) -> None:
        self.seed = seed
        self.overall: dict[str, Any] = summarise(None, slice_rng(seed, "overall"))
        self.by_group: dict[str, dict[str, dict[str, Any]]] = {}
        for by, labels in (groups or {}).items():
            if len(labels) != n_units:
                raise ValueError(f"grouping {by!r} has {len(labels)} values but there are {n_units} units")
            members = group_positions(labels)
            self.by_group[by] = {
                key: summarise(members[key], slice_rng(seed, f"{by}={key}")) for key in sorted(members)
            }

    def _groups(self, by: str) -> dict[str, dict[str, Any]]:
        if by not in self.by_group:
            raise KeyError(f"no grouping {by!r}; this frame has {sorted(self.by_group)}")
        return self.by_group[by]

    def _defined(self, measure: str, by: str) -> list[tuple[str, float]]:
        if measure not in self.overall or not is_measure_value(measure, 0.0):
            known = [key for key, value in self.overall.items() if is_measure_value(key, value)]
            raise KeyError(f"unknown measure {measure!r}; this frame has {', '.join(known)}")
        return [
            (key, float(part[measure]))
            for key, part in self._groups(by).items()
            if is_measure_value(measure, part.get(measure))
        ]

    def difference(self, measure: str, *, by: str) -> float | None:
        """Largest minus smallest value of ``measure`` across the groups of ``by`` (defined ones)."""
        values = [value for _, value in self._defined(measure, by)]
        return float(max(values) - min(values)) if values else None

    def worst_group(self, measure: str, *, by: str) -> tuple[str, float] | None:
        """The group of ``by`` with the worst ``measure`` by its declared direction, and its value."""
        defined = self._defined(measure, by)
        info = measure_info(measure)
        if info.direction == "none":
            raise ValueError(f"measure {measure!r} has no better value, so no group is the worst")
        return max(defined, key=lambda item: info.badness(item[1])) if defined else None

    def to_dict(self) -> dict[str, Any]:
        """``{"overall": slice, "by_<grouping>": {group: slice}}``, JSON-serialisable."""
        return {"overall": self.overall} | {f"by_{by}": slices for by, slices in self.by_group.items()}

    def to_frame(self) -> pd.DataFrame:
        """One row per (slicing, slice, measure): value, CI bounds and unit count."""
        import pandas as pd

        return pd.DataFrame(list(grouped_rows(self.to_dict())), columns=list(FRAME_COLUMNS))


def units_frame(
    values: np.ndarray,
    names: Sequence[str],
    *,
    groups: Mapping[str, Sequence[Any]],
    count_measures: Collection[str],
    bootstrap: int,
    seed: int,
    n_key: str,
    confidence: float = 0.95,
) -> MetricFrame:
    """The :class:`MetricFrame` of a ``(units x measures)`` matrix of fractions as percent means
    (NaN left out; ``n_defined`` counts the rest)."""
    check_resampling(bootstrap, confidence)
    values = np.asarray(values, dtype=float).reshape(-1, len(names))
    report_defined = bool(np.isnan(values).any())

    def summarise(index: np.ndarray | None, rng: np.random.Generator) -> dict[str, Any]:
        part = values if index is None else values[index]
        defined = ~np.isnan(part)
        n_defined = defined.sum(axis=0)
        # correctly rounded: independent of the units' order
        sums = [math.fsum(part[defined[:, j], j].tolist()) for j in range(part.shape[1])]
        result: dict[str, Any] = {n_key: int(part.shape[0])}
        for j, name in enumerate(names):
            result[name] = float(100.0 * sums[j] / n_defined[j]) if n_defined[j] else None
        result["counts"] = {name: round(sums[j]) for j, name in enumerate(names) if name in count_measures}
        if report_defined:
            result["n_defined"] = {name: int(n_defined[j]) for j, name in enumerate(names)}
        result["ci"] = mean_intervals(part, names, resamples=bootstrap, rng=rng, confidence=confidence)
        return result

    return MetricFrame(summarise, n_units=len(values), groups=groups, seed=seed)
