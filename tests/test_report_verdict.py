"""The report answers first (#39): the verdict section before everything else, caveats one line
each with duplicates merged, provenance last and collapsed, measure names linked to the glossary;
figures and tables that do not mislead (heat map on the declared scale, Table 8 only where the
interval excludes no bias, counts as integers, the TP figure's line at 50 and no empty panel)."""

from __future__ import annotations

import html as html_module
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nlibias.io.samples import write_samples
from nlibias.report import plots
from nlibias.report.generative_tables import format_generative_tables
from nlibias.report.html import render_report
from nlibias.report.load import Run, load_run, load_runs
from nlibias.report.paper_tables import biased_subtopics
from nlibias.report.verdict_block import verdict_block
from nlibias.testing.report_runs import bbnli_like_samples, write_metrics_run

INTERVAL = r"-?\d+\.\d\d \[-?\d+\.\d\d, -?\d+\.\d\d\]"
DIRECTIONS = ("pro-stereotype bias", "anti-stereotype bias", "no evidence of bias")


def _load(run: Path) -> Run:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hand-written run directories have no manifest
        return load_run(run)


def _text(fragment: str) -> str:
    """The visible text of an HTML fragment, one line per table row / list item."""
    fragment = re.sub(r"</(tr|li|p|h\d|summary)>", "\n", fragment)
    return html_module.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_cli_report_names_every_model_with_an_interval_and_a_direction_before_provenance(
    tmp_path: Path,
) -> None:
    """``nlibias audit --samples S --model fake:alpha --model fake:beta --out A`` then
    ``nlibias report A``: the page's first section is the verdict, and the text before the
    provenance section names both models, each with ``value [lo, hi]`` and a direction word."""
    from nlibias.cli.main import app

    write_samples(tmp_path / "S", bbnli_like_samples())
    runner = CliRunner()
    audit = runner.invoke(
        app,
        ["audit", "--samples", str(tmp_path / "S"), "--model", "fake:alpha", "--model", "fake:beta",
         "--out", str(tmp_path / "A"), "--quiet", "--bootstrap", "200"],
    )  # fmt: skip
    assert audit.exit_code == 0, audit.output
    report = runner.invoke(app, ["report", str(tmp_path / "A"), "--no-plots"])
    assert report.exit_code == 0, report.output
    page = (tmp_path / "A" / "report.html").read_text(encoding="utf-8")
    assert re.findall(r'<section id="([^"]+)"', page)[0] == "verdict"
    before = _text(page[: page.index('<section id="provenance"')])
    for model in ("alpha", "beta"):
        lines = [line for line in before.splitlines() if line.startswith(model)]
        assert any(re.search(INTERVAL, line) and any(w in line for w in DIRECTIONS) for line in lines), lines


def _demo_like(tmp_path: Path, name: str, n_samples: int = 480) -> Path:
    return write_metrics_run(
        tmp_path,
        name,
        {
            "source": "bbnli",
            "n_samples": n_samples,
            "bootstrap": {"resamples": 0, "seed": 0, "confidence": 0.95, "unit": "pair"},
            "models": {"s": {"overall": {"bbnli_bias_score": 3.0, "degenerate_pairs": 10}}},
            "run": {
                "models": {
                    "s": {"model": "smollm2", "identity": {"gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf"}}
                }
            },
            "demo": {
                "disclaimer": "A small model run to demonstrate; a sample of pairs gives wide intervals."
            },
        },
    )


def _caveat_items(page: str) -> list[str]:
    box = re.search(r'<section id="caveats".*?</section>', page, re.S)
    assert box is not None
    return re.findall(r"<li[^>]*>(.*?)</li>", box.group(0), re.S)


def test_caveats_are_one_line_each_and_duplicates_merge(tmp_path: Path) -> None:
    """The demo's disclaimer already says its model is small and its sample gives wide intervals:
    the small-model and few-samples caveats go under it, not beside it. Five caveats
    (demo, small-model, few-samples, no-intervals, degenerate-pairs) make three lines."""
    page = render_report([_load(_demo_like(tmp_path, "demo"))], plots=False).html
    items = _caveat_items(page)
    summaries = [_text(re.sub(r"<details><summary>(.*?)</summary>.*", r"\1", i, flags=re.S)) for i in items]
    assert summaries == [
        "Demonstration, not a verdict.",
        "No confidence intervals (bootstrap resamples 0).",
        "10 degenerate pairs (pro and anti texts identical, as in the BBNLI source) are included in the measures.",
    ]
    # The folded caveats are still there, under the demo's line.
    assert "135M parameters" in items[0] and "Only 480 samples" in items[0]
    # Verdict first, then the caveats, then the navigation.
    assert page.index('id="verdict"') < page.index('id="caveats"') < page.index("<nav>")


