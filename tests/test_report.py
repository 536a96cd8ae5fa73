"""`nlibias report`: paper tables, comparison, HTML sections for every run shape, CLI."""

from __future__ import annotations

import html as html_module
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nlibias.errors import SourceError
from nlibias.report.compare import compare, disjoint, format_comparison
from nlibias.report.examples import pair_category
from nlibias.report.html import render_report, write_report
from nlibias.report.load import funnel_stages, load_run, load_runs
from nlibias.report.paper_tables import (
    format_table,
    most_biased_subtopics,
    paper_tables,
    render_tables,
    table5,
    table7,
    table8,
    wq_table3,
)
from nlibias.testing.report_runs import (
    HOSTILE_PREMISE,
    build_bbnli_run,
    build_extension_run,
    generative_metrics,
    occupation_metrics,
    wq_nli_metrics,
    write_metrics_run,
)


def _m(**values: float) -> dict[str, Any]:
    return {"n": 10, **values}


# Hand-written metrics: numbers chosen so two-decimal rounding is visible (12.3456 -> 12.35).
HAND = {
    "roberta": {
        "overall": _m(
            pro_stereotype_bias=12.3456,
            anti_stereotype_bias=2.0,
            bbnli_bias_score=10.3456,
            misprediction_rate=30.0,
            cf_pro=10.0,
            cf_anti=5.0,
            cf_error=15.0,
        ),
        "by_domain": {
            "race": _m(
                pro_stereotype_bias=1.0,
                anti_stereotype_bias=0.5,
                bbnli_bias_score=0.5,
                misprediction_rate=4.0,
                cf_pro=1.0,
                cf_anti=1.0,
                cf_error=2.0,
            ),
        },
    }
}


