"""What every report figure shares: :class:`Plot`, palette, widths, style, rendering, label helpers."""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nlibias.report.metric_readers import interval, is_number

Models = Mapping[str, Mapping[str, Any]]
"""A run's metrics per model (``metrics.json``'s ``models``)."""
ModelsByRun = Sequence[tuple[str, Models]]
"""Each run's label with its metrics per model."""

#: Okabe & Ito (2008) colour-blind-safe palette (black last).
OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000")
COLUMN_WIDTH_IN = 3.4
WIDE_WIDTH_IN = 7.0
HATCHES = ("", "//", "..", "xx", "\\\\", "++")


@dataclass(frozen=True)
class Plot:
    """One figure: ``name`` is a file stem (``accuracy``), ``svg`` the SVG document, ``png`` bytes."""

    name: str
    caption: str
    svg: str
    png: bytes
    width_in: float = COLUMN_WIDTH_IN
    narrow: Plot | None = None
    """The figure drawn for a phone's width, where it has one."""


def new_figure(width: float, height: float) -> Any:
    """A matplotlib (Agg) figure of ``width`` x ``height`` inches, 150 dpi, constrained layout."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=150, layout="constrained")


def report_style() -> Any:
    """The rc settings of every report figure: 8 pt text, SVG text kept as text, no top/right spines."""
    return {
        "font.size": 8,
        "axes.titlesize": 8,
        "axes.labelsize": 8,
        "xtick.labelsize": 7,
        "ytick.labelsize": 7,
        "legend.fontsize": 7,
        "svg.fonttype": "none",
        "svg.hashsalt": "nlibias",
        "axes.spines.top": False,
        "axes.spines.right": False,
    }


def render(name: str, caption: str, draw: Callable[[], Any]) -> Plot:
    """The :class:`Plot` of the figure ``draw()`` returns; the same data gives the same SVG bytes."""
    import matplotlib

    with matplotlib.rc_context(report_style()):
        fig = draw()
        svg_buffer = io.StringIO()
        fig.savefig(svg_buffer, format="svg", metadata={"Date": None})
        png_buffer = io.BytesIO()
        fig.savefig(png_buffer, format="png", dpi=150)
    width = float(fig.get_figwidth())
    return Plot(
        name=name, caption=caption, svg=svg_buffer.getvalue(), png=png_buffer.getvalue(), width_in=width
    )


def error_extent(m: Mapping[str, Any], measure: str) -> tuple[float, float]:
    """How far ``measure``'s interval reaches below and above its value (0, 0 without one)."""
    value = m.get(measure)
    bounds = interval(m, measure)
    if bounds is None or not is_number(value):
        return 0.0, 0.0
    return max(0.0, float(value) - bounds[0]), max(0.0, bounds[1] - float(value))


def error_bars(errors: Sequence[tuple[float, float]]) -> list[list[float]] | None:
    """Error bars for matplotlib, or None when no bar has an interval."""
    if not any(down or up for down, up in errors):
        return None
    return [[e[0] for e in errors], [e[1] for e in errors]]


def wrap_label(text: str, width: int) -> str:
    """``text`` in lines of at most ``width`` characters, broken after ``| / _ - = ,`` or a space."""
    width = max(width, 4)
    if len(text) <= width:
        return text
    lines: list[str] = []
    line = ""
    for piece in re.findall(r"[^|/_\-=, ]*[|/_\-=, ]?", text):
        while len(piece) > width:
            if line:
                lines.append(line)
                line = ""
            lines.append(piece[:width])
            piece = piece[width:]
        if line and len(line) + len(piece.rstrip()) > width:
            lines.append(line)
            line = piece
        else:
            line += piece
    if line:
        lines.append(line)
    return "\n".join(x.rstrip() for x in lines if x.strip())


def chars_that_fit(width_in: float, fontsize: float) -> int:
    """How many characters of ``fontsize`` points fit in ``width_in`` inches (0.62 em each)."""
    return int(width_in * 72 / (fontsize * 0.62))


def agg_canvas(fig: Any) -> Any:
    """The figure's Agg canvas, to measure drawn text."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    return fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)


def legend_below(fig: Any, handles: Sequence[Any], labels: Sequence[str], *, max_cols: int = 4) -> None:
    """A legend below the axes in as many columns as fit; the figure grows by its height."""
    canvas = agg_canvas(fig)
    wrapped = [wrap_label(label, chars_that_fit(fig.get_figwidth() - 0.5, 7)) for label in labels]
    for ncols in range(min(max_cols, len(wrapped)), 0, -1):
        legend = fig.legend(handles, wrapped, frameon=False, ncols=ncols, loc="outside lower center")
        with warnings.catch_warnings():  # a trial legend may squeeze the axes: only its width counts
            warnings.simplefilter("ignore", UserWarning)
            canvas.draw()
        box = legend.get_window_extent()
        if ncols == 1 or (box.x0 >= fig.bbox.x0 and box.x1 <= fig.bbox.x1):
            break
        legend.remove()
    fig.set_figheight(fig.get_figheight() + box.height / fig.dpi + 0.05)
