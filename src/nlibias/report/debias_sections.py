"""The HTML report's before/after section for a debiasing run (``debias_comparison.json``): a table
per fine-tuned pair, then the mean and min-max across seeds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nlibias.report.html_parts import escape, table
from nlibias.report.load import Run, read_json
from nlibias.report.metric_readers import value_with_interval

COMPARISON_JSON = "debias_comparison.json"
_MEASURES = (("S", "S (higher is better)"), ("delta_p", "ΔP (lower is better)"), ("B", "B (closer to 50)"))


def _changed(comparison: Mapping[str, Any], pair: Mapping[str, Any], key: str) -> bool | None:
    """Whether the seed group holding ``pair`` marks ``key`` as changed (None: not recorded)."""
    for group in comparison.get("seed_groups", []):
        if pair["before"] in group["before"]:
            return bool(group["measures"][key]["changed"])
    return None


def _pair_table(comparison: Mapping[str, Any], pair: Mapping[str, Any]) -> str:
    before, after = (pair["metrics"][role]["overall"] for role in ("before", "after"))
    difference = pair["difference"]["overall"]
    rows = []
    for key, label in _MEASURES:
        changed = _changed(comparison, pair, key)
        mark = "–" if changed is None else "changed" if changed else "no change"
        values = [value_with_interval(m, key) for m in (before, after)]
        rows.append([escape(label), *values, value_with_interval(difference, key, signed=True), mark])
    acc = [pair["accuracy"].get("before"), pair["accuracy"].get("after")]
    if any(isinstance(a, int | float) for a in acc):
        rows.append(
            ["accuracy (eval set)", *(f"{a:.2f}" if isinstance(a, int | float) else "–" for a in acc), "", ""]
        )
    title = f"<h3>{escape(pair['after'])} against {escape(pair['before'])}</h3>"
    return title + table(
        ["measure", "before [95% CI]", "after [95% CI]", "after - before [95% paired CI]", "verdict"], rows
    )


def _seed_table(group: Mapping[str, Any]) -> str:
    rows = []
    for key, label in _MEASURES:
        measure = group["measures"][key]
        cells = []
        for role in ("before", "after", "difference"):
            spread = measure[role]
            mean = spread["mean"]
            cells.append("–" if mean is None else f"{mean:.2f} ({spread['min']:.2f} to {spread['max']:.2f})")
        rows.append([escape(label), *cells, "changed" if measure["changed"] else "no change"])
    seeds = ", ".join(str(s) for s in group["seeds"])
    title = f"<h3>Across {len(group['before'])} seeds ({escape(seeds)}): mean (min to max)</h3>"
    return title + table(["measure", "before", "after", "after - before", "verdict"], rows)


def debias_section_html(comparison: Mapping[str, Any]) -> str:
    """The section's HTML from one ``debias_comparison.json`` ('' when it holds no pair)."""
    pairs: Sequence[Mapping[str, Any]] = comparison["pairs"]
    if not pairs:
        return ""
    min_effect = comparison.get("min_effect", 1.0)
    note = (
        '<p class="muted">Differences from a paired bootstrap over the occupation pairs (the same pairs for '
        "both models, the gate's test), 95% intervals. A change: the paired interval excludes 0 and the "
        f"change is at least {escape(min_effect)} point(s); across seeds, every seed's and the before "
        "and after ranges do not overlap.</p>"
    )
    parts = [_pair_table(comparison, pair) for pair in pairs]
    parts += [_seed_table(g) for g in comparison.get("seed_groups", []) if len(g["before"]) > 1]
    return note + "".join(parts)


def debias_section(runs: Sequence[Run]) -> str:
    """The before/after section of every run that holds a ``debias_comparison.json``."""
    parts = []
    for run in runs:
        comparison = read_json(run.path / COMPARISON_JSON)
        try:
            body = debias_section_html(comparison) if comparison else ""
        except (ValueError, LookupError, TypeError):  # damaged or not ours: not shown
            continue
        if body:
            parts.append((f"<h3>{escape(run.label)}</h3>" if len(runs) > 1 else "") + body)
    return "".join(parts)
