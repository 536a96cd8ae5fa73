"""HTML builders the report's sections share: escaping, tables, key/value lists."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def escape(value: Any) -> str:
    """``value`` as text that is safe inside HTML (quotes included)."""
    return html.escape(str(value), quote=True)


def sensitive(text: Any) -> str:
    """``text``, escaped, blurred until clicked."""
    return f'<span class="sensitive" tabindex="0" title="click to show">{escape(text)}</span>'


def model_key(key: Any) -> str:
    """A model's key for a table cell, escaped, breakable only after a separator."""
    breakable = re.sub(r"([|/:=_,-])", r"\1<wbr>", escape(key))
    return f'<span class="model-key">{breakable}</span>'


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[str]],
    numeric_from: int = 1,
    *,
    stack: bool = False,
    raw_headers: bool = False,
) -> str:
    """A table in a sideways-scrolling box; cells are HTML, headers escaped unless ``raw_headers``.
    ``stack``: on a narrow screen each row becomes ``header: value`` lines."""
    shown = list(headers) if raw_headers else [escape(h) for h in headers]
    labels = [escape(re.sub(r"<[^>]+>", "", h)) for h in shown]
    head = "".join(f"<th>{h}</th>" for h in shown)

    def cell(i: int, content: str) -> str:
        attrs = ' class="num"' if i >= numeric_from else ""
        if stack and i < len(labels):
            attrs += f' data-label="{labels[i]}"'
        return f"<td{attrs}>{content}</td>"

    body = "".join("<tr>" + "".join(cell(i, c) for i, c in enumerate(row)) + "</tr>" for row in rows)
    kind = ' class="stack"' if stack else ""
    return (
        f'<div class="table-wrap"><table{kind}><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def key_values(values: Mapping[str, Any], *, skip: Iterable[str] = ()) -> str:
    """A mapping as a (nested) definition list, without ``skip`` and empty values."""
    left_out = set(skip)
    items = []
    for key, value in values.items():
        if key in left_out or value is None or value == {} or value == []:
            continue
        if isinstance(value, Mapping):
            shown = key_values(value)
        elif isinstance(value, list | tuple):
            shown = escape(", ".join(str(v) for v in value))
        else:
            shown = escape(value)
        items.append(f"<dt>{escape(key)}</dt><dd>{shown}</dd>")
    return f'<dl class="kv">{"".join(items)}</dl>' if items else ""
