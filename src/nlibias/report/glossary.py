"""The report's glossary: each declared measure present, with its meaning, direction, range and
citation, anchored at ``#measure-NAME``."""

from __future__ import annotations

import math
from collections.abc import Sequence

from nlibias.metrics.meta import ALL_MEASURES
from nlibias.report.explanation_sections import explanation_measures
from nlibias.report.html_parts import escape as _e
from nlibias.report.html_parts import table as _table
from nlibias.report.load import Run
from nlibias.report.metric_readers import overall_of
from nlibias.report.verdict_html import measure_anchor
from nlibias.schema.measure_info import MeasureInfo


def glossary_names(runs: Sequence[Run]) -> set[str]:
    """The declared measures in some model's ``overall`` or in a current ``explanations.json``."""
    present = {k for r in runs for m in r.models.values() for k in overall_of(m)}
    present |= explanation_measures(runs)
    return {name for name in ALL_MEASURES if name in present}


#: Why two measures that both count stereotype answers differ (shown when both are present).
_DENOMINATORS = (
    "<p><b>Why <code>pro_stereotype_bias</code> and <code>yes_rate_pro</code> differ.</b> "
    "<code>pro_stereotype_bias</code> counts entailment on pro-stereotype plus contradiction on "
    "anti-stereotype hypotheses over <i>all</i> bias-audit samples (n: pro and anti hypotheses "
    "together, answered or not); <code>yes_rate_pro</code> counts yes over the <i>answered "
    "pro-stereotype</i> hypotheses only (n_pro_answered, half of n when every hypothesis is "
    "answered). A generative model's no is not a contradiction, so its pro_stereotype_bias is then "
    "exactly half its yes_rate_pro (the demo's 0.21 against 0.42).</p>"
)


def glossary_html(runs: Sequence[Run]) -> str:
    """A row per measure of :func:`glossary_names`, in declaration order."""
    names = glossary_names(runs)
    rows = [
        [f'<dfn id="{measure_anchor(info.name)}">{_e(info.name)}</dfn>']
        + [_e(text) for text in (info.description, better_words(info), range_words(info), info.citation)]
        for info in ALL_MEASURES.values()
        if info.name in names
    ]
    if not rows:
        return ""
    note = _DENOMINATORS if {"pro_stereotype_bias", "yes_rate_pro"} <= names else ""
    return _table(["measure", "meaning", "better", "range", "defined in"], rows, numeric_from=99) + note


def better_words(info: MeasureInfo) -> str:
    """Which values are better, in words."""
    if info.direction == "target" and info.target is not None:
        return f"closer to {info.target:g}"
    return {"zero": "closer to 0", "none": "neither"}.get(info.direction, info.direction)


def range_words(info: MeasureInfo) -> str:
    """The range with its unit."""
    low, high = info.range
    span = f"{low:g} or more" if math.isinf(high) else f"{low:g} to {high:g}"
    return f"{span} {info.unit}"
