"""One self-contained HTML report: verdicts and caveats first, then the sections with data, the
run's configuration last (docs/report.md); every text from data files is escaped."""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from nlibias.io.atomic import atomic_path, atomic_write_text
from nlibias.metrics.verdicts import slice_size
from nlibias.report import plots as figures
from nlibias.report.assets import REPORT_CSS as _CSS
from nlibias.report.assets import REPORT_JS as _JS
from nlibias.report.compare import Comparison, compare, comparison_notes
from nlibias.report.debias_sections import debias_section
from nlibias.report.examples import CATEGORY_TITLES, example_pairs
from nlibias.report.explanation_sections import explanations_html
from nlibias.report.extend_sections import extend_card_html
from nlibias.report.figure_kit import Plot
from nlibias.report.glossary import glossary_html, glossary_names
from nlibias.report.html_parts import escape as _e
from nlibias.report.html_parts import model_key, sensitive
from nlibias.report.html_parts import table as _table
from nlibias.report.load import Run
from nlibias.report.metric_readers import (
    format_with_interval,
    has_measure,
    is_number,
    slice_groups,
    slice_kinds,
    value_with_interval,
)
from nlibias.report.paper_tables import (
    MEASURE_TITLES,
    TABLE8_NOTE,
    PaperTable,
    biased_subtopics,
    format_table,
    measures_sentence,
    most_biased_subtopics,
    paper_tables,
)
from nlibias.report.run_notes import Caveat, caveats_html, provenance_html
from nlibias.report.tables import TABLE5_COLUMNS, TABLE7_COLUMNS
from nlibias.report.tp_correlation import agreement_table, correlation_table, item_agreements, plot_tp_vs_nli
from nlibias.report.verdict_html import measure_link, verdict_section

ASSETS_DIR_SUFFIX = "_files"


@dataclass
class Report:
    """The rendered report: ``html`` text and the figures to save beside it."""

    html: str
    plots: list[Plot] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)
    """Ids of the sections rendered (the others had no data)."""
    caveats: list[Caveat] = field(default_factory=list)


def _num(value: Any) -> str:
    """A measure with two decimals, a count as an integer."""
    if isinstance(value, int) and is_number(value):
        return str(value)
    return f"{value:.2f}" if is_number(value) else "–"


def _split_total(m: Mapping[str, Any]) -> str:
    """Pro + Anti + Error (the misprediction rate); "–" when any is missing."""
    parts = [m.get(k) for k in ("cf_pro", "cf_anti", "cf_error")]
    return _num(sum(float(p) for p in parts if is_number(p))) if all(is_number(p) for p in parts) else "–"


def _svg_data(plot: Plot) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(plot.svg.encode("utf-8")).decode("ascii")


def _figure_html(plot: Plot | None) -> str:
    """A figure at a readable size, with its narrow variant for a phone."""
    if plot is None:
        return ""
    image = (
        f'<img alt="{_e(plot.caption)}" style="width:{round(plot.width_in * 150)}px" src="{_svg_data(plot)}">'
    )
    if plot.narrow is not None:
        phone = f'<source media="(max-width:700px)" srcset="{_svg_data(plot.narrow)}">'
        image = f'<picture class="phone">{phone}{image}</picture>'
    return f"<figure>{image}<figcaption>{_e(plot.caption)}</figcaption></figure>"


class _Figures(list[Plot]):
    """The figures drawn for a report (none when ``on`` is false), each phone variant after its
    figure, to be saved beside it."""

    def __init__(self, on: bool) -> None:
        super().__init__()
        self.on = on

    def show(self, draw: Callable[..., Plot | None], *args: Any, **kwargs: Any) -> str:
        """The HTML of the figure ``draw(*args, **kwargs)`` returns (``""`` without one), kept."""
        plot = draw(*args, **kwargs) if self.on else None
        self += [] if plot is None else [plot] if plot.narrow is None else [plot, plot.narrow]
        return _figure_html(plot)


def _paper_table_html(table: PaperTable) -> str:
    rows = [
        [_e(_num(v)) if is_number(v) and isinstance(v, float) else _e("" if v is None else v) for v in r]
        for r in table.rows
    ]
    return f"<h3>{_e(table.title)}</h3>" + _table(table.headers, rows, numeric_from=len(table.headers))


def _card(runs: Sequence[Run]) -> str:
    cards = [(run.label, run.card_text()) for run in runs]
    summary = "<details open><summary>{}: dataset card</summary><pre>{}</pre></details>"
    return "".join(summary.format(_e(label), _e(card)) for label, card in cards if card)