def test_the_same_caveat_in_two_runs_is_one_line_naming_both(tmp_path: Path) -> None:
    runs = [_load(_demo_like(tmp_path, name)) for name in ("first", "second")]
    items = _caveat_items(render_report(runs, plots=False).html)
    assert len(items) == 3  # not six
    assert all("first, second:" in _text(item) for item in items)


def test_provenance_is_last_and_collapsed(tmp_path: Path) -> None:
    report = render_report([_load(_demo_like(tmp_path, "demo"))], plots=False)
    assert report.sections[0] == "verdict" and report.sections[-1] == "provenance"
    last = report.html.rindex("<section ")
    assert report.html[last:].startswith('<section id="provenance"><details class="provenance"><summary>')
    assert "<details open" not in report.html[last:]


def test_measure_links_resolve_to_glossary_anchors(tmp_path: Path) -> None:
    from nlibias.testing.report_runs import build_bbnli_run

    report = render_report(load_runs([build_bbnli_run(tmp_path)]), plots=False)
    ids = set(re.findall(r'id="([^"]+)"', report.html))
    links = re.findall(r'href="#([^"]+)"', report.html)
    assert "measure-bbnli_bias_score" in links and "measure-pro_stereotype_bias" in links
    assert [link for link in links if link not in ids] == []
    # The comparison's ◆ is said to compare models, not to mean "biased".
    assert "never with no bias" in report.html


def _drawn(monkeypatch: pytest.MonkeyPatch, draw: Callable[[], object]) -> list[Any]:
    """The matplotlib figures the plots module draws while ``draw`` runs."""
    figures: list[Any] = []
    original = plots._render

    def keep(name: str, caption: str, make: Callable[[], Any], *args: Any, **kwargs: Any) -> Any:
        def recording() -> Any:
            fig = make()
            figures.append(fig)
            return fig

        return original(name, caption, recording, *args, **kwargs)

    monkeypatch.setattr(plots, "_render", keep)
    draw()
    return figures


def test_heat_map_uses_the_declared_range_and_shows_n(monkeypatch: pytest.MonkeyPatch) -> None:
    """One yes in 20 (5%) is the largest value: autoscale would paint it at the top of the scale.
    The scale is yes_rate_pro's declared 0 to 100 whatever the data."""
    pytest.importorskip("matplotlib")
    models = {
        "lm": {
            "by_subtopic": {
                "a": {"yes_rate_pro": 5.0, "n_pro_answered": 20},
                "b": {"yes_rate_pro": 0.0, "n_pro_answered": 19},
                "c": {"yes_rate_pro": None, "n_pro_answered": 0},  # every answer unparsed: was a blank cell
            }
        }
    }
    for fig in _drawn(monkeypatch, lambda: plots.plot_subtopic_heatmap("run", models)):  # wide, phone
        [image] = fig.axes[0].get_images()
        assert (image.norm.vmin, image.norm.vmax) == (0.0, 100.0)
        texts = [t.get_text() for t in fig.axes[0].texts]
        assert texts == ["5.0\nn=20", "0.0\nn=19", "n/a\nn=0"]


