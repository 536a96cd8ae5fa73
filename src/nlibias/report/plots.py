"""Report figures (matplotlib, Agg) for a paper column: each returns a :class:`Plot`, or ``None`` without data."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from nlibias.metrics.bbq import BBQ_MEASURES
from nlibias.metrics.meta import ALL_MEASURES, MEASURES
from nlibias.metrics.ranking import ranking_measure
from nlibias.report.figure_kit import (
    COLUMN_WIDTH_IN,
    HATCHES,
    OKABE_ITO,
    WIDE_WIDTH_IN,
    Models,
    ModelsByRun,
    Plot,
    chars_that_fit,
    error_bars,
    error_extent,
    legend_below,
    new_figure,
    wrap_label,
)

# looked up at call time, so that a test can wrap plots._render
from nlibias.report.figure_kit import render as _render
from nlibias.report.load import FunnelStage
from nlibias.report.metric_readers import is_number, measure_n, numeric_measures, overall_of, slice_groups


def _domains(series: Sequence[Mapping[str, Any]], measure: str) -> list[str]:
    """The slices (``all`` and each domain) where any of ``series`` has ``measure``, in order."""
    found = (
        n
        for metrics in series
        for n, m in slice_groups(metrics, kinds=["domain"])
        if is_number(m.get(measure))
    )
    return list(dict.fromkeys(found))


_PanelRows = list[tuple[int, Mapping[str, Any]]]
"""One model's bars: ``(position on the x axis, slice)`` pairs."""


def _domain_rows(metrics: Mapping[str, Any], domains: Sequence[str], measures: Sequence[str]) -> _PanelRows:
    """``(position, slice)`` for each of ``domains`` where ``metrics`` has all ``measures``."""
    by_name = dict(slice_groups(metrics, kinds=["domain"]))
    return [
        (j, by_name[d])
        for j, d in enumerate(domains)
        if all(is_number(by_name.get(d, {}).get(k)) for k in measures)
    ]


def plot_accuracy(runs: ModelsByRun) -> Plot | None:
    """Accuracy per model overall and per domain, runs side by side (BBNLI-next Figure 3)."""
    series: list[tuple[str, str, Mapping[str, Any]]] = []
    for label, models in runs:
        for model, metrics in models.items():
            if any(is_number(m.get("accuracy")) for _, m in slice_groups(metrics, kinds=["domain"])):
                series.append((label, model, metrics))
    if not series:
        return None
    domains = _domains([metrics for _, _, metrics in series], "accuracy")
    several_runs = len(runs) > 1
    model_names = list(dict.fromkeys(model for _, model, _ in series))
    labels = list(dict.fromkeys(label for label, _, _ in series))

    def draw() -> Any:
        width_in = COLUMN_WIDTH_IN if len(series) * len(domains) <= 12 else WIDE_WIDTH_IN
        fig = new_figure(width_in, 2.0)
        ax = fig.add_subplot()
        width = 0.8 / len(series)
        handles: list[Any] = []
        for i, (label, model, metrics) in enumerate(series):
            rows = _domain_rows(metrics, domains, ("accuracy",))
            colour = OKABE_ITO[model_names.index(model) % len(OKABE_ITO)]
            hatch = HATCHES[labels.index(label) % len(HATCHES)] if several_runs else ""
            xs = [j - 0.4 + width * (i + 0.5) for j, _ in rows]
            style = {"color": colour, "hatch": hatch, "edgecolor": "#333333", "linewidth": 0.3}
            handles.append(_bars(ax, xs, rows, "accuracy", width, **style))
        slot = (width_in - 0.6) / max(len(domains), 1)
        ax.set_xticks(range(len(domains)), [wrap_label(d, chars_that_fit(slot, 7)) for d in domains])
        ax.set_ylabel("accuracy (%)")
        ax.set_ylim(0, 100)
        names = [f"{model} ({label})" if several_runs else model for label, model, _ in series]
        legend_below(fig, handles, names, max_cols=3)
        return fig

    return _render("accuracy", "Accuracy on bias-audit samples (gold: neutral), 95% bootstrap CIs.", draw)


def _bars(ax: Any, xs: Sequence[float], rows: _PanelRows, measure: str, width: float, **style: Any) -> Any:
    """``measure``'s bars of ``rows`` at ``xs`` with their 95% intervals (none drawn without one)."""
    errors = error_bars([error_extent(m, measure) for _, m in rows])
    return ax.bar(xs, [float(m[measure]) for _, m in rows], width, yerr=errors, capsize=1.5,
                  error_kw={"linewidth": 0.6}, **style)  # fmt: skip