def _by_run(runs: Sequence[Run], body: Callable[[int, Run], str], *, source: bool = False) -> str:
    """Each run's non-empty ``body(i, run)`` under its label (and its ``source``)."""
    return "".join(
        f"<h3>{_e(run.label)}"
        + (f' <span class="muted">({_e(run.source)})</span>' if source else "")
        + f"</h3>{text}"
        for i, run in enumerate(runs)
        if (text := body(i, run))
    )


def _funnel(i: int, run: Run, figs: _Figures) -> str:
    stages = run.dataset_funnel()
    if not stages:
        return ""
    first = stages[0].count or 1
    rows = [[_e(s.name), f"{s.count:,}", f"{100 * s.count / first:.1f}"] for s in stages]
    figure = figs.show(figures.plot_funnel, stages, name=f"funnel_{i}")
    return figure + _table(["stage", "count", "% of first"], rows)


def _domain_rows(models: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str, Mapping[str, Any]]]:
    rows = []
    for model, metrics in models.items():
        kinds = ["domain"] if isinstance(metrics.get("by_domain"), Mapping) else []
        for name, m in slice_groups(metrics, kinds=kinds):
            rows.append((model, name, m))
    return rows


_ACCURACIES = ("accuracy", "test_accuracy")


def _accuracy(runs: Sequence[Run], figs: _Figures) -> str:
    with_accuracy = [r for r in runs if has_measure(r.models, "accuracy")]
    if not with_accuracy:
        return ""
    parts = [figs.show(figures.plot_accuracy, [(r.label, r.models) for r in with_accuracy])]
    rows = [
        [_e(run.label), _e(model), _e(name), *(value_with_interval(m, k, counts=True) for k in _ACCURACIES)]
        for run in with_accuracy
        for model, name, m in _domain_rows(run.models)
    ]
    parts.append(_table(["run", "model", "domain", "accuracy %", "test accuracy %"], rows, numeric_from=3))
    return "".join(parts)


_BBNLI_SECTIONS = {
    "split": (figures.plot_error_split, "error_split", TABLE7_COLUMNS),
    "pro_anti": (figures.plot_pro_anti, "pro_anti", TABLE5_COLUMNS),
}
"""Table 7 (the error split) and Table 5 (pro / anti): the figure, its name, measures and columns."""


def _bbnli_section(kind: str, i: int, run: Run, figs: _Figures) -> str:
    plot, name, columns = _BBNLI_SECTIONS[kind]
    measures = list(columns)
    if not has_measure(run.models, measures[1]):  # cf_pro, or pro_stereotype_bias
        return ""
    total = ["Pro+Anti+Error"] if kind == "split" else []
    rows = [
        [model_key(model), _e(slice_name), *(value_with_interval(m, k, counts=True) for k in measures)]
        + ([_split_total(m)] if kind == "split" else [])
        for model, slice_name, m in _domain_rows(run.models)
    ]
    figure = figs.show(plot, run.label, run.models, name=f"{name}_{i}")
    return figure + _table(["model", "domain", *columns.values(), *total], rows, numeric_from=2)


def _heatmap(i: int, run: Run, figs: _Figures) -> str:
    return figs.show(figures.plot_subtopic_heatmap, run.label, run.models, name=f"subtopic_heatmap_{i}")


def _most_biased(runs: Sequence[Run], glossary: set[str]) -> str:
    """Table 8: per model, the most biased subtopics whose 95% interval excludes no bias."""

    def run_table(_: int, run: Run) -> str:
        rows = []
        for model, metrics in run.models.items():
            for rank, entry in enumerate(biased_subtopics(metrics), start=1):
                m = metrics.get("by_subtopic", {}).get(entry["subtopic"], {})
                measure = str(entry["measure"])
                extra = " ".join(f"{k}={_num(m.get(k))}" for k in ("yes_rate_anti", "n_unparsed") if k in m)
                link = measure_link(measure, glossary=glossary)
                value = value_with_interval(m, measure, counts=True)
                cells = [model_key(model), str(rank), _e(entry["subtopic"]), link, value, _num(entry["n"])]
                rows.append([*cells, _e(extra)])
        headers = ["model", "rank", "subtopic", "measure", "%", "n", "also"]
        return _table(headers, rows, numeric_from=4) if rows else ""

    tables = _by_run(runs, run_table)
    if not tables:
        return ""
    both = measures_sentence([r.metrics for r in runs])
    return (
        (f'<p class="how">{_e(both)}</p>' if both else "")
        + f'<p class="muted">{_e(TABLE8_NOTE)} n counts the items the measure is computed over.</p>'
        + tables
    )


