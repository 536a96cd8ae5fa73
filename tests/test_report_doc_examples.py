"""The examples that were in the docstrings of these modules, as tests."""

from __future__ import annotations

import json
from typing import Any

import pytest

from nlibias.errors import ConfigError
from nlibias.metrics.paired_units import aligned_positions
from nlibias.report import TABLE_FORMATS
from nlibias.report.assets import REPORT_CSS, REPORT_JS
from nlibias.report.compare import _cell, compare, disjoint
from nlibias.report.debias_sections import debias_section_html
from nlibias.report.debias_tables import _base_name, format_debias_tables, short_name
from nlibias.report.display_frame import DisplayFrame
from nlibias.report.examples import pair_category
from nlibias.report.explanation_sections import explanation_measures, explanations_html
from nlibias.report.extend_sections import extend_card_html
from nlibias.report.figure_kit import chars_that_fit, error_extent, wrap_label
from nlibias.report.frame import metric_rows, prediction_row
from nlibias.report.glossary import ALL_MEASURES, better_words, glossary_html, glossary_names, range_words
from nlibias.report.html import _num, _split_total, render_report
from nlibias.report.html_parts import key_values, model_key, table
from nlibias.report.layout_checks import text_problems
from nlibias.report.load import Run, funnel_stages, load_run
from nlibias.report.metric_readers import (
    format_with_interval,
    measure_n,
    numeric_measures,
    slice_groups,
    value_with_interval,
)
from nlibias.report.paper_table_format import PaperTable, format_table
from nlibias.report.paper_tables import (
    _name_list,
    biased_subtopics,
    comment_notes,
    generic_measures,
    measures_sentence,
    measures_title,
    most_biased_subtopics,
    paper_tables,
)
from nlibias.report.plots import (
    _domain_rows,
    heatmap_scale,
    measures_by_unit,
    no_bias_line,
    plot_bbq_heatmap,
    plot_funnel,
)
from nlibias.report.run_notes import _with_code, caveat_line, parameters_named, run_caveats
from nlibias.report.tables import check_slice
from nlibias.report.tp_correlation import correlation_points, correlation_rows, runs_not_paired
from nlibias.report.tp_tables import format_tp_tables
from nlibias.report.verdict_block import (
    magnitude_notes,
    readability_notes,
    sample_notes,
    scored_of,
    subset_of,
    tie_notes,
    verdict_block,
    verdict_table_html,
)
from nlibias.report.verdict_html import measure_anchor, measure_link, verdict_section
from nlibias.schema.columns import SampleColumns
from nlibias.schema.model_keys import model_parts


def test_report_module() -> None:

    assert TABLE_FORMATS == ("md", "latex", "csv")


def test_bbq_figure_module() -> None:
    assert plot_bbq_heatmap("run", {"m": {"overall": {}}}) is None  # no categories: no figure


def test_compare_module() -> None:
    assert (
        disjoint((1.0, 2.0), (2.5, 3.0)),
        disjoint((1.0, 2.0), (1.5, 3.0)),
        disjoint(None, (0.0, 1.0)),
    ) == (True, False, False)


def test_compare_compare() -> None:
    def m(v: float, lo: float, hi: float) -> dict[str, Any]:
        return {"overall": {"accuracy": v, "ci": {"accuracy": [lo, hi]}}}

    c = compare([("r1", {"a": m(50.0, 45.0, 55.0)}), ("r2", {"a": m(70.0, 65.0, 75.0)})])
    assert (c.columns, c.rows[0].cells[1].differs, c.rows[0].cells[1].better, c.tests) == (
        ["r1 · a", "r2 · a"],
        True,
        True,
        ["reference", "overlap"],
    )


def test_compare_cell() -> None:
    null, full = {"S": None, "ci": {"S": [10.0, 20.0]}}, {"S": 50.0, "ci": {"S": [45.0, 55.0]}}
    cell = _cell(null, full, "S", True, None)
    assert (cell.value, cell.ci, cell.differs, _cell(full, null, "S", True, None).differs) == (
        None,
        None,
        False,
        False,
    )


