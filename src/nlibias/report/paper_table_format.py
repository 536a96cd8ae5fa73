"""One paper-ready table and its renderings: Markdown, LaTeX booktabs, CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nlibias.textio.tables import format_cell, markdown_table, numeric_column

TABLE_FORMATS = ("md", "latex", "csv")
_LATEX_TITLES = {"ΔP": r"$\Delta P$"}


@dataclass(frozen=True)
class PaperTable:
    """One table: ``rows`` hold text, numbers or ``None`` (shown as a dash)."""

    key: str
    title: str
    headers: tuple[str, ...]
    rows: list[list[Any]]
    group_column: bool = False
    """Column 0 names a group, shown only on its first row."""
    notes: list[str] = field(default_factory=list)


def _grouped(table: PaperTable) -> list[list[Any]]:
    if not table.group_column:
        return [list(r) for r in table.rows]
    out: list[list[Any]] = []
    previous: Any = object()
    for row in table.rows:
        shown = list(row)
        if row[0] == previous:
            shown[0] = ""
        previous = row[0]
        out.append(shown)
    return out


def _latex_escape(text: str) -> str:
    if text in _LATEX_TITLES:
        return _LATEX_TITLES[text]
    replacements = {
        "\\": r"\textbackslash{}",
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
    }
    return "".join(replacements.get(ch, ch) for ch in text)


def _latex(table: PaperTable) -> str:
    spec = "".join("r" if numeric_column(table.rows, i) else "l" for i in range(len(table.headers)))
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(_latex_escape(h) for h in table.headers) + r" \\",
        r"\midrule",
    ]
    previous: Any = object()
    for raw, row in zip(table.rows, _grouped(table), strict=True):
        if (
            table.group_column
            and raw[0] != previous
            and previous is not object()
            and lines[-1] != r"\midrule"
        ):
            lines.append(r"\midrule")
        previous = raw[0]
        lines.append(" & ".join(_latex_escape(format_cell(v)) for v in row) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{_latex_escape(table.title)}}}",
        rf"\label{{tab:{table.key}}}",
        r"\end{table}",
    ]
    return "\n".join(lines)


def csv_text(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """``headers`` and ``rows`` as CSV text."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows(rows)
    return buffer.getvalue().rstrip("\n")


def format_table(table: PaperTable, fmt: str) -> str:
    """Render one table as ``md``, ``latex`` (booktabs) or ``csv``."""
    if fmt == "md":
        return markdown_table(table.headers, _grouped(table))
    if fmt == "latex":
        return _latex(table)
    if fmt == "csv":
        return csv_text(table.headers, [[format_cell(v, missing="") for v in row] for row in table.rows])
    raise ValueError(f"unknown table format {fmt!r}; use one of {', '.join(TABLE_FORMATS)}")
