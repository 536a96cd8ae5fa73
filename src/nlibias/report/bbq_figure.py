"""BBQ's bias scores as the paper's Figure 3: a heat map per condition (s_AMB, s_DIS), categories
down, models across, on the full signed scale."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from nlibias.metrics.bbq import BBQ_MEASURES
from nlibias.report.figure_kit import WIDE_WIDTH_IN, Plot, chars_that_fit, new_figure, render, wrap_label
from nlibias.report.metric_readers import is_number

PANELS = (("bbq_s_amb", "Ambiguous (s_AMB)"), ("bbq_s_dis", "Disambiguated (s_DIS)"))


def plot_bbq_heatmap(
    label: str, models: Mapping[str, Mapping[str, Any]], *, name: str = "bbq_heatmap"
) -> Plot | None:
    """The Figure 3 heat map of ``models``' BBQ metrics (None when no model has BBQ categories)."""
    categories = sorted(
        {str(c) for m in models.values() for c, s in m.get("by_domain", {}).items() if "bbq_s_amb" in s}
    )
    if not categories:
        return None
    names = list(models)
    grids = {
        measure: [[_value(models[model], category, measure) for model in names] for category in categories]
        for measure, _ in PANELS
    }
    vmin, vmax = BBQ_MEASURES[0].range
    cmap = "RdBu_r"

    def draw() -> Any:
        left = 0.3 + max(len(c) for c in categories) * 6 * 0.62 / 72
        width = max(WIDE_WIDTH_IN * 0.6, left + 1.2 + 2 * 0.7 * len(names))
        fig = new_figure(width, 1.0 + 0.24 * len(categories))
        axes = fig.subplots(1, len(PANELS), sharey=True, squeeze=False).ravel()
        labels = [wrap_label(n, chars_that_fit(0.6, 6)) for n in names]
        image = None
        for ax, (measure, title) in zip(axes, PANELS, strict=True):
            data = np.array(grids[measure], dtype=float)
            image = ax.imshow(data, aspect="auto", cmap=cmap, vmin=vmin, vmax=vmax)
            ax.set_title(title, fontsize=7)
            ax.set_xticks(range(len(names)), labels, fontsize=5.5, rotation=30, ha="right")
            ax.set_yticks(range(len(categories)), categories, fontsize=6)
            for (i, j), value in np.ndenumerate(data):
                text = "n/a" if not np.isfinite(value) else f"{value:.1f}"
                dark = np.isfinite(value) and abs(value) > 0.6 * vmax
                ax.text(j, i, text, ha="center", va="center", fontsize=5, color="white" if dark else "black")
        fig.colorbar(image, ax=list(axes), label="bias score (0 = no bias)", shrink=0.8)
        return fig

    return render(
        name,
        f"BBQ bias scores per category and model, ambiguous | disambiguated, as the paper's Figure 3 "
        f"({label}); above 0: answers follow the stereotype; n/a: undefined.",
        draw,
    )


def _value(metrics: Mapping[str, Any], category: str, measure: str) -> float:
    value = metrics.get("by_domain", {}).get(category, {}).get(measure)
    return float(value) if is_number(value) else float("nan")