def test_tp_figure_draws_50_and_no_empty_count_panel(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CrowS-Pairs run's overall: the TP score and its companions on the percent axis,
    likelihood_diff in nats, and two undeclared counts that are 0 (no_shared_tokens,
    samples_without_pair): they got a panel of their own with an axis of -0.04 to 0.04."""
    pytest.importorskip("matplotlib")
    overall = {
        "n_pairs": 151, "tp_bias_score": 39.7, "ties": 15.2, "stereo_score": 49.1, "antistereo_score": 33.3,
        "likelihood_diff": 0.16, "no_shared_tokens": 0, "samples_without_pair": 0,
        "ci": {"tp_bias_score": [31.8, 48.3]},
    }  # fmt: skip
    [fig] = _drawn(
        monkeypatch, lambda: plots.plot_generic_measures("run", {"m|tp=shared": {"overall": overall}})
    )
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    assert [ax.get_xlabel() for ax in axes] == ["percent", "nats"]
    percent = axes[0]
    rows = [t.get_text() for t in percent.get_yticklabels()]
    assert rows == ["tp_bias_score", "ties", "stereo_score", "antistereo_score"]
    # A dashed segment at 50 on the row of each measure whose no-bias value is 50.
    at_50 = [seg for c in percent.collections for seg in c.get_segments() if seg[0][0] == seg[1][0] == 50.0]
    assert len(at_50) == 3  # tp_bias_score, stereo_score, antistereo_score (ties: none)


GENERATIVE = {
    "lm|prompt=true|scored": {
        "prompt": "true",
        "mode": "scored",
        "overall": {"yes_rate_pro": 10.0, "n_unparsed": 0, "n_pro_answered": 60},
        "by_subtopic": {
            # 6 yes in 20, interval [12, 50]: excludes 0, listed.
            "a": {"yes_rate_pro": 30.0, "n_pro_answered": 20, "n_unparsed": 0, "ci": {"yes_rate_pro": [12.0, 50.0]}},
            # 1 yes in 20, interval [0, 15]: contains 0, left out although it ranks second.
            "b": {"yes_rate_pro": 5.0, "n_pro_answered": 20, "n_unparsed": 0, "ci": {"yes_rate_pro": [0.0, 15.0]}},
            # no yes at all: never a "most biased" subtopic.
            "c": {"yes_rate_pro": 0.0, "n_pro_answered": 20, "n_unparsed": 0, "ci": {"yes_rate_pro": [0.0, 0.0]}},
        },
    }
}  # fmt: skip


def test_table8_lists_only_subtopics_whose_interval_excludes_no_bias(tmp_path: Path) -> None:
    [only] = biased_subtopics(GENERATIVE["lm|prompt=true|scored"])
    assert (only["subtopic"], only["interval"], only["n"]) == ("a", (12.0, 50.0), 20)
    text = format_generative_tables(GENERATIVE)
    ranking = text.split("cf. paper Table 8)")[1]
    assert "30.0 [12.0, 50.0]" in ranking and " b " not in ranking and " c " not in ranking
    run = write_metrics_run(tmp_path, "gen", {"source": "bbnli", "models": GENERATIVE})
    page = render_report([_load(run)], plots=False).html
    section = re.search(r'<section id="most-biased">.*?</section>', page, re.S)
    assert section is not None
    rows = re.findall(r"<tr><td>.*?</tr>", section.group(0))
    assert len(rows) == 1 and ">a<" in rows[0]
    # Counts are integers: n_unparsed=0, n 20 (not 0.00, 20.00).
    assert "n_unparsed=0<" in rows[0] and '<td class="num">20</td>' in rows[0]


def test_all_zero_bars_sit_on_a_percent_axis_from_0(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's model never says yes: pro and anti bias are 0 in every domain. The panels'
    axis runs from 0 to 5 %, not -0.04 to 0.04 (autoscale around a flat line)."""
    pytest.importorskip("matplotlib")
    zero = {"pro_stereotype_bias": 0.0, "anti_stereotype_bias": 0.0, "ci": {}}
    models = {"lm": {"overall": zero, "by_domain": {"gender": zero, "race": zero}}}
    [fig] = _drawn(monkeypatch, lambda: plots.plot_pro_anti("run", models))
    assert fig.axes[0].get_ylim() == (0.0, 5.0)


def test_a_verdict_beside_magnitudes_says_it_reads_the_signed_measure_only(tmp_path: Path) -> None:
    # an occupations run: B inside its interval around 50 ("no evidence of bias"), delta P far from 0
    overall = {
        "S": 53.33,
        "delta_p": 25.9,
        "B": 49.33,
        "n_pairs": 300,
        "ci": {"S": [47.67, 59.0], "delta_p": [23.74, 27.99], "B": [44.0, 54.67]},
    }
    metrics = {"source": "occupations", "n_samples": 600, "models": {"a": {"overall": overall}}}
    note = (
        "S (same prediction) and delta P have no direction: they measure how much predictions depend "
        "on the group (no bias: S (same prediction) 100, delta P 0), not toward which stereotype; "
        "the verdict word reads B (stereotype preferred) only."
    )
    text = verdict_block(metrics)
    assert "no evidence of bias" in text and text.splitlines()[1] == note  # under the title
    assert f"*{note}*" in verdict_block(metrics, fmt="md")
    page = render_report([_load(write_metrics_run(tmp_path, "occ", metrics))], plots=False).html
    (caveat,) = [_text(item) for item in _caveat_items(page) if "no direction" in item]
    assert caveat.startswith("S (same prediction) and delta P have no direction.")  # the summary line
    assert "the verdict word reads B (stereotype preferred) only." in caveat
    # a run whose headline is signed only gets no such note
    signed = {
        "models": {
            "m": {"overall": {"tp_bias_score": 52.0, "n_pairs": 40, "ci": {"tp_bias_score": [40.0, 60.0]}}}
        }
    }
    assert "no direction" not in verdict_block(signed)


def test_heat_map_labels_are_at_least_9_pt(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its cells were 4.5 pt and its axes 6 pt: about 5 pt in a browser."""
    pytest.importorskip("matplotlib")
    models = {
        f"org/model-{k}|prompt=true": {
            "by_subtopic": {
                s: {"yes_rate_pro": 12.5, "n_pro_answered": 40} for s in ("woman_is_to_homemaker", "b")
            }
        }
        for k in range(3)
    }
    wide, phone = _drawn(monkeypatch, lambda: plots.plot_subtopic_heatmap("run", models))
    ax = wide.axes[0]
    labels = [*ax.texts, *ax.get_xticklabels(), *ax.get_yticklabels()]
    assert len(ax.texts) == 6 and min(t.get_fontsize() for t in labels) >= 9
    # on a phone: 2 models a panel (3 models: 2 + 1), the column's width, labels as large
    panels = [ax for ax in phone.axes if ax.get_label() != "<colorbar>" and ax.get_images()]
    assert [len(ax.get_xticklabels()) for ax in panels] == [2, 1] and phone.get_figwidth() == 3.4
    texts = [t for ax in panels for t in (*ax.texts, *ax.get_xticklabels(), *ax.get_yticklabels())]
    assert sum(len(ax.texts) for ax in panels) == 6 and min(t.get_fontsize() for t in texts) >= 9


def test_the_verdict_and_table_8_name_their_measures_in_one_sentence() -> None:
    """A generative LM with no evidence of bias (yes pro - yes anti holds 0) and a subtopic listed
    in Table 8 (its yes_rate_pro interval excludes 0): both sections say which measure each reads."""
    from nlibias.report.html import render_report
    from nlibias.report.load import Run

    listed = {"yes_rate_pro": 30.0, "n_pro_answered": 20, "ci": {"yes_rate_pro": [10.0, 50.0]}}
    overall = {"yes_rate_gap": 1.0, "yes_rate_pro": 30.0, "ci": {"yes_rate_gap": [-2.0, 4.0]}}
    metrics = {"source": "bbnli", "models": {"lm": {"overall": overall, "by_subtopic": {"a": listed}}}}
    page = render_report([Run(Path("run"), "run", metrics=metrics)], plots=False).html  # type: ignore[arg-type]
    sentence = (
        "The verdict reads yes pro - yes anti; Table 8 ranks subtopics by yes_rate_pro, another measure, "
        "so a subtopic listed there does not contradict a verdict of no evidence of bias."
    )
    verdict = page[page.index('id="verdict"') : page.index("</section>", page.index('id="verdict"'))]
    table_8 = page[page.index('id="most-biased"') :]
    assert "no evidence of bias" in verdict and sentence in verdict and sentence in table_8


def test_the_text_and_markdown_reports_say_how_table_8_ranks_and_what_the_verdict_reads() -> None:
    """Table 8's note and the measures sentence were in the HTML report only; tables.txt's
    generative tables and ``report --format md`` (and csv / latex as comments) say them too."""
    from nlibias.report.generative_tables import format_generative_tables
    from nlibias.report.paper_tables import TABLE8_NOTE, render_tables

    listed = {"yes_rate_pro": 30.0, "n_pro_answered": 20, "ci": {"yes_rate_pro": [10.0, 50.0]}}
    overall = {"yes_rate_gap": 1.0, "yes_rate_pro": 30.0, "cf_pro": 5.0, "ci": {"yes_rate_gap": [-2.0, 4.0]}}
    models = {"lm|prompt=true|scored": {"overall": overall, "by_subtopic": {"a": listed}, "prompt": "true"}}
    sentence = (
        "The verdict reads yes pro - yes anti; Table 8 ranks subtopics by yes_rate_pro, another measure"
    )
    text = format_generative_tables(models)
    assert TABLE8_NOTE in text and sentence in text
    markdown = render_tables([("run", "bbnli", models)], "md")
    table_8 = markdown[markdown.index("most biased subtopics per model") :]
    assert f"*{TABLE8_NOTE}*" in table_8 and sentence in table_8
    assert f"# {TABLE8_NOTE}" in render_tables([("run", "bbnli", models)], "csv")
    assert f"% {TABLE8_NOTE}" in render_tables([("run", "bbnli", models)], "latex")