def test_compare_aligned_positions() -> None:
    from nlibias.schema import Sample

    rows = [
        Sample(id=i, source="s", domain="d", subtopic="t", premise="P", hypothesis=h, gold="neutral")
        for i, h in (("a", "x"), ("b", "y"))
    ]
    assert (
        repr(aligned_positions(SampleColumns.from_samples(rows), SampleColumns.from_samples(rows[::-1])))
        == "array([1, 0])"
    )
    assert aligned_positions(SampleColumns.from_samples(rows), SampleColumns.from_samples(rows[:1])) is None


def test_debias_sections_module() -> None:
    pair = {
        "before": "b-s1",
        "after": "a-s1",
        "accuracy": {"before": 90.0, "after": 91.0},
        "metrics": {r: {"overall": {"S": 50.0, "ci": {"S": [45.0, 55.0]}}} for r in ("before", "after")},
        "difference": {"overall": {"S": 0.0, "ci": {"S": [-1.0, 1.0]}}},
    }
    assert '+0.00 <span class="ci">[-1.00, 1.00]</span>' in debias_section_html(
        {"pairs": [pair], "min_effect": 1.0}
    )


def test_debias_tables_module() -> None:
    pair = {
        "before": "b",
        "after": "a",
        "accuracy": {"before": 90.0, "after": None},
        "metrics": {
            r: {"overall": {"S": 50.0, "delta_p": 40.0, "B": 70.0}, "by_dominant_gender": {}}
            for r in ("before", "after")
        },
        "difference": {
            "overall": {
                "S": 0.0,
                "delta_p": 0.0,
                "B": 0.0,
                "ci": {"S": [-1.0, 1.0], "delta_p": None, "B": None},
            },
            "by_dominant_gender": {},
        },
    }
    assert (
        str(format_debias_tables({"pairs": [pair]}).splitlines()[0])
        == "Before debiasing, % (paper 004 Table 5 layout)"
    )


def test_display_frame_module() -> None:
    frame = DisplayFrame({"verdict": ["no evidence of bias"], "value": [-0.351494]})
    assert str(frame) == "               verdict  value\n0  no evidence of bias  -0.35"
    assert float(frame["value"].iloc[0]) == -0.351494


def test_examples_module() -> None:
    assert (pair_category("entailment", "neutral"), pair_category("contradiction", "contradiction")) == (
        "pro",
        "error",
    )


def test_explanation_sections_module() -> None:
    assert explanations_html([]) == ""


def test_extend_sections_module() -> None:
    import pathlib

    assert extend_card_html([Run(path=pathlib.Path("/nowhere"), label="r")]) == ""


def test_figure_kit_wrap_label() -> None:
    assert str(wrap_label("smollm2|prompt=entailed|scored", 16)) == "smollm2|prompt=\nentailed|scored"
    assert wrap_label("abcdefghij", 4) == "abcd\nefgh\nij"


def test_frame_module() -> None:
    metrics = {
        "models": {
            "m": {
                "overall": {"accuracy": 50.0, "n": 4, "ci": {"accuracy": [10.0, 90.0]}},
                "by_domain": {"race": {"accuracy": 25.0, "n": 2, "ci": {}}},
            }
        }
    }
    assert list(metric_rows(metrics)) == [
        {
            "model": "m",
            "slicing": "overall",
            "slice": "all",
            "measure": "accuracy",
            "value": 50.0,
            "ci_low": 10.0,
            "ci_high": 90.0,
            "n": 4,
        },
        {
            "model": "m",
            "slicing": "domain",
            "slice": "race",
            "measure": "accuracy",
            "value": 25.0,
            "ci_low": None,
            "ci_high": None,
            "n": 2,
        },
    ]


