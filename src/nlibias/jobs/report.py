"""``nlibias report`` as a function (:func:`make_report`): an HTML report, paper-layout tables,
or the before/after debiasing tables of one occupation audit.

>>> parse_pairs(["bert=bert-debiased", ("a", "b")])
[('bert', 'bert-debiased'), ('a', 'b')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from annotated_types import MinLen, Predicate

from nlibias.catalog.registry import with_benchmarks
from nlibias.errors import DataError, import_extra
from nlibias.io.atomic import atomic_write_text, locked_folder
from nlibias.io.overwrites import refuse_named_twice, refuse_overwrites, run_files
from nlibias.io.run_manifest import run_directory
from nlibias.jobs.debias_compare import COMPARISON_JSON, DebiasComparison, compare_debiasing, save_comparison
from nlibias.report.compare import compare as compare_runs
from nlibias.report.compare import format_comparison, refuse_nothing_compared
from nlibias.report.debias_tables import format_debias_tables
from nlibias.report.html import ASSETS_DIR_SUFFIX, write_report
from nlibias.report.load import Run, load_runs
from nlibias.report.paper_tables import TABLE_FORMATS, format_table, render_tables
from nlibias.report.tp_correlation import agreement_table, correlation_table, item_agreements
from nlibias.schema.applies import AppliesTo, option_applies_to_nothing
from nlibias.schema.declared import Allowed, NonNegativeFloat, PathArg, Refuse, declared, one_or_many
from nlibias.schema.paths import OutFile


@dataclass(frozen=True)
class ReportResult:
    """What :func:`make_report` made: ``kind`` is ``html``, ``tables`` or ``debias``."""

    kind: Literal["html", "tables", "debias"]
    out: Path | None
    """The file written: the HTML report, the tables (when ``out`` was given), or the run's
    ``debias_comparison.json`` (None when the one there holds more and was kept)."""
    text: str = ""
    """The tables (``tables``: in ``fmt``; ``debias``: as text)."""
    tables_out: Path | None = None
    """``debias``: the file the text tables were written to (``out``), None when not given."""
    fmt: str | None = None
    sections: tuple[str, ...] = ()
    """HTML: the ids of the sections rendered (the others had no data)."""
    caveats: tuple[str, ...] = ()
    """HTML: the kinds of caveat at the top of the report, each once."""
    figures: Path | None = None
    """HTML: the folder of the figures (PNG and SVG), None without figures."""
    comparison: DebiasComparison | None = None

    def to_dict(self) -> dict[str, Any]:
        """What ``nlibias report --json`` prints."""
        out, tables_out, figures = (
            None if p is None else str(p) for p in (self.out, self.tables_out, self.figures)
        )
        if self.kind == "debias":
            return {"comparison": self.comparison, "out": out, "tables_out": tables_out}
        if self.kind == "tables":
            return {"format": self.fmt, "out": out, "text": self.text}
        return {
            "out": out,
            "sections": list(self.sections),
            "caveats": list(self.caveats),
            "figures": figures,
        }


def _not_a_pair(pair: str) -> bool:
    """``pair`` lacks a ``=`` or a key on either side of it."""
    return "=" not in pair or not all(_split(pair))


Pair = (
    Annotated[
        str,
        Refuse(_not_a_pair, lambda pair: f"takes BEFORE=AFTER (model keys of the run), not {pair!r}"),
    ]
    | tuple[str, str]
)
"""A before/after pair of model keys: ``BEFORE=AFTER``, or the two keys."""


def parse_pairs(pairs: Sequence[str | tuple[str, str]]) -> list[tuple[str, str]]:
    """``BEFORE=AFTER`` texts (:data:`Pair`) or pairs as (before, after) model keys."""
    return [pair if isinstance(pair, tuple) else _split(pair) for pair in pairs]


def _split(pair: str) -> tuple[str, str]:
    before, _, after = pair.partition("=")
    return before, after


RunDirs = PathArg | Annotated[Sequence[PathArg], MinLen(1), Allowed("a non-empty list of run directories")]
TableFormat = Annotated[
    str, Predicate(TABLE_FORMATS.__contains__), Allowed(f"one of {', '.join(TABLE_FORMATS)}")
]
_DEBIAS_TABLES = "the before/after tables ({debias} or {pairs})"


def _debias(settings: Mapping[str, Any]) -> bool:
    return bool(settings.get("debias") or settings.get("pairs"))


def _several_runs(settings: Mapping[str, Any]) -> str:
    runs = one_or_many(settings["runs"])
    shown = ", ".join(map(str, runs[:3])) + (", ..." if len(runs) > 3 else "")
    return (
        f"{_DEBIAS_TABLES} compare the models of one audit run, and {{runs}} names {len(runs)} "
        f"({shown}); name one run directory in {{runs}}"
    )


ONE_RUN_DEBIAS = AppliesTo(  # runs
    "one audit run with the before/after tables",
    # with compare, the graver fault is compare with debias: its own rule names both
    lambda settings: (
        not _debias(settings) or settings.get("compare") or len(one_or_many(settings["runs"])) == 1
    ),
    "",
    names=("debias", "pairs"),
    words=_several_runs,
)
PAPER_TABLES = AppliesTo(  # fmt
    f"the paper tables of audit, score and extend runs, not to {_DEBIAS_TABLES}, which are text only",
    lambda settings: not _debias(settings),
    "",
    names=("debias", "pairs"),
)
COMPARE_DEBIAS = AppliesTo(
    f"the HTML report and the paper tables of several runs, not to {_DEBIAS_TABLES}, which compare "
    "models of one run",
    lambda settings: not _debias(settings),
    "",
    names=("debias", "pairs"),
)
COMPARE_LATEX = AppliesTo(
    "md or csv tables",
    lambda settings: settings.get("fmt") != "latex",
    "",
    names=("fmt",),
    words="{compare} prints md or csv tables, not latex ({parameter fmt})",
)
PLOTS_DEBIAS = AppliesTo(
    f"the HTML report (its figures), not to {_DEBIAS_TABLES}",
    lambda settings: not _debias(settings),
    "",
    names=("debias", "pairs"),
)
PLOTS_TABLES = AppliesTo(
    "the HTML report (its figures), not to the paper tables ({fmt})",
    lambda settings: settings.get("fmt") is None,
    "",
    names=("fmt",),
)
DEBIAS_TABLES = AppliesTo(  # min_effect
    "the before/after tables",
    _debias,
    "",
    "set {{debias}} or {{pairs}}, or leave {{{name}}} out",
    ("debias", "pairs"),
)


@declared
def make_report(
    runs: Annotated[RunDirs, ONE_RUN_DEBIAS],
    out: OutFile | None = None,
    *,
    fmt: Annotated[TableFormat | None, PAPER_TABLES] = None,
    compare: Annotated[bool, COMPARE_DEBIAS, COMPARE_LATEX] = False,
    plots: Annotated[bool, PLOTS_DEBIAS, PLOTS_TABLES] = True,
    debias: bool = False,
    pairs: Sequence[Pair] = (),
    min_effect: Annotated[NonNegativeFloat | None, DEBIAS_TABLES] = None,
) -> ReportResult:
    """``nlibias report``: the HTML report of ``runs`` (``out``, default ``<first run>/report.html``);
    with ``fmt`` the paper tables as ``text``; with ``compare`` side by side; with ``debias`` (or
    ``pairs`` of ``BEFORE=AFTER`` model keys) the before/after tables of one occupation audit,
    saved as its ``debias_comparison.json``. Tables are written to ``out`` when given.

    >>> # print(nlibias.make_report("runs/audit", fmt="md").text)
    >>> make_report("runs/audit", debias=True, fmt="md")
    Traceback (most recent call last):
    ...
    nlibias.schema.applies.InapplicableOption: fmt 'md' applies to the paper tables of audit, score and extend runs, not to the before/after tables (debias or pairs), which are text only; leave fmt out
    """
    runs = one_or_many(runs)
    _refuse_same_run_twice(runs, compare=compare)
    saved = [Path(run) / COMPARISON_JSON for run in runs] if debias or pairs else []  # the comparison saved
    refuse_overwrites({"out": out, "debias": saved}, {"runs": [f for run in runs for f in run_files(run)]})
    if debias or pairs:
        return _debias_report(runs, pairs, min_effect, out)
    loaded = with_benchmarks(load_runs(list(runs)))
    if compare:
        refuse_nothing_compared(loaded)
    if fmt is not None:
        return _tables_report(loaded, fmt, compare, out)
    return _html_report(loaded, out, compare, plots)


def _refuse_same_run_twice(runs: Sequence[str | Path], *, compare: bool) -> None:
    """Refuse a run named twice (however spelled) and ``compare`` with one run (only zeros)."""
    if compare and len(runs) < 2:
        raise option_applies_to_nothing(
            "compare", "two or more runs side by side", given=f"{{runs}} names one ({runs[0]})",
            fix="name a second run in {runs}, or leave {compare} out", names=("runs",),
        )  # fmt: skip
    refuse_named_twice(runs, "runs", "run directory", each="run", file_of=run_directory)


def _tables_report(loaded: Sequence[Run], fmt: str, compare: bool, out: str | Path | None) -> ReportResult:
    """Paper tables in ``fmt``, or with ``compare`` the side-by-side comparison and the TP tables."""
    if not compare:
        runs = [(r.label, r.source, r.models) for r in loaded]
        text = render_tables(runs, fmt, {r.label: r.metrics for r in loaded})
    else:
        text = format_comparison(compare_runs(list(loaded)), fmt) + "\n"
        correlations = correlation_table([(r.label, r.models) for r in loaded])
        for table in (correlations, agreement_table(item_agreements(list(loaded)))):
            if table is not None:
                text += f"\n{table.title}\n\n{format_table(table, fmt)}\n"
    if not text.strip():
        raise DataError("no table can be built from these runs (no metrics with known measures)")
    if out is not None:
        atomic_write_text(out, text)  # its folder made as needed
    return ReportResult("tables", None if out is None else Path(out), text=text, fmt=fmt)


def _html_report(loaded: Sequence[Run], out: str | Path | None, compare: bool, plots: bool) -> ReportResult:
    if plots:
        import_extra(
            "matplotlib",
            "report",
            use="the report's figures",
            parameter="plots",
            otherwise="or make the report without figures ({parameter plots})",
        )
    target = Path(out) if out is not None else loaded[0].path / "report.html"
    with locked_folder(
        target.parent, parameter="out"
    ):  # another report into this folder: one's page and figures
        report = write_report(list(loaded), target, compare_runs=True if compare else None, plots=plots)
    caveats = tuple(dict.fromkeys(c.kind for c in report.caveats))
    figures = target.parent / (target.stem + ASSETS_DIR_SUFFIX) if report.plots else None
    return ReportResult("html", target, sections=tuple(report.sections), caveats=caveats, figures=figures)


def _debias_report(
    runs: Sequence[str | Path],
    pairs: Sequence[str | tuple[str, str]],
    min_effect: float | None,
    out: str | Path | None,
) -> ReportResult:
    """The before/after tables as text, written to ``out`` when given."""
    run = Path(runs[0])
    options: dict[str, Any] = {} if min_effect is None else {"min_effect": min_effect}
    comparison = compare_debiasing(run, parse_pairs(pairs) or None, write=False, **options)
    saved = save_comparison(run, comparison)
    text = format_debias_tables(comparison)
    if out is not None:
        atomic_write_text(out, text)
    written = run / COMPARISON_JSON if saved else None
    tables_out = None if out is None else Path(out)
    return ReportResult("debias", written, text=text, tables_out=tables_out, comparison=comparison)
