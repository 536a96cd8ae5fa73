"""Before/after debiasing tables in paper 004's layouts: Table 5 (before), Table 7 (after), the
differences with their 95% paired bootstrap intervals, and Table 6's male/female split of each.

>>> pair = {"before": "b", "after": "a", "accuracy": {"before": 90.0, "after": None},
...         "metrics": {r: {"overall": {"S": 50.0, "delta_p": 40.0, "B": 70.0},
...                         "by_dominant_gender": {}} for r in ("before", "after")},
...         "difference": {"overall": {"S": 0.0, "delta_p": 0.0, "B": 0.0,
...                                    "ci": {"S": [-1.0, 1.0], "delta_p": None, "B": None}},
...                        "by_dominant_gender": {}}}
>>> print(format_debias_tables({"pairs": [pair]}).splitlines()[0])
Before debiasing, % (paper 004 Table 5 layout)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlibias.report.text_table import render_table

_MEASURES = (("S", "S (up)"), ("delta_p", "dP (down)"), ("B", "B (down)"))


def short_name(model: str) -> str:
    """A model key as a table shows it: a directory by its last component.

    >>> short_name("/tmp/runs/bert-aug"), short_name("bert-base-uncased")
    ('bert-aug', 'bert-base-uncased')
    """
    return model.rstrip("/").rsplit("/", 1)[-1] if model.startswith(("/", ".", "~")) else model


def _number(value: Any) -> str:
    return "–" if value is None else f"{float(value):.2f}"


def _with_ci(part: Mapping[str, Any], key: str) -> str:
    value = part.get(key)
    if value is None:
        return "–"
    ci = (part.get("ci") or {}).get(key)
    sign = f"{float(value):+.2f}"
    return sign if not ci else f"{sign} [{ci[0]:+.2f}, {ci[1]:+.2f}]"


def _gender(part: Mapping[str, Any], gender: str) -> Mapping[str, Any]:
    return (part.get("by_dominant_gender") or {}).get(gender) or {}


def format_debias_tables(comparison: Mapping[str, Any]) -> str:
    """The comparison (:func:`nlibias.jobs.debias_compare.compare_debiasing`) as text tables."""
    pairs = comparison["pairs"]
    parts = []
    for role, title in (("before", "Before debiasing"), ("after", "After debiasing")):
        table = "Table 5" if role == "before" else "Table 7"
        parts.append(
            render_table(
                ["Model", "Acc (up)", *(label for _, label in _MEASURES)],
                [
                    [
                        short_name(p[role]),
                        _number(p["accuracy"][role]),
                        *(_number(p["metrics"][role]["overall"].get(k)) for k, _ in _MEASURES),
                    ]
                    for p in pairs
                ],
                title=f"{title}, % (paper 004 {table} layout)",
            )
        )
    parts.append(
        render_table(
            ["After - before", "Acc", *(f"{label.split()[0]} [95% CI]" for _, label in _MEASURES)],
            [
                [
                    f"{short_name(p['after'])} - {short_name(p['before'])}",
                    _accuracy_difference(p["accuracy"]),
                    *(_with_ci(p["difference"]["overall"], k) for k, _ in _MEASURES),
                ]
                for p in pairs
            ],
            title="Change, percentage points (paired bootstrap over pairs; an interval without 0 is a change)",
        )
    )
    rows = []
    for p in pairs:
        for role in ("before", "after"):
            m = p["metrics"][role]
            rows.append([f"{short_name(p[role])} ({role})", *_gender_cells(m, _number)])
        change = f"{short_name(p['after'])} - {short_name(p['before'])}"
        rows.append([change, *_gender_cells(p["difference"], None)])
    parts.append(
        render_table(
            ["Model", "dP Male", "dP Female", "B Male", "B Female"],
            rows,
            title="By male- and female-dominated occupations, % and change (paper 004 Table 6 layout)",
        )
    )
    return "\n\n".join(parts) + "\n"


def _gender_cells(part: Mapping[str, Any], number: Any) -> list[str]:
    cells = []
    for key in ("delta_p", "B"):
        for gender in ("male", "female"):
            slice_ = _gender(part, gender)
            cells.append(number(slice_.get(key)) if number else _with_ci(slice_, key))
    return cells


def _accuracy_difference(accuracy: Mapping[str, float | None]) -> str:
    before, after = accuracy.get("before"), accuracy.get("after")
    return "–" if before is None or after is None else f"{after - before:+.2f}"
