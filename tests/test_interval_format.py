"""``value_with_interval``: the report's one formatter of a value with its 95% interval, in the
style of each of its callers (debias text tables, debias and explanation HTML sections, the HTML
report's tables), and its reading of a malformed interval (the value alone, never an error)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlibias.report.debias_sections import debias_section_html
from nlibias.report.debias_tables import format_debias_tables
from nlibias.report.metric_readers import value_with_interval

_TEXT_SIGNED = {"signed": True, "signed_interval": True, "span": None}
"""debias_tables: plain text, the value and both bounds signed."""

MALFORMED_CI: list[Any] = [
    {"x": ["a", None]},
    {"x": [1.0]},
    {"x": [1.0, 2.0, 3.0]},
    {"x": [True, 2.0]},
    {"x": "bad"},
    "bad",
    ["x", [1.0, 2.0]],
    7,
]


def test_debias_tables_style() -> None:
    m = {"x": -1.5, "ci": {"x": [-3.0, 0.25]}}
    assert value_with_interval(m, "x", **_TEXT_SIGNED) == "-1.50 [-3.00, +0.25]"
    assert value_with_interval({"x": 2, "ci": {"x": [1, 3]}}, "x", **_TEXT_SIGNED) == "+2.00 [+1.00, +3.00]"


def test_debias_sections_style() -> None:
    m = {"x": 5.0, "ci": {"x": [3.0, 7.0]}}
    assert value_with_interval(m, "x") == '5.00 <span class="ci">[3.00, 7.00]</span>'
    assert value_with_interval(m, "x", signed=True) == '+5.00 <span class="ci">[3.00, 7.00]</span>'
    assert value_with_interval({"x": -0.004, "ci": {"x": [-1.0, 1.0]}}, "x", signed=True) == (
        '-0.00 <span class="ci">[-1.00, 1.00]</span>'
    )


def test_explanation_sections_style() -> None:
    m = {"flip_rate": 12.34, "ci": {"flip_rate": [10.0, 14.96]}}
    shown = value_with_interval(m, "flip_rate", decimals=1, span="muted")
    assert shown == '12.3 <span class="muted">[10.0, 15.0]</span>'
    assert value_with_interval({"flip_rate": 3}, "flip_rate", decimals=1, span="muted") == "3.0"


def test_html_report_style_counts_as_integers() -> None:
    m = {"accuracy": 90.5, "n": 40, "ci": {"accuracy": [88.1, 92.0], "n": [30.0, 50.0]}}
    assert value_with_interval(m, "accuracy", counts=True) == '90.50 <span class="ci">[88.10, 92.00]</span>'
    assert value_with_interval(m, "n", counts=True) == '40 <span class="ci">[30.00, 50.00]</span>'
    assert value_with_interval({"n": 40}, "n") == "40.00"


@pytest.mark.parametrize("value", [None, "12.5", True, [1.0], {"v": 1.0}])
def test_missing_or_non_numeric_value_is_a_dash(value: Any) -> None:
    m = {"ci": {"x": [1.0, 2.0]}} if value is None else {"x": value, "ci": {"x": [1.0, 2.0]}}
    assert value_with_interval(m, "x") == "–"
    assert value_with_interval({}, "x", **_TEXT_SIGNED) == "–"


@pytest.mark.parametrize("ci", MALFORMED_CI)
def test_malformed_interval_gives_the_value_alone(ci: Any) -> None:
    m = {"x": 1.5, "ci": ci}
    assert value_with_interval(m, "x") == "1.50"
    assert value_with_interval(m, "x", **_TEXT_SIGNED) == "+1.50"
    assert value_with_interval(m, "x", decimals=1, span="muted") == "1.5"


def _comparison(ci: Any) -> dict[str, Any]:
    overall = {"S": 50.0, "delta_p": 40.0, "B": 70.0}
    return {
        "min_effect": 1.0,
        "pairs": [
            {
                "before": "m-base",
                "after": "m-aug",
                "accuracy": {"before": 90.0, "after": 91.0},
                "metrics": {
                    role: {"overall": overall, "by_dominant_gender": {}} for role in ("before", "after")
                },
                "difference": {
                    "overall": {"S": 2.0, "delta_p": -1.0, "B": 0.0, "ci": ci},
                    "by_dominant_gender": {"male": {"B": 1.0, "ci": ci}},
                },
            }
        ],
    }


def test_debias_outputs_with_a_well_formed_interval() -> None:
    ci = {"S": [1.0, 3.0], "delta_p": [-2.0, -0.5], "B": None}
    text = format_debias_tables(_comparison(ci))
    assert "+2.00 [+1.00, +3.00]" in text and "-1.00 [-2.00, -0.50]" in text
    assert "+1.00" in text
    html = debias_section_html(_comparison(ci))
    assert '+2.00 <span class="ci">[1.00, 3.00]</span>' in html
    assert '-1.00 <span class="ci">[-2.00, -0.50]</span>' in html


@pytest.mark.parametrize("ci", [{"S": ["a", None]}, {"S": [1.0]}, "bad"])
def test_debias_outputs_survive_a_damaged_interval(ci: Any) -> None:
    """A damaged ``ci`` in ``debias_comparison.json`` shows the values without an interval (the
    former text formatter raised: ValueError, IndexError, AttributeError)."""
    text = format_debias_tables(_comparison(ci))
    change = next(line for line in text.splitlines() if line.startswith("m-aug - m-base"))
    assert "+2.00" in change and "[" not in change
    html = debias_section_html(_comparison(ci))
    assert "+2.00" in html and '+2.00 <span class="ci">' not in html


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.just("x"), inner, max_size=1),
    max_leaves=6,
)


@given(
    value=st.floats(allow_nan=False, allow_infinity=False),
    ci=_JSONISH,
    decimals=st.integers(0, 4),
    signed=st.booleans(),
    signed_interval=st.booleans(),
    span=st.sampled_from([None, "ci", "muted"]),
)
def test_output_starts_with_the_value(
    value: float, ci: Any, decimals: int, signed: bool, signed_interval: bool, span: str | None
) -> None:
    shown = value_with_interval(
        {"x": value, "ci": ci},
        "x",
        decimals=decimals,
        signed=signed,
        signed_interval=signed_interval,
        span=span,
    )
    head = f"{value:{'+' if signed else ''}.{decimals}f}"
    assert shown.startswith(head)
    assert shown == head or shown[len(head)] == " "


@given(
    value=st.floats(allow_nan=False, allow_infinity=False),
    low=st.floats(allow_nan=False, allow_infinity=False),
    high=st.floats(allow_nan=False, allow_infinity=False),
)
def test_a_well_formed_interval_is_shown(value: float, low: float, high: float) -> None:
    shown = value_with_interval({"x": value, "ci": {"x": [low, high]}}, "x", span=None)
    assert shown == f"{value:.2f} [{low:.2f}, {high:.2f}]"