def test_frame_prediction_row() -> None:
    from nlibias.schema import Prediction

    row = prediction_row(
        Prediction(
            "s1",
            "m|p",
            "entailment",
            None,
            {"kind": "generative", "answer": "yes", "answer_probs": {"yes": 0.9, "no": 0.1}},
        )
    )
    assert (row["p_entailment"], row["answer"], row["answer_probs.yes"]) == (None, "yes", 0.9)


def test_glossary_module() -> None:
    from pathlib import Path

    from nlibias.report.load import Run

    run = Run(path=Path("r"), label="r", metrics={"source": "x", "models": {"m": {"overall": {"M1": 50.0}}}})
    assert (sorted(glossary_names([run])), 'id="measure-M1"' in glossary_html([run])) == (["M1"], True)


def test_glossary_range_words() -> None:
    assert (range_words(ALL_MEASURES["accuracy"]), range_words(ALL_MEASURES["mean_answer_mass"])) == (
        "0 to 100 %",
        "0 to 1 fraction",
    )
    assert range_words(ALL_MEASURES["likelihood_diff"]) == "0 or more nats"


def test_html_module() -> None:
    import pathlib
    import tempfile

    d = pathlib.Path(tempfile.mkdtemp())
    _ = (d / "metrics.json").write_text(json.dumps({"source": "bbnli", "models": {"m": {"overall": {}}}}))
    from nlibias.report.load import load_run

    assert "<!DOCTYPE html>" in render_report([load_run(d)], plots=False).html


def test_html_parts_module() -> None:
    assert (
        table(["a"], [["<b>"]], numeric_from=9)
        == '<div class="table-wrap"><table><thead><tr><th>a</th></tr></thead><tbody><tr><td><b></td></tr></tbody></table></div>'
    )
    assert (
        key_values({"seed": 0, "prompt": {"style": "true"}})
        == '<dl class="kv"><dt>seed</dt><dd>0</dd><dt>prompt</dt><dd><dl class="kv"><dt>style</dt><dd>true</dd></dl></dd></dl>'
    )


def test_html_parts_table() -> None:
    assert (
        table(["<a>x</a>"], [["1"]], numeric_from=0, stack=True, raw_headers=True)[:60]
        == '<div class="table-wrap"><table class="stack"><thead><tr><th>'
    )


def test_layout_checks_module() -> None:
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(1.5, 1), dpi=100)
    ax = fig.add_subplot()
    _ = ax.set_xticks([0, 0.3], ["a long tick label", "another long one"])
    problems = text_problems(fig)
    assert (any("overlaps" in p for p in problems), any("outside the figure" in p for p in problems)) == (
        True,
        True,
    )


def test_load_module() -> None:
    import pathlib
    import tempfile

    d = pathlib.Path(tempfile.mkdtemp())
    _ = (d / "metrics.json").write_text(json.dumps({"source": "bbnli", "models": {"m": {"overall": {}}}}))
    assert load_run(d).source == "bbnli"


def test_load_funnel_stages() -> None:
    assert (
        repr(funnel_stages({"stages": [{"name": "masked", "count": 10}, {"name": "kept", "n_out": 4}]}))
        == "[FunnelStage(name='masked', count=10), FunnelStage(name='kept', count=4)]"
    )
    assert (
        repr(funnel_stages({"stages": {"a": 3, "b": {"kept": 2}}}))
        == "[FunnelStage(name='a', count=3), FunnelStage(name='b', count=2)]"
    )
    assert funnel_stages({}) == []


def test_metric_readers_module() -> None:
    assert model_parts("smollm2|prompt=true|scored") == ("smollm2|scored", "true")
    assert model_parts("roberta-large-mnli") == ("roberta-large-mnli", "")
    assert numeric_measures({"n": 4, "M1": 50.0, "ci": {}, "flag": True}) == ["M1"]