@pytest.fixture(scope="module")
def bbnli_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bbnli_run(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def rendered(bbnli_run: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The one test render with figures (matplotlib is the slow part)."""
    pytest.importorskip("matplotlib", reason="figures need matplotlib (pip install -e .[report])")
    out = tmp_path_factory.mktemp("html") / "report.html"
    report = write_report(load_runs([bbnli_run]), out)
    return out, report


# --- paper tables ---------------------------------------------------------------------------


def test_table5_and_table7_layouts_and_two_decimals() -> None:
    t5, t7 = table5(HAND), table7(HAND)
    assert t5.headers == ("Model", "Domain", "Pro", "Anti", "Aggregate")
    assert t7.headers == ("Model", "Domain", "Mispred", "Pro", "Anti", "Error")
    md = format_table(t5, "md").splitlines()
    assert md[2] == "| roberta | all | 12.35 | 2.00 | 10.35 |"
    assert md[3] == "|  | race | 1.00 | 0.50 | 0.50 |"  # model named once per group, as in the paper
    csv = format_table(t7, "csv").splitlines()
    assert csv == [
        "Model,Domain,Mispred,Pro,Anti,Error",
        "roberta,all,30.00,10.00,5.00,15.00",
        "roberta,race,4.00,1.00,1.00,2.00",
    ]
    # the pair measures are over paired samples, Mispred over all: the caption claimed they sum to it
    assert "sum to the misprediction rate of the paired samples (Mispred is over every sample" in t7.title


def test_latex_is_booktabs_and_escaped() -> None:
    table = table8(generative_metrics()["models"])
    assert table is not None
    latex = format_table(table, "latex")
    for rule in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}{llrlr}"):
        assert rule in latex
    assert r"subtopic\_5" in latex and "subtopic_5" not in latex
    assert r"\%" in latex


def test_table8_ranks_four_subtopics_per_prompt_style() -> None:
    table = table8(generative_metrics()["models"])
    assert table is not None
    assert table.headers == ("LM", "Prompt 1: True hypothesis", "%", "Prompt 2: Entailed hypothesis", "%")
    # yes_rate_pro of subtopic_i is 10 i (+2 for the entailed prompt): top four are 5, 4, 3, 2.
    assert [r[1] for r in table.rows] == ["subtopic_5", "subtopic_4", "subtopic_3", "subtopic_2"]
    assert table.rows[0] == ["smollm2|scored", "subtopic_5", 50.0, "subtopic_5", 52.0]
    assert most_biased_subtopics(HAND) == []  # no by_subtopic: nothing to rank


def test_wq_table3_has_one_m1_column_per_run() -> None:
    raw = wq_nli_metrics(62.53)["models"]
    news = wq_nli_metrics(51.27)["models"]
    table = wq_table3([("Raw", raw), ("News", news)])
    assert table is not None
    assert table.headers == ("Model", "NLI Raw", "NLI News")
    assert format_table(table, "md").splitlines()[2] == "| bert | 62.53 | 51.27 |"


def test_paper_tables_pick_what_each_source_supports() -> None:
    keys = [t.key for t in paper_tables([("r", "wq-nli", wq_nli_metrics()["models"])])]
    assert keys == ["wq_table3", "wq-nli_measures"]
    occupations = paper_tables([("r", "occupations", occupation_metrics()["models"])])
    assert [t.key for t in occupations] == ["occupations_measures"]
    assert occupations[0].headers == ("Model", "Slice", "S", "ΔP", "B")
    assert r"$\Delta P$" in format_table(occupations[0], "latex")
    with pytest.raises(ValueError, match="unknown table format"):
        render_tables([], "html")


# --- comparison -----------------------------------------------------------------------------


def test_differences_marked_only_where_intervals_do_not_overlap() -> None:
    assert disjoint((1.0, 2.0), (2.01, 3.0)) and not disjoint((1.0, 2.0), (2.0, 3.0))

    def run(acc: float, lo: float, hi: float, err: float) -> dict[str, Any]:
        return {
            "m": {
                "overall": {
                    "accuracy": acc,
                    "cf_error": err,
                    "ci": {"accuracy": [lo, hi], "cf_error": [err - 1, err + 1]},
                }
            }
        }

    # accuracy: [40, 50] vs [55, 65] do not overlap -> marked, better (higher is better);
    # cf_error: [9, 11] vs [10, 12] overlap -> not marked although the values differ.
    result = compare([("base", run(45.0, 40.0, 50.0, 10.0)), ("next", run(60.0, 55.0, 65.0, 11.0))])
    cells = {row.measure: row.cells for row in result.rows}
    assert cells["accuracy"][1].differs and cells["accuracy"][1].better is True
    assert not cells["cf_error"][1].differs
    assert not cells["accuracy"][0].differs  # the reference itself
    assert result.n_differences == 1
    assert "60.00*" in format_comparison(result) and "11.00*" not in format_comparison(result)


# --- loading --------------------------------------------------------------------------------


def test_funnel_shapes_and_missing_run(tmp_path: Path) -> None:
    assert [s.count for s in funnel_stages({"stages": {"a": 5, "b": {"n_out": 2}, "c": "x"}})] == [5, 2]
    assert funnel_stages({"stages": []}) == []
    with pytest.raises(Exception, match=r"no metrics\.json"):
        load_run(tmp_path)


def test_pair_categories_follow_table6() -> None:
    e, n, c = "entailment", "neutral", "contradiction"
    expected = {
        (n, n): "correct",
        (n, c): "pro", (e, n): "pro", (e, c): "pro",
        (n, e): "anti", (c, n): "anti", (c, e): "anti",
        (e, e): "error", (c, c): "error",
    }  # fmt: skip
    assert {k: pair_category(*k) for k in expected} == expected
    assert pair_category(None, n) == "unanswered"


# --- HTML -----------------------------------------------------------------------------------


def test_the_phone_heat_map_is_written_beside_the_other_figures(rendered: tuple[Path, Any]) -> None:
    out, report = rendered
    files = {p.name for p in (out.parent / "report_files").iterdir()}
    assert {"subtopic_heatmap_0_phone.svg", "subtopic_heatmap_0_phone.png"} <= files
    names = [plot.name for plot in report.plots]
    assert names.index("subtopic_heatmap_0_phone") == names.index("subtopic_heatmap_0") + 1


def test_bbnli_report_renders_every_bbnli_section(rendered: tuple[Path, Any], tmp_path: Path) -> None:
    out, report = rendered
    # The answer first, then bias before accuracy; the run's provenance last (#39).
    every = ["verdict", "pro-anti", "error-split", "heatmap", "most-biased", "comparison", "accuracy",
             "examples", "paper-tables", "glossary", "provenance"]  # fmt: skip
    # Table 8 lists only subtopics of 10 units or more (the verdict's rule): the rendered run's
    # subtopics hold 3 pairs; a run of 10 per subtopic has it (without figures: no heat map).
    assert report.sections == [s for s in every if s != "most-biased"]
    sections = render_report(load_runs([build_bbnli_run(tmp_path, premises=10)]), plots=False).sections
    assert sections == [s for s in every if s != "heatmap"]
    html = out.read_text(encoding="utf-8")
    # Self-contained: no reference to anything outside the file.
    assert not re.search(r"""(src|href)=["'](?!data:|#)""", html)
    assert "<img" in html and 'src="data:image/svg+xml;base64,' in html
    files = sorted(p.name for p in (out.parent / "report_files").iterdir())
    assert {"accuracy.png", "accuracy.svg", "error_split_0.png", "subtopic_heatmap_0.svg"} <= set(files)
    # Data text is escaped, and hypotheses are blurred until clicked.
    assert "<script>alert" not in html
    assert html_module.escape(HOSTILE_PREMISE) in html
    assert html.count('class="sensitive"') >= 2
    # The split table shows pro + anti + error next to Mispred (they sum to it).
    assert "Pro+Anti+Error" in html


def test_missing_optional_keys_do_not_crash(tmp_path: Path) -> None:
    bare = write_metrics_run(
        tmp_path, "bare", {"source": "x", "models": {"x": {"overall": {"accuracy": 50.0}}}}
    )
    report = render_report(load_runs([bare]), plots=False)
    # No headline measure: no verdict section (nothing to answer with).
    assert report.sections == ["accuracy", "paper-tables", "glossary", "provenance"]
    empty = write_metrics_run(tmp_path, "empty", {"source": "bbnli", "models": {"x": {"overall": {}}}})
    assert render_report(load_runs([empty]), plots=False).sections == ["provenance"]


REGRESSION_RUNS = sorted(
    p.parent for p in (Path(__file__).parent / "fixtures" / "regression").glob("*/*/metrics.json")
)


@pytest.mark.parametrize("run_dir", REGRESSION_RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_regression_run_renders(run_dir: Path) -> None:
    """A run that the audit and score commands wrote renders: the tiny classifier's BBNLI run has
    no pairs, so cf_pro, cf_anti and cf_error are None, and the split table's sum of them once
    raised TypeError (float(None)) there."""
    report = render_report(load_runs([run_dir]), plots=False)
    assert "provenance" in report.sections
    if (run_dir.parent.name, run_dir.name) == ("bbnli-tiny-hf", "audit"):
        assert "Pro+Anti+Error" in report.html


def test_keys_every_metrics_json_has_are_required(tmp_path: Path) -> None:
    """``source``, ``models`` and each model's ``overall`` are in every metrics.json nlibias wrote
    (schema version 0 too): a file without them was not written by nlibias, and is refused."""
    no_source = write_metrics_run(tmp_path, "a", {"models": {"x": {"overall": {"accuracy": 50.0}}}})
    with pytest.raises(SourceError, match=r"a/metrics.json: field source: missing"):
        load_runs([no_source])
    no_overall = write_metrics_run(tmp_path, "b", {"source": "bbnli", "models": {"x": {}}, "run": None})
    with pytest.raises(SourceError, match=r"field models.x.overall: missing; 1 more problem"):
        load_runs([no_overall])


def test_wq_nli_and_occupation_runs_render_their_measures(tmp_path: Path) -> None:
    wq = write_metrics_run(tmp_path, "wq", wq_nli_metrics())
    occ = write_metrics_run(tmp_path, "occ", occupation_metrics())
    report = render_report(load_runs([wq, occ]), plots=False)
    assert "measures" in report.sections and "paper-tables" in report.sections
    assert "error-split" not in report.sections and "examples" not in report.sections
    assert "identity: Queer" in report.html and "predicate_category: sexual" in report.html
    assert "<th>ΔP</th>" in report.html and "<th>M8</th>" in report.html


def test_generative_run_lists_most_biased_subtopics(tmp_path: Path) -> None:
    gen = write_metrics_run(tmp_path, "gen", generative_metrics())
    report = render_report(load_runs([gen]), plots=False)
    assert "most-biased" in report.sections
    assert "yes_rate_pro" in report.html and "Prompt 2: Entailed hypothesis" in report.html


def test_extension_run_shows_card_and_funnel(tmp_path: Path) -> None:
    ext = build_extension_run(tmp_path)
    report = render_report(load_runs([ext]), plots=False)
    assert report.sections == ["card", "funnel", "provenance"]
    assert "Extended &lt;BBNLI&gt;" in report.html
    assert "after validation" in report.html
    # Share of the first stage: 250 / 120 = 208.3 % (fills multiply the masked templates).
    assert ">208.3<" in report.html


def test_two_runs_side_by_side(bbnli_run: Path, tmp_path: Path) -> None:
    other = build_bbnli_run(bbnli_run.parent, name="audit-next")
    report = render_report(load_runs([bbnli_run, other]), plots=False)
    assert "audit · rules" in report.html and "audit-next · rules" in report.html
    # Same predictions in both runs: nothing may be marked as different.
    assert "0 marked." in report.html


# --- CLI ------------------------------------------------------------------------------------


def test_cli_formats_and_html(bbnli_run: Path, tmp_path: Path) -> None:
    from nlibias.cli.main import app

    runner = CliRunner()
    md = runner.invoke(app, ["report", str(bbnli_run), "--format", "md"])
    assert md.exit_code == 0, md.output
    assert "| Model | Domain | Pro | Anti | Aggregate |" in md.output
    latex = runner.invoke(app, ["report", str(bbnli_run), "--format", "latex"])
    assert r"\toprule" in latex.output
    copy = tmp_path / "copy" / bbnli_run.name  # the same run twice is refused: a copy is another run
    shutil.copytree(bbnli_run, copy)
    cmp_csv = runner.invoke(app, ["report", str(bbnli_run), str(copy), "--compare", "--format", "csv"])
    assert cmp_csv.exit_code == 0 and cmp_csv.output.startswith("Slice,Measure,audit · rules")
    out = tmp_path / "r.html"
    html = runner.invoke(app, ["report", str(bbnli_run), "--out", str(out), "--no-plots"])
    assert html.exit_code == 0, html.output
    assert out.exists() and not (tmp_path / "r_files").exists()
    bad = runner.invoke(app, ["report", str(bbnli_run), "--format", "docx"])
    assert bad.exit_code == 2


def test_metrics_file_path_is_accepted(bbnli_run: Path) -> None:
    run = load_run(bbnli_run / "metrics.json")
    assert run.path == bbnli_run and set(run.models) == {"rules", "hash"}
    # 4 subtopics x (3 pairs x 2 + 1 test) = 28 samples; x 2 models = 56 predictions.
    assert len(run.samples()) == 28 and len(run.predictions()) == 56
    assert json.loads((bbnli_run / "metrics.json").read_text())["run"]["samples"].endswith("samples")


def test_a_figure_cut_short_leaves_the_last_whole_one_and_no_page_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Figures are written atomically and before the page (before: a PNG was written in place
    after the page, so a kill left a page naming a half-written figure)."""
    from nlibias.report.html import ASSETS_DIR_SUFFIX, Report

    figure = type("Figure", (), {"name": "fig", "svg": "<svg/>", "png": b"new png"})()
    report = Report(html="<html>new</html>", sections=[], caveats=[], plots=[figure])
    monkeypatch.setattr("nlibias.report.html.render_report", lambda *a, **k: report)
    out = tmp_path / "report.html"
    assets = tmp_path / f"report{ASSETS_DIR_SUFFIX}"
    assets.mkdir()
    (assets / "fig.png").write_bytes(b"old png")
    out.write_text("<html>old</html>")
    real_write_bytes = Path.write_bytes

    def cut(self: Path, data: bytes) -> int:
        real_write_bytes(self, data[:3])
        raise KeyboardInterrupt  # killed mid-write

    monkeypatch.setattr(Path, "write_bytes", cut)
    with pytest.raises(KeyboardInterrupt):
        write_report([], out)
    assert (assets / "fig.png").read_bytes() == b"old png"
    assert out.read_text() == "<html>old</html>"
    assert sorted(p.name for p in assets.iterdir()) == ["fig.png", "fig.svg"]


@pytest.mark.parametrize("name", ["wq-nli", "occupations"])
def test_the_measures_table_gives_each_slice_its_number_of_units(name: str) -> None:
    """The "n" column read ``n`` only, which WinoQueer-NLI (``n_rows``) and the occupation set
    (``n_pairs``) do not write: every cell was empty while the verdict showed n."""
    from html.parser import HTMLParser

    run_dir = Path(__file__).parent / "fixtures" / "regression" / name / "audit"
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))

    class Rows(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.rows: list[list[str]] = []
            self.cell: list[str] | None = None

        def handle_starttag(self, tag: str, attrs: Any) -> None:
            if tag == "tr":
                self.rows.append([])
            elif tag in ("td", "th"):
                self.cell = []

        def handle_endtag(self, tag: str) -> None:
            if tag in ("td", "th") and self.cell is not None:
                self.rows[-1].append("".join(self.cell).strip())
                self.cell = None

        def handle_data(self, data: str) -> None:
            if self.cell is not None:
                self.cell.append(data)

    parser = Rows()
    parser.feed(render_report(load_runs([run_dir]), plots=False).html)
    header = next(r for r in parser.rows if r[:3] == ["model", "slice", "n"])
    body = parser.rows[parser.rows.index(header) + 1 :]
    overall_rows = [r for r in body if len(r) == len(header) and r[1] == "all"]
    assert {r[0] for r in overall_rows} == set(metrics["models"])
    for row in overall_rows:
        overall = metrics["models"][row[0]]["overall"]
        expected = next(overall[k] for k in ("n", "n_rows", "n_pairs") if isinstance(overall.get(k), int))
        assert row[2] == f"{expected}" or row[2] == f"{expected:,}", row
