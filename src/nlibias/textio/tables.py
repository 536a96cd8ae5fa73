"""Tables as aligned text and as GitHub Markdown: numbers with two decimals, right-aligned.

>>> print(render_table(["a", "b"], [["x", 1.5], ["yy", None]]))
a  |    b
---+-----
x  | 1.50
yy |    -
>>> print(markdown_table(["a", "b"], [["x|y", 1.5], ["z", None]]))
| a | b |
|---|---:|
| x\\|y | 1.50 |
| z | – |
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str | None = None) -> str:
    text_rows = [[format_cell(v, missing="-") for v in row] for row in rows]
    numeric = [numeric_column(rows, i) for i in range(len(headers))]
    widths = [max([len(h)] + [len(r[i]) for r in text_rows]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if numeric[i] else v.ljust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ]
        return " | ".join(parts).rstrip()

    out = [line(list(headers)), "-+-".join("-" * w for w in widths)]
    out.extend(line(r) for r in text_rows)
    if title:
        out.insert(0, title)
    return "\n".join(out)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    align = ["---:" if numeric_column(rows, i) else "---" for i in range(len(headers))]
    lines = [line(headers), "|" + "|".join(align) + "|"]
    lines.extend(line([format_cell(v, missing="–") for v in row]) for row in rows)
    return "\n".join(lines)


def format_cell(value: Any, *, missing: str = "–") -> str:
    if value is None:
        return missing
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def numeric_column(rows: Sequence[Sequence[Any]], i: int) -> bool:
    """Column ``i`` holds numbers (not booleans), missing values and blanks aside."""
    values = [row[i] for row in rows if row[i] is not None and row[i] != ""]
    return bool(values) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