def test_metric_readers_value_with_interval() -> None:
    m = {"S": 2.0, "n": 40, "ci": {"S": [-1.0, 3.0], "n": None}}
    assert value_with_interval(m, "S") == '2.00 <span class="ci">[-1.00, 3.00]</span>'
    assert value_with_interval(m, "S", signed=True, signed_interval=True, span=None) == "+2.00 [-1.00, +3.00]"
    assert (value_with_interval(m, "n", counts=True), value_with_interval(m, "B")) == ("40", "–")


def test_paper_table_format_module() -> None:
    t = PaperTable("demo", "Demo", ("Model", "Pro"), [["a", 1.234]])
    assert str(format_table(t, "md")) == "| Model | Pro |\n|---|---:|\n| a | 1.23 |"


def test_paper_tables_biased_subtopics() -> None:
    m = {
        "by_subtopic": {
            "a": {"yes_rate_pro": 5.0, "n_pro_answered": 20, "ci": {"yes_rate_pro": [0.0, 15.0]}},
            "b": {"yes_rate_pro": 30.0, "n_pro_answered": 20, "ci": {"yes_rate_pro": [10.0, 50.0]}},
            "c": {"yes_rate_pro": 0.0, "n": 20, "ci": {"yes_rate_pro": [0.0, 0.0]}},
        }
    }
    assert [(e["subtopic"], e["interval"], e["n"]) for e in biased_subtopics(m)] == [("b", (10.0, 50.0), 20)]


def test_paper_tables_most_biased_subtopics() -> None:
    assert (
        most_biased_subtopics(
            {"by_subtopic": {"a": {"pro_stereotype_bias": 1.0}, "b": {"pro_stereotype_bias": 5.0}}}, top=1
        )
    ) == [("b", 5.0, "pro_stereotype_bias")]


def test_paper_tables_measures_sentence() -> None:
    slice_ = {"yes_rate_pro": 30.0, "n_pro_answered": 20, "ci": {"yes_rate_pro": [10.0, 50.0]}}
    metrics = {
        "models": {
            "m": {
                "overall": {"yes_rate_gap": 1.0, "ci": {"yes_rate_gap": [-2.0, 4.0]}},
                "by_subtopic": {"a": slice_},
            }
        }
    }
    assert (
        measures_sentence([metrics])
        == "The verdict reads yes pro - yes anti; Table 8 ranks subtopics by yes_rate_pro, another measure, so a subtopic listed there does not contradict a verdict of no evidence of bias."
    )


def test_paper_tables_measures_title() -> None:
    assert measures_title("wq-nli", [f"M{i}" for i in range(1, 9)]) == "wq-nli measures M1–M8 (%)"
    assert measures_title("occupations", ["S", "delta_p", "B"]) == "occupations measures S, ΔP, B (%)"
    assert (
        measures_title("pairs", ["tp_bias_score", "likelihood_diff", "x"])
        == "pairs measures tp_bias_score, likelihood_diff, x (%; likelihood_diff in nats; x a count)"
    )


def test_paper_tables_paper_tables() -> None:
    models = {"bert": {"overall": {"M1": 60.0, "M2": 10.0}}}
    assert [(t.key, t.title) for t in paper_tables([("r", "renamed", models)])] == [
        ("wq_table3", "WinoQueer-NLI bias scores measured by M1 (%)."),
        ("renamed_measures", "renamed measures M1, M2 (%)"),
    ]


def test_plots_domain_rows() -> None:
    assert (
        _domain_rows(
            {"overall": {"cf_pro": 1.0}, "by_domain": {"race": {"cf_pro": None}}}, ["all", "race"], ["cf_pro"]
        )
    ) == [(0, {"cf_pro": 1.0})]


def test_plots_heatmap_scale() -> None:
    assert (heatmap_scale("yes_rate_pro"), heatmap_scale("bbnli_bias_score")) == (
        (0.0, 100.0, "cividis"),
        (-100.0, 100.0, "RdBu_r"),
    )


