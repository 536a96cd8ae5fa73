"""BBQ's text tables: each model's measures overall and per slice, and the bias scores laid out as
the paper's Figure 3 (categories x models, ambiguous | disambiguated)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlibias.metrics.verdicts import format_value
from nlibias.report.metric_readers import interval
from nlibias.textio.tables import render_table

_ALWAYS = ("by_polarity", "by_label_type")
"""Slicings shown under every model whatever ``by`` asks for."""


def _cell(metrics: Mapping[str, Any], name: str) -> str:
    return format_value(metrics.get(name), interval(metrics, name), digits=1)


_MEASURES = ("bbq_s_amb", "bbq_s_dis", "bbq_accuracy_ambig", "bbq_accuracy_disambig", "bbq_accuracy_cost")
_HEADER = ["model", "slice", "s_AMB", "s_DIS", "acc ambig", "acc disambig", "acc cost"]
_COUNTS = {"n": "n", "unparsed": "n_unparsed", "templates": "n_units"}


def _row(model: str, name: str, m: Mapping[str, Any]) -> list[Any]:
    return [model, name, *(_cell(m, k) for k in _MEASURES), *(m.get(k) for k in _COUNTS.values())]


def format_bbq_tables(models: Mapping[str, Mapping[str, Any]], *, by: str = "domain") -> str:
    """Each model's BBQ measures overall and per slice with 95% intervals, then the Figure 3 layout."""
    rows: list[list[Any]] = []
    for model, metrics in models.items():
        rows.append(_row(model, "overall", metrics.get("overall", {})))
        for slicing in (f"by_{by}", *_ALWAYS):
            for name, m in metrics.get(slicing, {}).items():
                rows.append(_row(model, name, m))
    title = "BBQ bias scores (s_AMB, s_DIS: 0 is no bias, above 0 towards the stereotype) and accuracy"
    note = "".join(
        f"\n{text}" for model, m in models.items() if (text := _left_out(model, m.get("overall", {})))
    )
    return render_table([*_HEADER, *_COUNTS], rows, title=title) + note + "\n\n" + format_bbq_figure(models)


def _left_out(model: str, overall: Mapping[str, Any]) -> str:
    """What of a model's answers no measure reads, or ''."""
    unparsed, changed = int(overall.get("n_unparsed") or 0), int(overall.get("n_changed") or 0)
    parts = [f"{unparsed} answers not read as an option"] if unparsed else []
    if changed:
        parts.append(f"{changed} answers to an earlier annotation of their example (answer_info differs)")
    return f"{model}: {' and '.join(parts)}: left out of every measure." if parts else ""


def format_bbq_figure(models: Mapping[str, Mapping[str, Any]]) -> str:
    """The bias scores per category and model, ambiguous then disambiguated (the paper's Figure 3)."""
    names = list(models)
    categories = sorted({c for m in models.values() for c in m.get("by_domain", {})})
    rows = []
    for category in categories:
        row: list[Any] = [category]
        for measure in ("bbq_s_amb", "bbq_s_dis"):
            for model in names:
                value = models[model].get("by_domain", {}).get(category, {}).get(measure)
                row.append("-" if value is None else f"{value:.1f}")
        rows.append(row)
    header = ["category"] + [f"ambig: {m}" for m in names] + [f"disambig: {m}" for m in names]
    return render_table(header, rows, title="BBQ bias scores by category (paper Figure 3 layout)")


def format_bbq_expansion(summary: Mapping[str, Any]) -> str:
    """What ``nlibias expand bbq`` prints: examples per category, condition and polarity."""
    cells = ("ambig_neg", "ambig_nonneg", "disambig_neg", "disambig_nonneg")
    rows = [[name, c["examples"], *(c.get(k, 0) for k in cells)] for name, c in summary["categories"].items()]
    table = render_table(["category", "examples", *cells], rows)
    totals = summary["totals"]
    missing = summary.get("missing_categories") or []
    absent = f"; not here: {', '.join(missing)} (all 11 at the pinned commit)" if missing else ""
    return (
        f"{table}\n\n{totals['examples']} examples in {totals['units']} filled templates{absent} "
        f"→ {summary['files']['jsonl']}"
    )
