"""Before/after debiasing text tables in paper 004's layouts (Tables 5, 7, the change, Table 6)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from nlibias.report.metric_readers import value_with_interval
from nlibias.textio.tables import render_table

_MEASURES = (("S", "S (up)"), ("delta_p", "dP (down)"), ("B", "B (50 = none)"))


def short_name(model: str) -> str:
    """A model key as a table shows it (a directory by its last component)."""
    return model.rstrip("/").rsplit("/", 1)[-1] if model.startswith(("/", ".", "~")) else model


def _number(value: Any) -> str:
    return "–" if value is None else f"{float(value):.2f}"


def _base_name(model: str) -> str:
    """A seed's model without its ``-s<seed>`` suffix."""
    return re.sub(r"-s\d+$", "", short_name(model))


def _spread_cell(spread: Mapping[str, Any]) -> str:
    if spread.get("mean") is None:
        return "–"
    return f"{spread['mean']:.2f} ({spread['min']:.2f}–{spread['max']:.2f})"


def _multi_seed(comparison: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [g for g in comparison.get("seed_groups") or [] if len(g["before"]) > 1]


def _role_table(comparison: Mapping[str, Any], role: str) -> str:
    title, table = ("Before debiasing", "Table 5") if role == "before" else ("After debiasing", "Table 7")
    rows = []
    for p in comparison["pairs"]:
        values = [p["accuracy"][role], *(p["metrics"][role]["overall"].get(k) for k, _ in _MEASURES)]
        rows.append([short_name(p[role]), *(_number(v) for v in values)])
    for group in _multi_seed(comparison):
        name = f"{_base_name(group[role][0])}: mean (min–max) of {len(group[role])} seeds"
        spreads = [group["accuracy"][role], *(group["measures"][k][role] for k, _ in _MEASURES)]
        rows.append([name, *(_spread_cell(s) for s in spreads)])
    return render_table(
        ["Model", "Acc (up)", *(label for _, label in _MEASURES)],
        rows,
        title=f"{title}, % (paper 004 {table} layout)",
    )


def _change_table(comparison: Mapping[str, Any]) -> str:
    changed = {
        (p["before"], p["after"]): g["measures"]
        for g in comparison.get("seed_groups") or []
        if len(g["before"]) == 1
        for p in comparison["pairs"]
        if p["before"] == g["before"][0]
    }
    rows = []
    for p in comparison["pairs"]:
        marks = changed.get((p["before"], p["after"]))
        cells = [
            _change(p["difference"]["overall"], k) + (" *" if marks and marks[k]["changed"] else "")
            for k, _ in _MEASURES
        ]
        name = f"{short_name(p['after'])} - {short_name(p['before'])}"
        rows.append([name, _difference(p["accuracy"].get("before"), p["accuracy"].get("after")), *cells])
    for group in _multi_seed(comparison):
        name = f"{_base_name(group['after'][0])} - {_base_name(group['before'][0])}: "
        name += f"mean [min, max] of {len(group['before'])} seeds"
        accuracy = _difference(
            group["accuracy"]["before"].get("mean"), group["accuracy"]["after"].get("mean")
        )
        rows.append([name, accuracy, *(_spread_change(group["measures"][k]) for k, _ in _MEASURES)])
    return render_table(
        ["After - before", "Acc", *(f"{label.split()[0]} [95% CI]" for _, label in _MEASURES)],
        rows,
        title="Change, percentage points (paired bootstrap over pairs, 95% CI per seed; across seeds: mean "
        "[min, max]; * marks a change: every seed's interval excludes 0 on one side, every seed's change "
        f"is at least {_min_effect(comparison):g} point(s), and the before and after values' min-max "
        "ranges across seeds do not overlap)",
    )


def _min_effect(comparison: Mapping[str, Any]) -> float:
    """The smallest change marked (1 point where not recorded)."""
    value = comparison.get("min_effect")
    return float(value) if isinstance(value, int | float) else 1.0


def _change(m: Mapping[str, Any], key: str) -> str:
    """A change and its interval, both signed, as plain text."""
    return value_with_interval(m, key, signed=True, signed_interval=True, span=None)


def _spread_change(measure: Mapping[str, Any]) -> str:
    spread = measure["difference"]
    if spread.get("mean") is None:
        return "–"
    mark = " *" if measure.get("changed") else ""
    return f"{spread['mean']:+.2f} [{spread['min']:+.2f}, {spread['max']:+.2f}]{mark}"


def _difference(before: float | None, after: float | None) -> str:
    return "–" if before is None or after is None else f"{after - before:+.2f}"


def format_debias_tables(comparison: Mapping[str, Any]) -> str:
    """A debiasing comparison as text tables: a row per fine-tuned model (per seed), and the mean
    and min–max across seeds."""
    pairs = comparison["pairs"]
    parts = [_role_table(comparison, "before"), _role_table(comparison, "after"), _change_table(comparison)]
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
            slice_ = part.get("by_dominant_gender", {}).get(gender, {})
            cells.append(number(slice_.get(key)) if number else _change(slice_, key))
    return cells