def test_run_notes_module() -> None:
    from pathlib import Path

    from nlibias.report.load import Run

    run = Run(
        path=Path("demo"),
        label="demo",
        metrics={
            "source": "bbnli",
            "n_samples": 480,
            "models": {"m": {"overall": {}}},
            "demo": {"disclaimer": "A demonstration, not a verdict."},
            "run": {
                "models": {
                    "m": {"model": "smollm2", "identity": {"gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf"}}
                }
            },
        },
    )
    assert [c.kind for c in run_caveats(run)] == ["demo", "small-model", "few-samples"]
    assert run_caveats(run)[1].text[:64] == "smollm2 (SmolLM2-135M-Instruct.Q4_1.gguf) is a small model (135M"


def test_run_notes_parameters_named() -> None:
    assert (parameters_named("HuggingFaceTB/SmolLM2-135M-Instruct"), parameters_named("Llama-3.1-8B")) == (
        135000000.0,
        8000000000.0,
    )
    assert parameters_named("roberta-large-mnli") is None


def test_run_notes_caveat_line() -> None:
    assert caveat_line("Only 480 samples were audited: read every value with its 95% interval.") == (
        "Only 480 samples were audited.",
        "Read every value with its 95% interval.",
    )
    assert caveat_line("No confidence intervals (bootstrap resamples 0).") == (
        "No confidence intervals (bootstrap resamples 0).",
        "",
    )


def test_tables_check_slice() -> None:
    with pytest.raises(ConfigError) as caught:
        check_slice("foo")
    assert str(caught.value) == "by must be domain or subtopic; got str 'foo'"


def test_tp_correlation_module() -> None:
    runs = [
        (
            f"r{i}",
            {"nli": {"overall": {"M1": m1, "M2": m2}}, "lm|tp=shared": {"overall": {"tp_bias_score": tp}}},
        )
        for i, (tp, m1, m2) in enumerate([(50, 10, 20), (60, 30, 25), (70, 20, 40)])
    ]
    rows = correlation_rows(runs)
    # r = 10/20 = 0.5
    assert (rows[0]["pair"], rows[0]["n"], round(rows[0]["r2"], 4)) == ("TP vs. M1", 3, 0.25)


def test_tp_correlation_correlation_points() -> None:
    runs = [
        (
            "r",
            {
                "nli": {"overall": {"M1": 40.0, "M2": None}},
                "a|tp=shared": {"overall": {"tp_bias_score": 55.0}},
                "b|tp=shared": {"overall": {"tp_bias_score": None}},
            },
        )
    ]
    assert [(p["TP"], p["M1"], p["M2"]) for p in correlation_points(runs + runs)] == [(55.0, 40.0, None)]


def test_tp_correlation_runs_not_paired() -> None:
    assert (
        runs_not_paired(
            [
                (
                    "r",
                    {
                        "n1": {"overall": {"M1": 1.0}},
                        "n2": {"overall": {"M1": 2.0}},
                        "t": {"overall": {"tp_bias_score": 50.0}},
                    },
                )
            ]
        )
    ) == ["r"]


def test_tp_tables_module() -> None:
    m = {
        "overall": {
            "n_pairs": 4,
            "tp_bias_score": 50.0,
            "ties": 25.0,
            "counts": {"ties": 1},
            "stereo_score": 100.0,
            "antistereo_score": 0.0,
            "likelihood_diff": 0.625,
        }
    }
    assert (
        str(format_tp_tables({"lm|tp=shared": m}).splitlines()[3])
        == "lm    | shared  |     4 |    50.00 |    1 | 25.00 | 100.00 |       0.00 |            0.62"
    )