def _other_measures(i: int, run: Run, figs: _Figures) -> str:
    groups = figures.measures_by_unit(run.models)
    if not groups:
        return ""
    measures = [m for group in groups.values() for m in group]
    unit_of = {m: unit for unit, group in groups.items() for m in group}
    headers = [MEASURE_TITLES.get(m, m) + ("" if unit_of[m] == "%" else f" ({unit_of[m]})") for m in measures]
    rows = [
        [model_key(model), _e(name), _e("" if (n := slice_size(m)) is None else n)]  # n, n_rows or n_pairs
        + [value_with_interval(m, k, counts=True) for k in measures]
        for model, metrics in run.models.items()
        for name, m in slice_groups(metrics, kinds=[k for k in slice_kinds(metrics) if k != "subtopic"])
    ]
    return (
        figs.show(figures.plot_generic_measures, run.label, run.models, name=f"measures_{i}")
        + figs.show(figures.plot_bbq_heatmap, run.label, run.models, name=f"bbq_heatmap_{i}")
        + _table(["model", "slice", "n", *headers], rows, numeric_from=2)
    )


def _comparison(comparison: Comparison, glossary: set[str]) -> str:
    if not comparison.rows or len(comparison.columns) < 2:
        return ""
    rows = []
    for row in comparison.rows:
        cells = []
        for i, cell in enumerate(row.cells):
            delta = cell.delta_text()
            text = format_with_interval(cell.value, cell.ci) + (
                "" if delta is None else f' <span class="ci">{delta}</span>'
            )
            if cell.differs:
                mark = "better" if cell.better else "worse" if cell.better is False else ""
                ref = comparison.columns[comparison.references[i]]
                why = "paired interval excludes 0 against" if cell.paired else "interval does not overlap"
                flag = " !" if cell.flagged else ""
                cells.append(f'<span class="diff {mark}" title="{why} {_e(ref)}">{text} ◆{flag}</span>')
            else:
                cells.append(text)
        rows.append([_e(row.slice), measure_link(row.measure, glossary=glossary), *cells])
    note = (
        '<p class="muted">◆ compares a model with the reference (the same model in the first run, or the '
        "first model of its kind), never with no bias: it marks a difference between the two, not a bias (whether "
        'a model is biased is what the <a href="#verdict">verdict</a> says); green = better, '
        "orange = worse by the measure's direction; "
        f"{comparison.n_differences} marked. "
        + _e(" ".join(comparison_notes(comparison)).replace("`", ""))
        + "</p>"
    )
    return note + _table(["slice", "measure", *comparison.columns], rows, numeric_from=2)


def _examples(runs: Sequence[Run], per_category: int) -> str:
    def run_pairs(_: int, run: Run) -> str:
        samples, predictions = run.samples(), run.predictions()
        if not samples or not predictions:
            return ""
        prefer = {model: [s for s, _, _ in most_biased_subtopics(m)] for model, m in run.models.items()}
        pairs = example_pairs(samples, predictions, per_category=per_category, prefer_subtopics=prefer)
        return "".join(
            f'<div class="example"><b>{_e(pair.model)}</b> · {_e(CATEGORY_TITLES[pair.category])} · '
            f'<span class="muted">{_e(pair.domain)} / {_e(pair.subtopic)}</span>'
            f"<p><b>Premise:</b> {_e(pair.premise)}</p>"
            f"<p><b>Pro-stereotype hypothesis:</b> {sensitive(pair.pro_hypothesis)} → "
            f'<span class="label">{_e(pair.pro_label or "no answer")}</span></p>'
            f"<p><b>Anti-stereotype hypothesis:</b> {sensitive(pair.anti_hypothesis)} → "
            f'<span class="label">{_e(pair.anti_label or "no answer")}</span></p></div>'
            for pair in pairs
        )

    shown = _by_run(runs, run_pairs)
    if not shown:
        return ""
    return (
        '<p class="warn">The hypotheses state social stereotypes and may be offensive. They are blurred: '
        'click one to show it, or <button id="reveal-all" type="button">show all</button>.</p>' + shown
    )


def _tp_vs_nli(runs: Sequence[Run], figs: _Figures) -> str:
    """Scatter of TP bias score vs M1 across models, the R² table and item-level agreement."""
    models = [(r.label, r.models) for r in runs]
    table = correlation_table(models)
    agreement = agreement_table(item_agreements(runs))
    if table is None and agreement is None:
        return ""
    parts = [figs.show(plot_tp_vs_nli, models) if table is not None else ""]
    parts += [_paper_table_html(t) for t in (table, agreement) if t is not None]
    return "".join(parts)


