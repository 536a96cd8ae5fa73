"""Several runs or models side by side; a difference is marked only where the 95% bootstrap
intervals do not overlap.

Each column is one (run, model). A column's reference is the same model in the first run when
several runs are compared, otherwise the first column.

>>> disjoint((1.0, 2.0), (2.5, 3.0)), disjoint((1.0, 2.0), (1.5, 3.0)), disjoint(None, (0.0, 1.0))
(True, False, False)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nlibias.metrics.meta import MEASURES
from nlibias.report.metric_readers import interval, is_number, numeric_measures, slice_groups, slice_kinds


@dataclass(frozen=True)
class Cell:
    value: float | None
    ci: tuple[float, float] | None
    differs: bool
    """True when this cell's interval and its reference's interval do not overlap."""
    better: bool | None
    """Whether the difference is an improvement (``None`` when no difference or no direction)."""


@dataclass(frozen=True)
class ComparisonRow:
    slice: str
    measure: str
    cells: list[Cell]


@dataclass(frozen=True)
class Comparison:
    columns: list[str]
    references: list[int]
    """Index of each column's reference column (itself for a reference)."""
    rows: list[ComparisonRow]

    @property
    def n_differences(self) -> int:
        return sum(cell.differs for row in self.rows for cell in row.cells)


def disjoint(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    """True when both intervals exist and do not overlap."""
    if a is None or b is None:
        return False
    return a[1] < b[0] or b[1] < a[0]


def _comparison_slices(metrics: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    kinds = [k for k in slice_kinds(metrics) if k != "subtopic"][:1]
    return slice_groups(metrics, kinds=kinds)


def compare(
    runs: Sequence[tuple[str, Mapping[str, Mapping[str, Any]]]], *, measures: Sequence[str] | None = None
) -> Comparison:
    """Side-by-side values of every measure, overall and per domain (or the first non-subtopic slicing).

    >>> m = lambda v, lo, hi: {"overall": {"accuracy": v, "ci": {"accuracy": [lo, hi]}}}
    >>> c = compare([("r1", {"a": m(50.0, 45.0, 55.0)}), ("r2", {"a": m(70.0, 65.0, 75.0)})])
    >>> c.columns, c.rows[0].cells[1].differs, c.rows[0].cells[1].better
    (['r1 · a', 'r2 · a'], True, True)
    """
    columns: list[tuple[str, str, Mapping[str, Any]]] = [
        (label, model, metrics) for label, models in runs for model, metrics in models.items()
    ]
    several_runs = len(runs) > 1
    names = [f"{label} · {model}" if several_runs else model for label, model, _ in columns]
    references: list[int] = []
    for label, model, _ in columns:
        reference = 0
        if several_runs:
            for j, (other_label, other_model, _) in enumerate(columns):
                if other_model == model and other_label == runs[0][0]:
                    reference = j
                    break
        references.append(reference)
        del label
    if measures is None:
        found: list[str] = []
        for _, _, metrics in columns:
            overall = metrics.get("overall")
            if isinstance(overall, Mapping):
                found += [m for m in numeric_measures(overall) if m not in found]
        ordered = [m for m in MEASURES if m in found] + [m for m in found if m not in MEASURES]
        measures = ordered
    slice_names: list[str] = []
    by_column: list[dict[str, Mapping[str, Any]]] = []
    for _, _, metrics in columns:
        groups = dict(_comparison_slices(metrics))
        by_column.append(groups)
        slice_names += [s for s in groups if s not in slice_names]
    rows: list[ComparisonRow] = []
    for slice_name in slice_names:
        for measure in measures:
            cells: list[Cell] = []
            for i, groups in enumerate(by_column):
                m = groups.get(slice_name, {})
                value = m.get(measure)
                ci = interval(m, measure)
                ref = by_column[references[i]].get(slice_name, {})
                differs = references[i] != i and disjoint(ci, interval(ref, measure))
                better = None
                ref_value = ref.get(measure)
                if differs and measure in MEASURES and is_number(value) and is_number(ref_value):
                    better = MEASURES[measure].is_better(float(value), float(ref_value))
                cells.append(Cell(float(value) if is_number(value) else None, ci, differs, better))
            if any(c.value is not None for c in cells):
                rows.append(ComparisonRow(slice_name, measure, cells))
    return Comparison(columns=names, references=references, rows=rows)


def format_comparison(comparison: Comparison, fmt: str = "md") -> str:
    """The comparison as a Markdown (``md``) or CSV (``csv``) table; ``*`` marks a difference.

    A marked cell's 95% interval does not overlap the interval of its reference column.
    """
    headers = ["Slice", "Measure", *comparison.columns]

    def cell_text(cell: Cell) -> str:
        if cell.value is None:
            return "–" if fmt == "md" else ""
        return f"{cell.value:.2f}" + ("*" if cell.differs else "")

    body = [[row.slice, row.measure, *(cell_text(c) for c in row.cells)] for row in comparison.rows]
    if fmt == "csv":
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(headers)
        writer.writerows(body)
        return buffer.getvalue().rstrip("\n")
    lines = [
        "| " + " | ".join(headers) + " |",
        "|---|---|" + "---:|" * len(comparison.columns),
        *("| " + " | ".join(r) + " |" for r in body),
        "",
        "`*`: the 95% bootstrap interval does not overlap the reference column's "
        f"({', '.join(sorted({comparison.columns[r] for r in comparison.references}))}).",
    ]
    return "\n".join(lines)