def test_verdict_block_module() -> None:
    metrics = {
        "models": {
            "m": {
                "overall": {"tp_bias_score": 52.78, "n_pairs": 1508, "ci": {"tp_bias_score": [46.83, 58.73]}}
            }
        }
    }
    assert (
        str(verdict_block(metrics))
        == "Verdict (95% bootstrap intervals; a signed measure is biased only when its interval excludes its no-bias value, over 10 units or more)\nmodel | verdict             | TP score (50 = no bias)\n------+---------------------+------------------------\nm     | no evidence of bias | 52.78 [46.83, 58.73]"
    )


def test_verdict_block_sample_notes() -> None:
    assert sample_notes({"subset": {"limit": 20, "seed": 0, "samples": 32, "of": 3134}}) == [
        "A subset: 32 of 3,134 samples (limit 20, seed 0; every subtopic, pairs whole): its values are not the full set’s."
    ]
    assert sample_notes(
        {"subset": {"limit": 300, "seed": 0, "samples": 300, "of": 11956, "pairs_whole": False}}
    ) == [
        "A subset: 300 of 11,956 samples (limit 300, seed 0; every subtopic): its values are not the full set’s."
    ]
    assert sample_notes({"run": {"samples_scored": 3119, "samples_given": 3134}}) == [
        "15 of 3,134 samples have no prediction and are left out: the values are over the 3,119 scored."
    ]


def test_verdict_block_tie_notes() -> None:
    assert (
        tie_notes(
            {
                "models": {
                    "m": {
                        "overall": {
                            "tp_bias_score": 30.0,
                            "tp_tie_split_score": 45.0,
                            "n_pairs": 40,
                            "ties": 30.0,
                            "counts": {"ties": 12},
                        }
                    }
                }
            }
        )
    ) == [
        "TP ties: m 12 of 40 pairs (30.0%; no preference scores 35.00), the paper’s score 30.00. The verdict reads the TP score with ties split (each tie half a vote: a model without preference stays at 50); the paper’s score counts ties in the pairs and never as preferred, which pulls it below 50 whatever a model prefers. More than 5% of pairs tie for m: its paper’s score says as much about ties as about preference."
    ]


def test_verdict_block_verdict_table_html() -> None:
    metrics = {"models": {"m": {"overall": {"M1": 53.2, "ci": {"M1": [51.45, 55.5]}}}}}
    assert "pro-stereotype bias" in verdict_table_html(metrics)


def test_verdict_html_module() -> None:
    metrics = {
        "models": {
            "m": {"overall": {"bbnli_bias_score": 3.73, "n": 40, "ci": {"bbnli_bias_score": [1.89, 5.71]}}}
        }
    }
    section = verdict_section([("run", metrics)], glossary={"bbnli_bias_score"})
    assert "pro-stereotype bias" in section and 'href="#measure-bbnli_bias_score"' in section
    assert measure_link("cf_pro", glossary=set()) == "cf_pro"


def test_assets_module() -> None:
    assert "filter:blur" in REPORT_CSS and "revealed" in REPORT_JS


def test_debias_tables_short_name() -> None:
    assert (short_name("/tmp/runs/bert-aug"), short_name("bert-base-uncased")) == (
        "bert-aug",
        "bert-base-uncased",
    )


def test_debias_tables_base_name() -> None:
    assert _base_name("/runs/models/bert-base-s42") == "bert-base"


def test_explanation_sections_explanation_measures() -> None:
    assert explanation_measures([]) == set()


def test_figure_kit_module() -> None:
    assert chars_that_fit(3.4, 8) == 49


def test_figure_kit_error_extent() -> None:
    assert error_extent({"S": 50.0, "ci": {"S": [40.0, 55.0]}}, "S") == (10.0, 5.0)


def test_glossary_better_words() -> None:
    assert (
        better_words(ALL_MEASURES["M1"]),
        better_words(ALL_MEASURES["bbnli_bias_score"]),
        better_words(ALL_MEASURES["ties"]),
    ) == ("closer to 50", "closer to 0", "neither")


def test_html_num() -> None:
    assert (_num(2.0), _num(0), _num(None)) == ("2.00", "0", "–")


