"""Is every text of a matplotlib figure inside it and clear of every other text (from rendered extents)?"""

from __future__ import annotations

from typing import Any

from nlibias.report.figure_kit import agg_canvas

#: Pixels two texts may share (antialiasing and font-metric slack), or stick out of the figure.
TOLERANCE_PX = 1.0


def drawn_texts(fig: Any) -> list[Any]:
    """The figure's texts that are drawn and not empty."""
    from matplotlib.text import Text

    agg_canvas(fig).draw()
    undrawn: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            slack = (high - low) * 1e-9
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                where = tick.get_loc()
                if where is None or not low - slack <= where <= high + slack:
                    undrawn.update({id(tick.label1), id(tick.label2)})
                for label in (tick.label1, tick.label2):
                    if not tick.get_visible() or not label.get_visible():
                        undrawn.add(id(label))
    return [
        text
        for text in fig.findobj(Text)
        if id(text) not in undrawn and text.get_visible() and text.get_text().strip() and _in_shown_axes(text)
    ]


def _in_shown_axes(text: Any) -> bool:
    axes = getattr(text, "axes", None)
    return axes is None or bool(axes.get_visible())


def text_problems(fig: Any) -> list[str]:
    """Every text cut by the figure's edge and every overlapping pair, in words."""
    texts = drawn_texts(fig)
    renderer = fig.canvas.get_renderer()
    figure_box = fig.bbox
    boxes = [(text.get_text(), text.get_window_extent(renderer)) for text in texts]
    problems = []
    for label, box in boxes:
        if (
            box.x0 < figure_box.x0 - TOLERANCE_PX
            or box.y0 < figure_box.y0 - TOLERANCE_PX
            or box.x1 > figure_box.x1 + TOLERANCE_PX
            or box.y1 > figure_box.y1 + TOLERANCE_PX
        ):
            problems.append(f"{label!r} is cut: outside the figure ({_box(box)} vs {_box(figure_box)})")
    for i, (label, box) in enumerate(boxes):
        for other, other_box in boxes[i + 1 :]:
            width = min(box.x1, other_box.x1) - max(box.x0, other_box.x0)
            height = min(box.y1, other_box.y1) - max(box.y0, other_box.y0)
            if width > TOLERANCE_PX and height > TOLERANCE_PX:
                problems.append(f"{label!r} overlaps {other!r} ({width:.0f} x {height:.0f} px)")
    return problems


def _box(box: Any) -> str:
    return f"x {box.x0:.0f}..{box.x1:.0f}, y {box.y0:.0f}..{box.y1:.0f}"
