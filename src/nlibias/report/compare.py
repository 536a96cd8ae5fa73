"""Runs or models side by side, each column against its reference (the same model in the first run,
else the first column): paired bootstrap over the same samples, else non-overlapping intervals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nlibias.errors import DataError, NlibiasError
from nlibias.io.run_dir import asked_settings, refuse_unlike
from nlibias.metrics.meta import ALL_MEASURES, MEASURES
from nlibias.metrics.paired import OVERALL, compare_units, p_below
from nlibias.metrics.paired_units import ScoredRun, sample_difference
from nlibias.metrics.verdicts import headline_infos
from nlibias.report.metric_readers import (
    format_with_interval,
    interval,
    is_number,
    numeric_measures,
    overall_of,
    slice_groups,
    slice_kinds,
)
from nlibias.report.paper_table_format import csv_text
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.columns import SampleColumns

if TYPE_CHECKING:
    from nlibias.benchmarks.base import Measures
    from nlibias.report.load import Run


@dataclass(frozen=True)
class Cell:
    value: float | None
    ci: tuple[float, float] | None
    differs: bool
    better: bool | None
    """Whether the difference is an improvement (``None``: no difference or no direction)."""
    delta: float | None = None
    """Paired columns: this value minus the reference's, with its 95% interval."""
    delta_ci: tuple[float, float] | None = None
    paired: bool = False
    """True when :attr:`differs` comes from the paired interval."""
    flagged: bool = False
    """A headline measure the gate would flag (farther from no bias than the reference)."""

    def delta_text(self) -> str | None:
        """``Δ value [low, high]`` of a paired cell, else None."""
        if not self.paired or self.delta is None or self.delta_ci is None:
            return None
        return "Δ " + format_with_interval(self.delta, self.delta_ci, signed=True, span=None)


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
    tests: list[str] = field(default_factory=list)
    """Per column: ``reference``, ``paired`` or ``overlap``."""

    @property
    def n_differences(self) -> int:
        return sum(cell.differs for row in self.rows for cell in row.cells)