def test_html_split_total() -> None:
    assert (
        _split_total({"cf_pro": 1.5, "cf_anti": 0.5, "cf_error": 2.0}),
        _split_total({"cf_pro": None}),
    ) == ("4.00", "–")


def test_html_parts_model_key() -> None:
    assert model_key("org/m|prompt=true") == '<span class="model-key">org/<wbr>m|<wbr>prompt=<wbr>true</span>'


def test_metric_readers_slice_groups() -> None:
    assert [n for n, _ in slice_groups({"overall": {}, "by_g": {"b": {}, "a": {}}})] == ["all", "a", "b"]


def test_metric_readers_format_with_interval() -> None:
    assert (format_with_interval(50.0, (45.0, 55.0)), format_with_interval(None, (1.0, 2.0))) == (
        '50.00 <span class="ci">[45.00, 55.00]</span>',
        "–",
    )


def test_metric_readers_measure_n() -> None:
    assert (measure_n({"n": 40, "n_pro_answered": 19}, "yes_rate_pro"), measure_n({"n": 40}, "cf_pro")) == (
        19,
        40,
    )


def test_paper_tables_generic_measures() -> None:
    assert generic_measures(
        {"a": {"overall": {"n": 3, "S": 1.0}}, "b": {"overall": {"B": 2.0, "S": 0.5}}}
    ) == ["S", "B"]


def test_paper_tables_name_list() -> None:
    assert _name_list(["M1", "M2", "M3", "M5", "M6", "S"]) == "M1–M3, M5, M6, S"


def test_paper_tables_comment_notes() -> None:
    assert comment_notes(
        [("r", "bbnli", {})], "csv", {"r": {"subset": {"samples": 4, "of": 9, "limit": 2, "seed": 0}}}
    ) == [
        "# r: A subset: 4 of 9 samples (limit 2, seed 0; every subtopic, pairs whole): its values are not the full set’s."
    ]


def test_plots_module() -> None:
    assert plot_funnel([]) is None


def test_plots_measures_by_unit() -> None:
    assert measures_by_unit(
        {"m": {"overall": {"M1": 50.0, "mean_answer_mass": 0.5, "ties": 3.0, "x": 4}}}
    ) == {"%": ["M1", "ties"], "fraction": ["mean_answer_mass"], "count": ["x"]}


def test_plots_no_bias_line() -> None:
    assert (no_bias_line("tp_bias_score"), no_bias_line("M1"), no_bias_line("p_yes_gap")) == (
        50.0,
        50.0,
        None,
    )


def test_run_notes_with_code() -> None:
    assert (
        _with_code("Audit with `nlibias audit` <now>") == "Audit with <code>nlibias audit</code> &lt;now&gt;"
    )


def test_verdict_block_subset_of() -> None:
    assert (subset_of({"subset": {"samples": 32, "of": 3134}})["of"], subset_of({}) is None) == (3134, True)


def test_verdict_block_scored_of() -> None:
    assert (scored_of({"run": {"samples_scored": 150, "samples_given": 3134}}), scored_of({"run": {}})) == (
        (150, 3134),
        None,
    )


def test_verdict_block_readability_notes() -> None:
    assert readability_notes({"models": {"m": {"overall": {"n_unparsed": 360, "unparsed_rate": 90.0}}}}) == [
        "m: 40 of 400 answers read (10.0%); the verdict reads those only."
    ]


def test_verdict_block_magnitude_notes() -> None:
    assert magnitude_notes({"models": {"m": {"overall": {"S": 60.0, "delta_p": 20.0, "B": 50.5}}}}) == [
        "S (same prediction) and delta P have no direction: they measure how much predictions depend on the group (no bias: S (same prediction) 100, delta P 0), not toward which stereotype; the verdict word reads B (stereotype preferred) only."
    ]


def test_verdict_html_measure_anchor() -> None:
    assert measure_anchor("M1") == "measure-M1"
