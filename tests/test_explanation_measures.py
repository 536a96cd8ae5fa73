"""The explanation rates (``nlibias explain``) are declared where every other measure is: in
``nlibias.metrics.meta`` and on BBNLI's generative measures, so they are in ``ALL_MEASURES`` with
their range and unit, in the report's glossary with an anchor the explanations section links to;
and, since ``explanations.json`` holds them and ``metrics.json`` never does, they are no fields of
``metrics.json``'s schema."""

from __future__ import annotations

import json
import re
from html import escape as html_escape
from pathlib import Path

import numpy as np
import pytest

from nlibias.catalog.registry import get_benchmark
from nlibias.io.results import check_metrics, metrics_issues, metrics_schema
from nlibias.metrics.explanations import ExplanationColumns, slice_rates
from nlibias.metrics.meta import ALL_MEASURES, EXPLANATION_MEASURES
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions, RunOptions
from nlibias.schema.measure_info import EXPLANATIONS_FILE, METRICS_FILE

pytest.importorskip("pysbd")

#: Each rate with the direction docs/design.md's labels give it (percent, 0 to 100).
DIRECTIONS = {
    "balanced_rate": "higher",
    "biased_rate": "lower",
    "biased_pro_rate": "lower",
    "biased_anti_rate": "lower",
    "invalid_rate": "lower",
    "inconsistent_rate": "lower",
    "mean_grounded": "higher",
    "flip_rate": "lower",
}


def test_each_explanation_measure_is_declared_with_its_range_and_unit() -> None:
    assert list(EXPLANATION_MEASURES) == list(DIRECTIONS)
    for name, direction in DIRECTIONS.items():
        info = ALL_MEASURES[name]
        assert info is EXPLANATION_MEASURES[name]
        assert (info.direction, info.range, info.unit) == (direction, (0.0, 100.0), "%"), name
        assert info.reported_in == EXPLANATIONS_FILE and "appendix A.7" in info.citation
    # every other measure is reported in metrics.json
    assert {n for n, i in ALL_MEASURES.items() if i.reported_in != METRICS_FILE} == set(DIRECTIONS)


def test_the_rates_computed_are_the_rates_declared() -> None:
    rows = [{"id": "a", "label": "biased", "stance": "entailment", "consistent": True, "grounded": 1.0,
             "stereotype": "pro", "pair_key": "k"}]  # fmt: skip
    rates = slice_rates(ExplanationColumns.of_rows(rows), resamples=0, rng=np.random.default_rng(0))
    assert {key for key in rates if key in ALL_MEASURES} == set(EXPLANATION_MEASURES)
    assert set(rates["ci"]) == set(EXPLANATION_MEASURES)


def test_bbnli_declares_them_on_its_generative_measures_only() -> None:
    bbnli = get_benchmark("bbnli")
    generative = {info.name for info in bbnli.measures["generative"].infos}
    assert set(EXPLANATION_MEASURES) <= generative
    assert not set(EXPLANATION_MEASURES) & {info.name for info in bbnli.measures["classifier"].infos}
    assert set(EXPLANATION_MEASURES) <= {info.name for info in bbnli.measure_infos()}


def test_metrics_json_schema_has_no_field_for_them() -> None:
    """metrics.json never holds an explanation rate: its schema names none, and a metrics.json
    that holds one is refused by the strict check like any other unknown field."""
    properties = metrics_schema()["$defs"]["SliceMetrics"]["properties"]
    assert not set(EXPLANATION_MEASURES) & set(properties)
    document = {"source": "bbnli", "models": {"m": {"overall": {"accuracy": 50.0, "flip_rate": 10.0}}}}
    assert any("flip_rate" in issue for issue in metrics_issues(document, strict=True))
    check_metrics({"source": "bbnli", "models": {"m": {"overall": {"accuracy": 50.0}}}}, path="m.json")


@pytest.fixture(scope="module")
def explained_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fake generator's generated answers on BBNLI-like pairs, explained by a fake judge."""
    from nlibias.io.samples import write_samples
    from nlibias.jobs.audit import run_audit
    from nlibias.jobs.explain import run_explain
    from nlibias.testing.report_runs import bbnli_like_samples

    root = tmp_path_factory.mktemp("explained")
    write_samples(root / "samples", bbnli_like_samples())
    run_audit(
        root / "samples" / "samples.jsonl",
        ModelSet.of(generative=["fake:g"], prompts=["true"]),
        run=RunOptions(cache=False, bootstrap=0, progress=False),
        out_dir=root / "G",
        options=ModelOptions(mode="generated"),
    )
    run_explain(root / "G", ["fake:j"], cache=False, bootstrap=0, progress=False)
    return root / "G"