def _paper_tables(runs: Sequence[Run]) -> str:
    tables = paper_tables([(r.label, r.source, r.models) for r in runs])
    if not tables:
        return ""
    parts = []
    for table in tables:
        parts.append(_paper_table_html(table))
        for fmt, title in (("md", "Markdown"), ("latex", "LaTeX (booktabs)"), ("csv", "CSV")):
            parts.append(
                f"<details><summary>{title}</summary><pre>{_e(format_table(table, fmt))}</pre></details>"
            )
    return "".join(parts)


def render_report(
    runs: Sequence[Run],
    *,
    compare_runs: bool | None = None,
    plots: bool = True,
    examples_per_category: int = 2,
) -> Report:
    """Render the report of ``runs``; ``compare_runs`` defaults to True for several runs or models
    of one benchmark."""
    figs = _Figures(plots)
    if compare_runs is None:
        several = len(runs) > 1 or any(len(r.models) > 1 for r in runs)
        compare_runs = several and len({r.source for r in runs}) == 1
    comparison = compare(runs) if compare_runs else None
    glossary = glossary_names(runs)

    def by_run(section: Callable[[int, Run, _Figures], str], source: bool = False) -> str:
        return _by_run(runs, lambda i, run: section(i, run, figs), source=source)

    sections: list[tuple[str, str, str]] = [
        ("pro-anti", "Pro vs anti-stereotype bias (Table 5)", by_run(partial(_bbnli_section, "pro_anti"))),
        (
            "error-split",
            "Pro / anti / group-insensitive error (Table 7)",
            by_run(partial(_bbnli_section, "split")),
        ),
        ("measures", "Benchmark measures", by_run(_other_measures, source=True)),
        ("heatmap", "Per-subtopic heat map", by_run(_heatmap)),
        ("most-biased", "Most biased subtopics (Table 8)", _most_biased(runs, glossary)),
        ("comparison", "Comparison", _comparison(comparison, glossary) if comparison is not None else ""),
        ("accuracy", "Accuracy", _accuracy(runs, figs)),
        ("debias", "Before / after debiasing", debias_section(runs)),
        ("card", "Dataset card", _card(runs) + extend_card_html(runs)),
        ("funnel", "Extension funnel", by_run(_funnel)),
        ("tp-nli", "Token probability vs NLI", _tp_vs_nli(runs, figs)),
        ("examples", "Example pairs", _examples(runs, examples_per_category)),
        ("explanations", "Generated explanations (A.7)", explanations_html(runs, glossary=glossary)),
        ("paper-tables", "Paper tables", _paper_tables(runs)),
        ("glossary", "Measures", glossary_html(runs)),
    ]
    verdict = verdict_section([(r.label, r.metrics) for r in runs], glossary=glossary)
    provenance = provenance_html(runs)
    shown = [(sid, title, body) for sid, title, body in sections if body]
    nav = "".join(f'<a href="#{sid}">{_e(title)}</a>' for sid, title, _ in shown)
    nav += '<a href="#provenance">Run configuration and provenance</a>' if provenance else ""
    body = "".join(
        f'<section id="{sid}"><h2>{_e(title)}</h2>{content}</section>' for sid, title, content in shown
    )
    if provenance:
        # Last and collapsed: the settings a reader checks after the answer, not before it.
        body += (
            '<section id="provenance"><details class="provenance"><summary>Run configuration and '
            f"provenance</summary>{provenance}</details></section>"
        )
    notes, caveats = caveats_html(runs)
    verdict_html = f'<section id="verdict"><h2>Verdict</h2>{verdict}</section>' if verdict else ""
    title = "nlibias report: " + ", ".join(r.label for r in runs)
    document = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1>{verdict_html}{notes}<nav>{nav}</nav>{body}<script>{_JS}</script></body></html>\n"
    )
    rendered = ([("verdict", "", "")] if verdict else []) + shown
    rendered += [("provenance", "", "")] if provenance else []
    return Report(html=document, plots=list(figs), sections=[sid for sid, _, _ in rendered], caveats=caveats)


def write_report(
    runs: Sequence[Run], out: str | Path, *, compare_runs: bool | None = None, plots: bool = True
) -> Report:
    """Write the HTML file and each figure as PNG and SVG into ``<stem>_files/`` beside it."""
    out = Path(out)
    report = render_report(runs, compare_runs=compare_runs, plots=plots)
    out.parent.mkdir(parents=True, exist_ok=True)
    if report.plots:  # the figures first, each atomically: the page never names a half-written one
        assets = out.parent / f"{out.stem}{ASSETS_DIR_SUFFIX}"
        assets.mkdir(exist_ok=True)
        for plot in report.plots:
            atomic_write_text(assets / f"{plot.name}.svg", plot.svg)
            with atomic_path(assets / f"{plot.name}.png") as pending:
                pending.write_bytes(plot.png)
    atomic_write_text(out, report.html)
    return report
