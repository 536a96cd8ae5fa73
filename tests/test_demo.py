"""``nlibias demo``: stratified pair sampling, the run directory it writes, resuming from the cache;
the real SmolLM2 run is ``slow``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app
from nlibias.errors import ConfigError
from nlibias.jobs import demo
from nlibias.jobs.demo import DISCLAIMER, run_demo, sample_pairs_stratified
from nlibias.schema import Sample


@pytest.fixture(scope="module")
def bias_samples() -> list[Sample]:
    from nlibias.benchmarks.bbnli import expand_bbnli
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data

    return expand_bbnli(resolve_data(BBNLI_DATA)).bias_samples


def test_sample_covers_every_subtopic_with_whole_pairs(bias_samples: list[Sample]) -> None:
    picked = sample_pairs_stratified(bias_samples, 100, seed=0)
    by_key = Counter(s.pair_key for s in picked)
    assert len(by_key) == 100 and set(by_key.values()) == {2}
    assert {s.stereotype for s in picked} == {"pro", "anti"}
    per_topic = Counter(s.subtopic for s in picked if s.stereotype == "pro")
    assert len(per_topic) == 16 and min(per_topic.values()) >= 3
    # 3 each (48), the other 52 in proportion to the pairs left: man_is_to_programmer (190 of
    # 1,138 pairs) gets the most, jewish_woman_is_to_kids (30) among the fewest
    assert per_topic.most_common(1)[0][0] == "man_is_to_programmer"
    assert per_topic["man_is_to_programmer"] > per_topic["jewish_woman_is_to_kids"]
    assert [s.id for s in picked] == [s.id for s in bias_samples if s in set(picked)]  # input order


def test_sample_is_seeded_and_small_budgets_still_cover_every_subtopic(bias_samples: list[Sample]) -> None:
    assert sample_pairs_stratified(bias_samples, 40, seed=3) == sample_pairs_stratified(
        bias_samples, 40, seed=3
    )
    assert sample_pairs_stratified(bias_samples, 40, seed=3) != sample_pairs_stratified(
        bias_samples, 40, seed=4
    )
    tiny = sample_pairs_stratified(bias_samples, 5, seed=0)
    assert len({s.subtopic for s in tiny}) == 16 and len(tiny) == 32  # raised to one pair per subtopic
    everything = sample_pairs_stratified(bias_samples, 10_000, seed=0)
    assert len(everything) == len(bias_samples)


def test_demo_pipeline_with_a_fake_model_writes_the_run_and_resumes(tmp_path: Path) -> None:
    out, cache = tmp_path / "demo", tmp_path / "cache.sqlite"
    result = run_demo(out, sample_pairs=20, model="fake:smollm2", cache_path=cache, bootstrap=50)
    for name in ("samples.jsonl", "samples.parquet", "predictions.jsonl", "metrics.json", "tables.txt"):
        assert (out / name).is_file()
    metrics = json.loads((out / "metrics.json").read_text())
    keys = ["smollm2|prompt=true|scored", "smollm2|prompt=entailed|scored"]
    assert list(metrics["models"]) == keys
    assert metrics["demo"]["disclaimer"] == DISCLAIMER and metrics["demo"]["pairs"] == 20
    assert len(metrics["models"][keys[0]]["by_subtopic"]) == 16
    assert "smollm2|scored" in metrics["generative"]["prompt_sensitivity"]
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 2 * 40 and {r["model"] for r in rows} == set(keys)
    assert DISCLAIMER in (out / "tables.txt").read_text()
    assert all(stats["computed"] > 0 for stats in result["models"].values())

    # the HTML report beside the tables, the one `nlibias report RUN` writes
    assert result["report"] == str(out / "report.html") == result["files"]["report.html"]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "smollm2|prompt=entailed|scored" in html
    assert CliRunner().invoke(app, ["report", str(out), "--out", str(tmp_path / "r.html")]).exit_code == 0
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == html

    again = run_demo(out, sample_pairs=20, model="fake:smollm2", cache_path=cache, bootstrap=50)
    assert all(stats["computed"] == 0 for stats in again["models"].values())
    assert [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()] == rows


def test_demo_command_prints_where_the_report_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_demo(out: Path, **options: object) -> dict[str, object]:
        options.update(model="fake:smollm2", cache_path=tmp_path / "cache.sqlite")
        return run_demo(out, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(demo, "run_demo", fake_demo)
    out = tmp_path / "demo"
    result = CliRunner().invoke(
        app, ["demo", "--out", str(out), "--pairs", "16", "--bootstrap", "0", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    assert f"report: {out / 'report.html'} (open it in a browser)" in result.output
    assert (out / "report.html").is_file()


def test_a_demo_without_bootstrap_still_draws_its_pairs_with_the_seed(tmp_path: Path) -> None:
    # the seed picks the pairs; the audit's RunOptions get it only when a bootstrap draws with it
    options = dict(sample_pairs=16, model="fake:smollm2", cache_path=tmp_path / "c.sqlite", bootstrap=0)
    result = run_demo(tmp_path / "demo", seed=3, **options)  # type: ignore[arg-type]
    metrics = json.loads((tmp_path / "demo" / "metrics.json").read_text())
    assert metrics["demo"]["seed"] == 3 and metrics["bootstrap"]["resamples"] == 0
    assert result["n_pairs"] == 16


def test_pairs_with_full_is_refused_by_its_name_on_each_surface(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"^pairs 2 applies to the stratified sample, and full audits every pair"
    ):
        demo.demo(tmp_path / "demo", full=True, pairs=2, progress=False)
    result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "demo"), "--full", "--pairs", "2"])
    assert result.exit_code == 2
    assert (
        "--pairs 2 applies to the stratified sample, and --full audits every pair; leave --pairs out"
        in result.output
    )
    assert not (tmp_path / "demo").exists()


@pytest.mark.slow
def test_demo_with_smollm2(tmp_path: Path) -> None:
    # one prompt style on the smallest sample that covers every subtopic (16 pairs)
    result = run_demo(
        tmp_path / "demo", sample_pairs=16, prompts=("true",), cache_path=tmp_path / "c.sqlite", bootstrap=0
    )
    (key,) = result["models"]
    assert key == "smollm2|prompt=true|scored"
    assert result["subtopics"] == 16 and result["n_pairs"] == 16
    assert Path(result["report"]).is_file()
    metrics = json.loads((tmp_path / "demo" / "metrics.json").read_text())["models"][key]
    overall = metrics["overall"]
    assert overall["n_unparsed"] == 0  # scored answers always read
    assert 0.0 <= overall["mean_p_yes_pro"] <= 100.0 and overall["mean_answer_mass"] > 0.05
    # one pair per subtopic: under the 10 units a "most biased" subtopic needs, so none is listed
    assert metrics["most_biased_subtopics"] == []


def test_demo_explain_generates_and_shows_the_explanations_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``nlibias demo --explain`` generates the answers of a few pairs and labels their
    explanations, so a new user sees the report's explanations section (fakes stand in for
    SmolLM2, as generator and as judge: the report names the fake judge as such)."""

    def fake_demo(out: Path, **options: object) -> dict[str, object]:
        assert options["judge"] == demo.DEMO_JUDGE and options["sample_pairs"] == demo.EXPLAIN_PAIRS
        options.update(model="fake:smollm2", cache_path=tmp_path / "cache.sqlite", judge="fake:j")
        return run_demo(out, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(demo, "run_demo", fake_demo)
    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--out", str(out), "--explain", "--bootstrap", "0", "--quiet"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert rows and {row["mode"] for row in rows} == {"generated"}
    assert (out / "explanations" / "explanations.json").is_file()
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "Judge fake:j is a fake" in report and "NLI judge(s) fake:j" in report