def _section(html: str, name: str) -> str:
    return html.split(f'<section id="{name}">')[1].split("</section>")[0]


def test_the_report_glossary_explains_each_rate_and_the_section_links_there(explained_run: Path) -> None:
    from nlibias.report.html import render_report
    from nlibias.report.load import load_runs

    summary = json.loads((explained_run / "explanations" / "explanations.json").read_text(encoding="utf-8"))
    overall = next(iter(next(iter(summary["models"].values())).values()))["overall"]
    present = set(EXPLANATION_MEASURES) & set(overall)
    assert present == set(EXPLANATION_MEASURES)  # explain writes every rate, flip_rate included
    html = render_report(load_runs([explained_run]), plots=False).html
    glossary, section = _section(html, "glossary"), _section(html, "explanations")
    for name in present:
        assert f'<dfn id="measure-{name}">{name}</dfn>' in glossary, name
        assert html_escape(ALL_MEASURES[name].description) in glossary
    # each rate column of the section links to its entry (biased_rate is no column: pro and anti are)
    linked = set(re.findall(r'<a class="measure" href="#measure-([a-z_]+)">', section))
    assert linked == present - {"biased_rate"}
    assert all(html.count(f'id="measure-{name}"') == 1 for name in present)


def test_a_run_without_current_explanations_gets_no_entries_for_them(
    explained_run: Path, tmp_path: Path
) -> None:
    import shutil

    from nlibias.report.html import render_report
    from nlibias.report.load import load_runs

    plain = tmp_path / "plain"
    shutil.copytree(explained_run, plain)
    shutil.rmtree(plain / "explanations")
    stale = tmp_path / "stale"
    shutil.copytree(explained_run, stale)
    record = stale / "stages" / "explain.json"
    record.write_text(
        record.read_text(encoding="utf-8").replace('"predictions_sha256": "', '"predictions_sha256": "0')
    )
    for run in (plain, stale):
        html = render_report(load_runs([run]), plots=False).html
        assert not any(f'id="measure-{name}"' in html for name in EXPLANATION_MEASURES), run.name
        assert 'id="measure-yes_rate_pro"' in html  # the generative measures of metrics.json stay


def test_a_damaged_row_is_a_note_in_the_report_not_a_crash(explained_run: Path, tmp_path: Path) -> None:
    import shutil

    from nlibias.report.explanation_sections import explanations_html
    from nlibias.report.load import load_runs

    damaged = tmp_path / "damaged"
    shutil.copytree(explained_run, damaged)
    rows = damaged / "explanations" / "explanations.jsonl"
    lines = rows.read_text(encoding="utf-8").splitlines()
    lines[0] = json.dumps({k: v for k, v in json.loads(lines[0]).items() if k != "judge"})
    rows.write_text("\n".join(lines) + "\n", encoding="utf-8")
    section = explanations_html(load_runs([damaged]))
    assert "damaged or incomplete" in section and "flip rate" not in section


def test_a_slice_of_fewer_than_ten_units_gets_no_interval() -> None:
    # Pairs of a biased pro answer and a balanced anti one: biased_rate 50 in every resample. With
    # 9 pairs (units) no interval (a bootstrap of few units is too narrow; verdicts need 10); with
    # 10 pairs the interval is [50, 50], the rate itself.
    def pairs(n: int) -> ExplanationColumns:
        rows = []
        for k in range(n):
            for stereo, label in (("pro", "biased"), ("anti", "balanced")):
                rows.append({"id": f"{k}{stereo}", "label": label, "stance": "neutral", "consistent": True,
                             "grounded": 1.0, "stereotype": stereo, "pair_key": str(k)})  # fmt: skip
        return ExplanationColumns.of_rows(rows)

    few = slice_rates(pairs(9), resamples=50, rng=np.random.default_rng(0))
    enough = slice_rates(pairs(10), resamples=50, rng=np.random.default_rng(0))
    assert few["biased_rate"] == enough["biased_rate"] == 50.0
    assert few["ci"]["biased_rate"] is None and enough["ci"]["biased_rate"] == [50.0, 50.0]
