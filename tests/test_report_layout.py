"""The report's figures are legible at 1, 2 and 6 models with long names: no text cut by the
figure's edge, no two texts overlapping, measures of different units never on one axis.

Checked from matplotlib's rendered text extents (:func:`nlibias.report.layout_checks.text_problems`),
on the figures exactly as the report draws them (``plots._render`` is wrapped to keep each figure).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from nlibias.metrics.meta import ALL_MEASURES
from nlibias.report import plots
from nlibias.report.layout_checks import text_problems

pytest.importorskip("matplotlib", reason="figures need matplotlib (pip install -e .[report])")

LONG_NAMES = [
    "smollm2|prompt=entailed|scored",
    "ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli",
    "ynie/electra-large-discriminator-snli_mnli_fever_anli_R1_R2_R3-nli",
    "ynie/albert-xxlarge-v2-snli_mnli_fever_anli_R1_R2_R3-nli|prompt=true|generated",
    "meta-llama/Llama-3.1-8B-Instruct-Q4_K_M.gguf|prompt=entailed|scored",
    "facebook/bart-large-mnli",
]
DOMAINS = ("gender", "race", "religion")
SUBTOPICS = [f"{d}_subtopic_with_a_long_name_{i}" for d in DOMAINS for i in range(5)]


def _slice(k: int, j: int) -> dict[str, Any]:
    """Values that differ by model ``k`` and slice ``j``; every measure kind the report plots."""
    pro, anti, err = 10.0 + k + j, 5.0 + j, 3.0 + k
    values: dict[str, Any] = {
        "n": 100,
        "accuracy": 100.0 - (pro + anti + err),
        "misprediction_rate": pro + anti + err,
        "cf_pro": pro,
        "cf_anti": anti,
        "cf_error": err,
        "pro_stereotype_bias": pro + err / 2,
        "anti_stereotype_bias": anti + err / 2,
        "bbnli_bias_score": pro - anti,
        "yes_rate_pro": 20.0 + k,
        "yes_rate_anti": 10.0 + j,
        "unparsed_rate": 1.0,
        "mean_p_yes_pro": 30.0 + k,
        "mean_p_yes_anti": 25.0,
        "p_yes_gap": 5.0 + k,
        "mean_answer_mass": 0.4 + 0.05 * k,
        "likelihood_diff": 2.5 + k,
        "M1": 55.0 + k,
        "M2": 40.0,
        "no_shared_tokens": 7 + k,
    }
    values["ci"] = {m: [v - 2.0, v + 2.0] for m, v in values.items() if m in ALL_MEASURES and v >= 2.0}
    return values


def _models(count: int) -> dict[str, dict[str, Any]]:
    return {
        name: {
            "overall": _slice(k, 0),
            "by_domain": {d: _slice(k, j + 1) for j, d in enumerate(DOMAINS)},
            "by_subtopic": {s: _slice(k, j % 4) for j, s in enumerate(SUBTOPICS)},
        }
        for k, name in enumerate(LONG_NAMES[:count])
    }


def _figures(monkeypatch: pytest.MonkeyPatch, draw_all: Callable[[], object]) -> list[tuple[str, Any]]:
    """Every figure the plots module draws while ``draw_all`` runs, with its name."""
    drawn: list[tuple[str, Any]] = []
    original = plots._render

    def keep(name: str, caption: str, draw: Callable[[], Any], *args: Any, **kwargs: Any) -> Any:
        def recording() -> Any:
            fig = draw()
            drawn.append((name, fig))
            return fig

        return original(name, caption, recording, *args, **kwargs)

    monkeypatch.setattr(plots, "_render", keep)
    draw_all()
    return drawn


@pytest.mark.parametrize("count", [1, 2, 6])
def test_no_text_is_cut_or_overlaps(monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    models = _models(count)

    def draw_all() -> None:
        assert plots.plot_accuracy([("run", models)]) is not None
        assert plots.plot_accuracy([("first run", models), ("second run", models)]) is not None
        assert plots.plot_error_split("run", models) is not None
        assert plots.plot_pro_anti("run", models) is not None
        assert plots.plot_subtopic_heatmap("run", models) is not None
        assert plots.plot_generic_measures("run", models) is not None

    figures = _figures(monkeypatch, draw_all)
    assert len(figures) == 7  # the heat map twice: as wide as its models, and a phone's width
    problems = {name: text_problems(fig) for name, fig in figures}
    assert {name: found for name, found in problems.items() if found} == {}


def test_the_check_finds_a_cut_legend_and_overlapping_labels() -> None:
    """The check itself can fail: a legend wider than its figure, two labels on one spot."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2.0, 1.5), dpi=150, layout="constrained")
    ax = fig.add_subplot()
    ax.bar([0, 1], [1, 2], label=LONG_NAMES[2])
    fig.legend(loc="outside upper center")
    ax.text(0.5, 0.5, "one", transform=ax.transAxes)
    ax.text(0.5, 0.5, "two", transform=ax.transAxes)
    problems = text_problems(fig)
    assert any(LONG_NAMES[2] in p and "cut" in p for p in problems)
    assert any("'one' overlaps 'two'" in p for p in problems)


def _axis_measures(fig: Any) -> list[list[str]]:
    """The measure names on each axis of the measures figure (horizontal bars: y tick labels)."""
    from nlibias.report.layout_checks import drawn_texts

    drawn = {id(t) for t in drawn_texts(fig)}
    return [
        [t.get_text() for t in ax.get_yticklabels() if id(t) in drawn and t.get_text()]
        for ax in fig.axes
        if ax.get_label() != "<colorbar>"
    ]


def test_measures_of_different_units_get_their_own_axis(monkeypatch: pytest.MonkeyPatch) -> None:
    models = _models(2)
    [(_, fig)] = _figures(monkeypatch, lambda: plots.plot_generic_measures("run", models))
    axes = _axis_measures(fig)
    # Measures outside BBNLI's own (those have their own charts), by their unit in meta.py:
    # percent rates and scores on one axis; mean_answer_mass (a fraction), likelihood_diff (nats)
    # and no_shared_tokens (a count, declared nowhere) on one axis each.
    percent = ["M1", "M2", "mean_p_yes_anti", "mean_p_yes_pro", "p_yes_gap", "unparsed_rate"]
    percent += ["yes_rate_anti", "yes_rate_pro"]
    assert all(ALL_MEASURES[m].unit == "%" for m in percent)
    expected = [sorted(percent), ["likelihood_diff"], ["mean_answer_mass"], ["no_shared_tokens"]]
    assert sorted(sorted(a) for a in axes) == sorted(expected)