def disjoint(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    """True when both intervals exist and do not overlap."""
    if a is None or b is None:
        return False
    return a[1] < b[0] or b[1] < a[0]


def refuse_nothing_compared(runs: Sequence[Run]) -> None:
    """Refuse ``compare`` asked of runs where no column has a model of its kind to be compared
    with (a classifier run and a generative run): every mark would compare different things."""
    tests = plan(runs)[3]
    if "overlap" in tests or len(runs) < 2:
        return
    kinds = [f"{run.path}: {', '.join(sorted({_kind(run, m) or '?' for m in run.models}))}" for run in runs]
    raise option_applies_to_nothing(
        "compare",
        "models of one predictor kind compared with each other",
        given=f"no model of the later runs has one of its kind in the first run to be compared with ({'; '.join(kinds)})",
        fix="compare runs of one kind (their measures are of different things: the gate refuses such a "
        "pair too), or leave {compare} out to see them side by side",
        names=("runs",),
    )


def compare(
    runs: Sequence[tuple[str, Mapping[str, Mapping[str, Any]]] | Run],
    *,
    measures: Sequence[str] | None = None,
) -> Comparison:
    """Every measure side by side, overall and per first non-subtopic slicing; ``runs``: loaded runs
    (paired where possible) or ``(label, models)`` pairs (intervals compared)."""
    items, columns, references, tests = plan(runs)
    names = [f"{label} · {model}" if len(items) > 1 else model for label, model, _, _ in columns]
    if measures is None:
        found = list(dict.fromkeys(m for c in columns for m in numeric_measures(overall_of(c[2]))))
        measures = [m for m in MEASURES if m in found] + [m for m in found if m not in MEASURES]
    by_column = [dict(slice_groups(m, kinds=_first_slicing(m))) for _, _, m, _ in columns]
    slice_names = list(dict.fromkeys(s for groups in by_column for s in groups))
    paired = paired_columns([(model, metrics, run) for _, model, metrics, run in columns], references)
    rows: list[ComparisonRow] = []
    for slice_name in slice_names:
        for measure in measures:
            cells = [
                _cell(groups.get(slice_name, {}), by_column[references[i]].get(slice_name, {}), measure,
                      references[i] != i, paired.get(i, {}).get((slice_name, measure)))
                for i, groups in enumerate(by_column)
            ]  # fmt: skip
            if any(c.value is not None for c in cells):
                rows.append(ComparisonRow(slice_name, measure, cells))
    tests = ["paired" if i in paired else test for i, test in enumerate(tests)]
    return Comparison(columns=names, references=references, rows=rows, tests=tests)


Column = tuple[str, str, Mapping[str, Any], "Run | None"]
"""A compared column: its run's label, the model, its metrics and the run (None: metrics only)."""


def plan(
    runs: Sequence[tuple[str, Mapping[str, Mapping[str, Any]]] | Run],
) -> tuple[list[tuple[Run | None, str, Any]], list[Column], list[int], list[str]]:
    """The runs' columns, each one's reference and its test (``reference``, ``overlap``, or
    ``unlike``: no model of its kind to compare it with), after the rules of runs compared with each
    other: one benchmark; samples the runs recorded not edited since (the gate's check of them);
    a column and its reference of one kind, asked alike (the gate's rule, ``io/run_dir.COMPARED``)."""
    items: list[tuple[Run | None, str, Any]] = [
        (r, r.label, r.models) if not isinstance(r, tuple) else (None, r[0], r[1]) for r in runs
    ]
    columns: list[Column] = [
        (label, model, metrics, run) for run, label, models in items for model, metrics in models.items()
    ]
    loaded = [run for run, _, _ in items if run is not None]
    _refuse_other_benchmarks(loaded)
    for run in loaded if len(items) > 1 else ():
        if run.record is not None and run.record.samples.found is not None:
            run.record.samples.check(run.record.samples.found, given=False)
    first = [j for j, column in enumerate(columns) if len(items) == 1 or column[0] == items[0][1]]
    references = [_reference(columns, i, first, len(items) > 1) for i in range(len(columns))]
    tests = [
        "overlap" if r != i else "reference" if i in first else "unlike" for i, r in enumerate(references)
    ]
    asked = {id(run): asked_settings(run.predictions()) for run in loaded}

    def compared(column: Column) -> tuple[str, Path, dict[str, str]] | None:
        _, model, _, run = column
        kind = {"kind": str(_kind(run, model))}
        return None if run is None else (model, run.path, {**kind, **asked[id(run)].get(model, {})})

    for i, r in enumerate(references):
        mine, theirs = compared(columns[i]), compared(columns[r])
        if r != i and mine is not None and theirs is not None:
            refuse_unlike(
                mine, theirs, roles=("compared", "its reference"), verb="compare",
                fix=lambda setting: f"compare runs audited with one {setting} (audit the one again with the other's)",
            )  # fmt: skip
    return items, columns, references, tests


def _kind(run: Run | None, model: str) -> str | None:
    """The model's predictor kind as its run records it (``classifier`` where none is); None
    without a run (metrics only: any kind)."""
    return None if run is None else str(run.metrics.get("predictor_kinds", {}).get(model, "classifier"))


def _reference(columns: Sequence[Column], i: int, first: Sequence[int], several: bool) -> int:
    """Column ``i``'s reference among ``first`` (the first run's columns): the same model, else the
    first of its predictor kind; itself where none is of its kind (its measures are of other things)."""
    if several and i in first:
        return i
    kind = _kind(columns[i][3], columns[i][1])
    alike = [j for j in first if kind is None or _kind(columns[j][3], columns[j][1]) in (None, kind)]
    same = [j for j in alike if columns[j][1] == columns[i][1]] if several else []
    return (same or alike or [i])[0]


def _refuse_other_benchmarks(runs: Sequence[Run]) -> None:
    """Refuse runs of different benchmarks side by side (other samples, other measures' meaning)."""
    for run in runs[1:]:
        if run.source != runs[0].source:
            raise DataError(
                f"run {runs[0].path} is of benchmark {runs[0].source!r} and run {run.path} of "
                f"{run.source!r}: side by side, one's measures would read as a change from the other's",
                fix="compare runs of one benchmark (report each of the others on its own)",
            )


def _first_slicing(metrics: Mapping[str, Any]) -> list[str]:
    """The slicing compared besides ``overall``: the first but subtopic."""
    return [k for k in slice_kinds(metrics) if k != "subtopic"][:1]


def _cell(
    m: Mapping[str, Any], ref: Mapping[str, Any], measure: str, compared: bool, pair: PairedValue | None
) -> Cell:
    """One column's cell and its difference from the reference (a null value: an empty cell)."""
    value, ref_value = m.get(measure), ref.get(measure)
    if not is_number(value):
        return Cell(None, None, False, None)
    number, ci = float(value), interval(m, measure)
    if pair is not None and pair.delta_ci is not None:
        lo, hi = pair.delta_ci
        differs = lo > 0 or hi < 0
    else:
        pair = None
        differs = compared and is_number(ref_value) and disjoint(ci, interval(ref, measure))
    better = None
    if differs and measure in MEASURES and is_number(ref_value):
        better = MEASURES[measure].is_better(float(value), float(ref_value))
    if pair is None:
        return Cell(number, ci, differs, better)
    return Cell(number, ci, differs, better, pair.delta, pair.delta_ci, True, pair.flagged)


@dataclass(frozen=True)
class PairedValue:
    """A column's paired difference from its reference on one slice and measure."""

    delta: float | None
    delta_ci: tuple[float, float] | None
    flagged: bool


PAIRED_RESAMPLES = 1000


def _scored(run: Run, cache: dict[int, ScoredRun | None]) -> ScoredRun | None:
    """The samples a run scored and each model's outputs on them (None: not readable)."""
    if id(run) not in cache:
        cache[id(run)] = None
        samples = run.samples()
        if samples:
            keys = sorted({key for sample in samples for key in sample.provenance})
            try:
                columns = SampleColumns.from_samples(samples, provenance_keys=keys)
                cache[id(run)] = ScoredRun.of(run.path, run.metrics, columns, run.predictions(), {})
            except (NlibiasError, ValueError):
                return None
    return cache[id(run)]


def paired_columns(
    columns: Sequence[tuple[str, Mapping[str, Any], Run | None]], references: Sequence[int]
) -> dict[int, dict[tuple[str, str], PairedValue]]:
    """``{column: {(slice, measure): PairedValue}}`` for each ``(model, metrics, run)`` column over
    the same samples as its reference."""
    cache: dict[int, ScoredRun | None] = {}
    found: dict[int, dict[tuple[str, str], PairedValue]] = {}
    for i, ref in enumerate(references):
        model, metrics, run = columns[i]
        ref_model, ref_metrics, ref_run = columns[ref]
        if ref == i or run is None or ref_run is None:
            continue
        mine, theirs = _scored(run, cache), _scored(ref_run, cache)
        if mine is None or theirs is None or model not in mine.outputs or ref_model not in theirs.outputs:
            continue
        kind, benchmark = theirs.kind_of(ref_model), ref_run.benchmark
        if benchmark is None or mine.kind_of(model) != kind or kind not in benchmark.measures:
            continue
        same = (
            len(mine.columns) == len(theirs.columns)
            and sample_difference(mine.columns, theirs.columns) is None
        )
        if same:  # both in id order
            values = _paired_values(
                benchmark.measures[kind], (theirs, mine), (ref_model, model), (ref_metrics, metrics)
            )
            if values:
                found[i] = values
    return found


def _paired_values(
    measures: Measures,
    runs: tuple[ScoredRun, ScoredRun],
    models: tuple[str, str],
    metrics: tuple[Mapping[str, Any], Mapping[str, Any]],
) -> dict[tuple[str, str], PairedValue]:
    """Every measure the benchmark's units resample, paired; empty where they cannot be."""
    infos = headline_infos(metrics[1]["overall"], measures.infos)
    heads = [i.name for i in infos if i.name in metrics[0]["overall"]]
    if not heads:
        return {}
    slices = (OVERALL, *_first_slicing(metrics[1]))
    try:
        base_units, cand_units = (
            run.units(measures, model, heads) for run, model in zip(runs, models, strict=True)
        )
        infos = [ALL_MEASURES[n] for n in base_units.point() if n in ALL_MEASURES]
        found = compare_units(
            base_units, cand_units, infos, slices=slices, resamples=PAIRED_RESAMPLES, parameter="compare"
        )
    except (NlibiasError, ValueError):
        return {}
    return {
        ("all" if c.slicing == OVERALL else c.slice, c.measure): PairedValue(
            c.delta, c.delta_ci, ALL_MEASURES[c.measure].headline and p_below(c.p_adjusted, 0.05)
        )
        for c in found
    }


def format_comparison(comparison: Comparison, fmt: str = "md") -> str:
    """The comparison as an ``md`` or ``csv`` table: ``*`` marks a difference, ``!`` a gate flag."""
    headers = ["Slice", "Measure", *comparison.columns]

    def cell_text(cell: Cell) -> str:
        if cell.value is None:
            return "–" if fmt == "md" else ""
        delta = cell.delta_text()
        text = f"{cell.value:.2f}" + ("" if delta is None else f" ({delta})")
        return text + ("*" if cell.differs else "") + ("!" if cell.flagged else "")

    body = [[row.slice, row.measure, *(cell_text(c) for c in row.cells)] for row in comparison.rows]
    if fmt == "csv":
        return csv_text(headers, body)
    lines = [
        "| " + " | ".join(headers) + " |",
        "|---|---|" + "---:|" * len(comparison.columns),
        *("| " + " | ".join(r) + " |" for r in body),
        "",
        *comparison_notes(comparison),
    ]
    return "\n".join(lines)


def comparison_notes(comparison: Comparison) -> list[str]:
    """Which test each compared column got, in words (one line per test used)."""
    paired = [c for c, t in zip(comparison.columns, comparison.tests, strict=False) if t == "paired"]
    overlap = [c for c, t in zip(comparison.columns, comparison.tests, strict=False) if t == "overlap"]
    unlike = [c for c, t in zip(comparison.columns, comparison.tests, strict=False) if t == "unlike"]
    references = ", ".join(sorted({comparison.columns[r] for r in comparison.references}))
    notes = []
    if unlike:
        notes.append(
            f"Not compared ({', '.join(unlike)}): no model of its predictor kind in the first run; the measures "
            "of another kind are of different things, so no difference is marked (the gate refuses such a pair)."
        )
    if paired:
        notes.append(
            f"Paired test ({', '.join(paired)}: the same samples as the reference, {references}): "
            f"Δ is the difference with its 95% paired bootstrap interval ({PAIRED_RESAMPLES} resamples of the "
            "shared units); `*` the interval excludes 0; `!` the gate would flag it (farther from no bias, "
            "one-sided p < 0.05 after Holm over the slices)."
        )
    if overlap or not (paired or unlike):
        notes.append(
            f"Interval overlap ({', '.join(overlap) or 'no column'}: not the same samples as the reference, "
            f"{references}, or no predictions to pair): `*` the 95% bootstrap intervals do not overlap."
        )
    return notes