def _small_multiples(models: Models, measures: Sequence[str]) -> tuple[list[str], list[str]]:
    """The models that have every one of ``measures`` in some slice, and the slices to show."""
    names = [
        model
        for model, metrics in models.items()
        if any(all(is_number(m.get(k)) for k in measures) for _, m in slice_groups(metrics, kinds=["domain"]))
    ]
    return names, _domains([models[n] for n in names], measures[0])


def _panel_grid(names: Sequence[str], domains: Sequence[str]) -> Any:
    """One axis per model, titled by its name, sharing the y axis."""
    panel = max(1.7, 0.45 * len(domains) + 0.7)
    cols = max(1, min(len(names), int(WIDE_WIDTH_IN // panel)))
    rows = -(-len(names) // cols)
    width = max(COLUMN_WIDTH_IN, min(WIDE_WIDTH_IN, cols * panel))
    fig = new_figure(width, 0.6 + 1.9 * rows)
    axes = fig.subplots(rows, cols, sharey=True, squeeze=False).ravel()
    slot = (width / cols - 0.4) / max(len(domains), 1)
    for ax, name in zip(axes, names, strict=False):
        ax.set_title(wrap_label(name, chars_that_fit(width / cols - 0.3, 7)), fontsize=7)
        ax.set_xticks(
            range(len(domains)), [wrap_label(d, chars_that_fit(slot, 6)) for d in domains], fontsize=6
        )
        ax.set_xlim(-0.6, len(domains) - 0.4)
    for ax in axes[len(names) :]:
        ax.set_visible(False)
    return fig, axes


def _panel_plot(
    name: str,
    caption: str,
    models: Models,
    measures: Sequence[str],
    draw_panel: Callable[[Any, _PanelRows], list[Any]],
    *,
    ylabel: str,
    legend: Sequence[str],
) -> Plot | None:
    """One panel per model having ``measures``, on a shared percent axis; ``draw_panel(ax, rows)``
    draws a model's bars and returns their legend handles."""
    names, domains = _small_multiples(models, measures)
    if not names:
        return None

    def draw() -> Any:
        fig, axes = _panel_grid(names, domains)
        handles: list[Any] = []
        for ax, model in zip(axes, names, strict=False):
            handles = draw_panel(ax, _domain_rows(models[model], domains, measures))
        axes[0].set_ylabel(ylabel)
        axes[0].set_ylim(0.0, max(axes[0].get_ylim()[1], 5.0))  # at least 5: all-zero bars read as 0 %
        legend_below(fig, handles, legend, max_cols=len(legend))
        return fig

    return _render(name, caption, draw)


def plot_error_split(label: str, models: Models, *, name: str = "error_split") -> Plot | None:
    """Pro / anti / group-insensitive error stacked per domain, a panel per model (Table 7)."""
    parts = ("cf_pro", "cf_anti", "cf_error")

    def stack(ax: Any, rows: _PanelRows) -> list[Any]:
        xs = [j for j, _ in rows]
        bottom = [0.0] * len(xs)
        handles = []
        for part, colour in zip(parts, (OKABE_ITO[5], OKABE_ITO[4], "#BBBBBB"), strict=True):
            values = [float(m[part]) for _, m in rows]
            handles.append(ax.bar(xs, values, 0.7, bottom=bottom, color=colour))
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        ax.set_ylim(0, 100)
        return handles

    caption = f"Misprediction rate split into pro, anti and group-insensitive error ({label})."
    legend = ["pro", "anti", "group-insensitive error"]
    return _panel_plot(name, caption, models, parts, stack, ylabel="% of paired samples", legend=legend)


def plot_pro_anti(label: str, models: Models, *, name: str = "pro_anti") -> Plot | None:
    """Pro- vs anti-stereotype bias per domain with bootstrap CIs, one panel per model (Table 5)."""
    pair = ("pro_stereotype_bias", "anti_stereotype_bias")

    def side_by_side(ax: Any, rows: _PanelRows) -> list[Any]:
        handles = []
        for offset, measure, colour in ((-0.2, pair[0], OKABE_ITO[5]), (0.2, pair[1], OKABE_ITO[4])):
            handles.append(_bars(ax, [j + offset for j, _ in rows], rows, measure, 0.4, color=colour))
        return handles

    caption = f"Pro- vs anti-stereotype bias with 95% bootstrap CIs ({label})."
    legend = ["pro-stereotype", "anti-stereotype"]
    return _panel_plot(name, caption, models, pair, side_by_side, ylabel="% of samples", legend=legend)


def heatmap_scale(measure: str) -> tuple[float, float, str]:
    """``(vmin, vmax, colour map)`` from the measure's declared range, not the data; a signed
    measure gets a diverging map centred on its no-bias value, an open range ends at 100."""
    info = ALL_MEASURES.get(measure)
    low, high = info.range if info is not None else (0.0, 100.0)
    high = 100.0 if high == float("inf") else high
    if info is not None and info.signed and info.neutral is not None and low < info.neutral < high:
        half = max(info.neutral - low, high - info.neutral)
        return info.neutral - half, info.neutral + half, "RdBu_r"
    return float(low), float(high), "cividis"


HEATMAP_LABEL_PT = 9.0
"""The heat map's cell and axis labels, in points."""
PHONE_MODELS_PER_ROW = 2
"""Models side by side in the heat map drawn for a phone (shown below 700 px)."""
_PHONE_SUBTOPIC_CHARS = 14


@dataclass(frozen=True)
class _Heat:
    """What a heat map shows: per subtopic (row) and model (column) the value and its n."""

    subtopics: list[str]
    names: list[str]
    grid: list[list[float]]
    counts: list[list[int | None]]
    measure: str


def plot_subtopic_heatmap(label: str, models: Models, *, name: str = "subtopic_heatmap") -> Plot | None:
    """Per-subtopic heat map of the ranking measure, each cell with its value and n; a phone
    variant in ``Plot.narrow``."""
    groups = [g for m in models.values() if isinstance(g := m.get("by_subtopic"), Mapping)]
    subtopics = sorted({str(s) for g in groups for s in g})
    found = (r for g in groups for m in g.values() if isinstance(m, Mapping) and (r := ranking_measure(m)))
    measure = next(found, None)
    if not subtopics or measure is None:
        return None
    names = list(models)

    def cell(model: str, subtopic: str) -> Mapping[str, Any]:
        m = models[model].get("by_subtopic", {}).get(subtopic, {})
        return m if isinstance(m, Mapping) else {}

    cells = [[cell(model, s) for model in names] for s in subtopics]
    grid = [[float(m[measure]) if is_number(m.get(measure)) else float("nan") for m in row] for row in cells]
    counts = [[measure_n(m, measure) for m in row] for row in cells]
    heat = _Heat(subtopics, names, grid, counts, measure)
    vmin, vmax, _ = heatmap_scale(measure)
    caption = (
        f"{measure} per subtopic and model, % on its full scale {vmin:g} to {vmax:g}, with n ({label}); "
        "n/a: undefined (no answer read)."
    )
    wide = _render(name, caption, lambda: _heatmap_figure(heat, phone=False))
    narrow = _render(f"{name}_phone", caption, lambda: _heatmap_figure(heat, phone=True))
    return replace(wide, narrow=narrow)


def _heatmap_figure(heat: _Heat, *, phone: bool) -> Any:
    """The heat map, every model side by side; for a ``phone``, panels of a few models stacked."""
    size = HEATMAP_LABEL_PT
    vmin, vmax, cmap = heatmap_scale(heat.measure)
    per_row = PHONE_MODELS_PER_ROW if phone else len(heat.names)
    subtopics = [wrap_label(s, _PHONE_SUBTOPIC_CHARS) if phone else s for s in heat.subtopics]
    left = 0.3 + max(len(line) for s in subtopics for line in s.split("\n")) * size * 0.62 / 72
    if phone:
        width = COLUMN_WIDTH_IN
        column = (width - left - 0.25) / min(per_row, len(heat.names))  # the colour bar below
    else:
        column = 0.95
        width = max(COLUMN_WIDTH_IN, left + 1.2 + column * len(heat.names))
    labels = [wrap_label(n, chars_that_fit(column - 0.1, size)) for n in heat.names]
    head = size * 1.3 / 72 * max(label.count("\n") + 1 for label in labels)
    row = max(2.4, 1.2 * max(s.count("\n") + 1 for s in subtopics)) * size / 72  # a value and its n
    chunks = [range(at, min(at + per_row, len(heat.names))) for at in range(0, len(heat.names), per_row)]
    panel = head + row * len(subtopics) + 0.2
    fig = new_figure(width, 1.0 + panel * len(chunks) + 0.5 * phone)
    heights = [panel] * len(chunks) + [0.12] * phone  # a phone's colour bar in a row of its own
    axes = fig.subplots(len(heights), 1, squeeze=False, gridspec_kw={"height_ratios": heights}).ravel()
    data = np.array(heat.grid, dtype=float)
    for ax, columns in zip(axes, chunks, strict=False):
        counts = [[row[j] for j in columns] for row in heat.counts]
        image = _heat_cells(ax, data[:, list(columns)], counts, (vmin, vmax, cmap), size)
        ax.set_xticks(range(len(columns)), [labels[j] for j in columns], fontsize=size)
        ax.set_yticks(range(len(subtopics)), subtopics, fontsize=size)
    bar = {"cax": axes[-1], "orientation": "horizontal"} if phone else {"ax": axes[0], "shrink": 0.8}
    fig.colorbar(image, label=f"{heat.measure} (%), fixed scale", **bar)
    return fig


def _heat_cells(
    ax: Any,
    data: np.ndarray,
    counts: Sequence[Sequence[int | None]] | None,
    scale: tuple[float, float, str],
    size: float,
) -> Any:
    """``data`` as a heat map on ``scale`` (vmin, vmax, colour map), each cell with its value (``n/a``:
    undefined, no answer read or no sample) and n, in a colour readable on the cell; the image."""
    vmin, vmax, cmap = scale
    image = ax.imshow(data, aspect="auto", cmap=cmap, vmin=vmin, vmax=vmax)
    for (i, j), value in np.ndenumerate(data):
        text, colour = "n/a", "grey"
        if np.isfinite(value):
            share = (value - vmin) / (vmax - vmin)
            dark = share > 0.6 if cmap == "cividis" else abs(share - 0.5) < 0.3
            text, colour = f"{value:.1f}", "black" if dark else "white"
        n = None if counts is None else counts[i][j]
        text += "" if n is None else f"\nn={n}"
        ax.text(j, i, text, ha="center", va="center", fontsize=size, color=colour, linespacing=0.9)
    return image


BBQ_PANELS = (("bbq_s_amb", "Ambiguous (s_AMB)"), ("bbq_s_dis", "Disambiguated (s_DIS)"))


def plot_bbq_heatmap(label: str, models: Models, *, name: str = "bbq_heatmap") -> Plot | None:
    """BBQ's bias scores as the paper's Figure 3: a heat map per condition (s_AMB, s_DIS), categories
    down, models across, on the full signed scale (None when no model has BBQ categories)."""
    categories = sorted(
        {str(c) for m in models.values() for c, s in m.get("by_domain", {}).items() if "bbq_s_amb" in s}
    )
    if not categories:
        return None
    names = list(models)

    def value(model: str, category: str, measure: str) -> float:
        found = models[model].get("by_domain", {}).get(category, {}).get(measure)
        return float(found) if is_number(found) else float("nan")

    def draw() -> Any:
        left = 0.3 + max(len(c) for c in categories) * 6 * 0.62 / 72
        width = max(WIDE_WIDTH_IN * 0.6, left + 1.2 + 2 * 0.7 * len(names))
        fig = new_figure(width, 1.0 + 0.24 * len(categories))
        axes = fig.subplots(1, len(BBQ_PANELS), sharey=True, squeeze=False).ravel()
        labels = [wrap_label(n, chars_that_fit(0.6, 6)) for n in names]
        scale = (*BBQ_MEASURES[0].range, "RdBu_r")
        for ax, (measure, title) in zip(axes, BBQ_PANELS, strict=True):
            data = np.array([[value(model, c, measure) for model in names] for c in categories], dtype=float)
            image = _heat_cells(ax, data, None, scale, 5)
            ax.set_title(title, fontsize=7)
            ax.set_xticks(range(len(names)), labels, fontsize=5.5, rotation=30, ha="right")
            ax.set_yticks(range(len(categories)), categories, fontsize=6)
        fig.colorbar(image, ax=list(axes), label="bias score (0 = no bias)", shrink=0.8)
        return fig

    return _render(
        name,
        f"BBQ bias scores per category and model, ambiguous | disambiguated, as the paper's Figure 3 "
        f"({label}); above 0: answers follow the stereotype; n/a: undefined.",
        draw,
    )


#: Axis label per declared unit (``count``: an undeclared number).
UNIT_AXES = {"%": "percent", "fraction": "fraction (0 to 1)", "nats": "nats", "count": "count"}


def measures_by_unit(models: Models) -> dict[str, list[str]]:
    """The models' overall measures outside BBNLI's own, grouped by declared unit."""
    groups: dict[str, list[str]] = {}
    for measure in dict.fromkeys(
        m for metrics in models.values() for m in numeric_measures(overall_of(metrics))
    ):
        if measure not in MEASURES:
            info = ALL_MEASURES.get(measure)
            groups.setdefault(info.unit if info is not None else "count", []).append(measure)
    order = list(UNIT_AXES)
    return dict(sorted(groups.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


def no_bias_line(measure: str) -> float | None:
    """A measure's declared neutral value (or target) unless 0, where the axis has its line."""
    info = ALL_MEASURES.get(measure)
    if info is None:
        return None
    value = info.neutral if info.neutral is not None else info.target
    return None if value is None or value == 0 else float(value)


def _drawn_groups(models: Models) -> dict[str, list[str]]:
    """:func:`measures_by_unit` without all-zero undeclared counts and empty units."""

    def nonzero(measure: str) -> bool:
        values = [m.get("overall", {}).get(measure) for m in models.values()]
        return any(is_number(v) and v != 0 for v in values)

    groups = {
        unit: [m for m in measures if unit != "count" or nonzero(m)]
        for unit, measures in measures_by_unit(models).items()
    }
    return {unit: measures for unit, measures in groups.items() if measures}


def plot_generic_measures(label: str, models: Models, *, name: str = "measures") -> Plot | None:
    """Every overall measure per model as horizontal bars, one axis per unit, dashed no-bias lines."""
    groups = _drawn_groups(models)
    if not groups:
        return None
    names = list(models)

    def draw() -> Any:
        heights = [len(measures) * (0.09 * len(names) + 0.06) + 0.45 for measures in groups.values()]
        fig = new_figure(COLUMN_WIDTH_IN if len(names) <= 2 else 5.0, sum(heights) + 0.5)
        axes = fig.subplots(len(groups), 1, squeeze=False, gridspec_kw={"height_ratios": heights}).ravel()
        handles: list[Any] = []
        for ax, (unit, measures) in zip(axes, groups.items(), strict=True):
            height = 0.8 / len(names)
            handles = []
            for i, model in enumerate(names):
                overall = models[model].get("overall", {})
                values = [float(overall[m]) if is_number(overall.get(m)) else 0.0 for m in measures]
                errors = [error_extent(overall, m) for m in measures]
                handles.append(
                    ax.barh(
                        [j - 0.4 + height * (i + 0.5) for j in range(len(measures))],
                        values,
                        height,
                        xerr=error_bars(errors),
                        capsize=1.0,
                        error_kw={"linewidth": 0.5},
                        color=OKABE_ITO[i % len(OKABE_ITO)],
                    )
                )
            ax.set_yticks(range(len(measures)), measures, fontsize=6.5)
            ax.invert_yaxis()
            ax.axvline(0, color="black", linewidth=0.5)
            for j, measure in enumerate(measures):
                neutral = no_bias_line(measure)
                if neutral is not None:
                    ax.vlines(neutral, j - 0.48, j + 0.48, colors="black", linestyles="dashed", linewidth=0.8)
            ax.set_xlabel(UNIT_AXES.get(unit, unit), fontsize=7)
            ax.locator_params(axis="x", nbins=5)
        legend_below(fig, handles, names, max_cols=3)
        return fig

    return _render(
        name,
        f"Overall measures per model, one axis per unit; a dashed line marks a no-bias value other than 0 ({label}).",
        draw,
    )


def plot_funnel(stages: Sequence[FunnelStage], *, name: str = "funnel") -> Plot | None:
    """Counts kept by each stage of an extension run, as horizontal bars."""
    if not stages:
        return None

    def draw() -> Any:
        fig = new_figure(COLUMN_WIDTH_IN, 0.6 + 0.25 * len(stages))
        ax = fig.add_subplot()
        ys = list(range(len(stages)))[::-1]
        ax.barh(ys, [s.count for s in stages], color=OKABE_ITO[2])
        for y, stage in zip(ys, stages, strict=True):
            ax.text(stage.count, y, f" {stage.count:,}", va="center", fontsize=6)
        ax.set_yticks(ys, [s.name for s in stages])
        ax.set_xlabel("items kept")
        ax.margins(x=0.15)
        return fig

    return _render(name, "Items kept after each stage of the extension run.", draw)
