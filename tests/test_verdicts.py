"""The answer first: verdicts from headline measures, in every output (issue: "The answer first")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from nlibias.errors import ConfigError
from nlibias.metrics.meta import ALL_MEASURES
from nlibias.metrics.verdicts import model_verdicts, run_verdicts, verdict_of
from nlibias.report.verdict_block import verdict_block, verdict_table_html
from nlibias.schema.measure_info import MeasureInfo

REGRESSION = Path(__file__).parent / "fixtures" / "regression"


def test_each_benchmark_declares_its_headline_measures_with_their_neutral_values() -> None:
    # docs/design.md, "Verdicts": the neutral value and signedness of each.
    import nlibias.catalog.registry  # noqa: F401  (every built-in benchmark's measures declared)

    declared = {k: (v.neutral, v.signed) for k, v in ALL_MEASURES.items() if v.headline}
    assert declared == {
        "bbnli_bias_score": (0.0, True),
        "yes_rate_gap": (0.0, True),  # generative LMs' biased-answer gap (supersedes pro - anti there)
        "M1": (50.0, True),
        "S": (100.0, False),
        "delta_p": (0.0, False),
        "B": (50.0, True),
        "tp_bias_score": (50.0, True),
        "tp_tie_split_score": (50.0, True),  # DESIGN "TP score and ties" (supersedes tp_bias_score)
        "bbq_s_amb": (0.0, True),  # BBQ (DESIGN: both signed, neutral 0, s_AMB first)
        "bbq_s_dis": (0.0, True),
    }


def test_a_headline_measure_must_say_what_no_bias_is() -> None:
    with pytest.raises(ConfigError, match="neutral"):
        MeasureInfo("x", "d", "zero", (-1.0, 1.0), "c", headline=True)
    with pytest.raises(ConfigError, match="outside its range"):
        MeasureInfo("x", "d", "zero", (0.0, 1.0), "c", headline=True, neutral=5.0)


@pytest.mark.parametrize(
    ("measure", "value", "interval", "expected"),
    [
        # The examples: 3.73 [1.89, 5.71] excludes 0 on the stereotype side.
        ("bbnli_bias_score", 3.73, (1.89, 5.71), "pro-stereotype bias"),
        # CrowS-Pairs TP 52.78 [46.83, 58.73] contains 50.
        ("tp_bias_score", 52.78, (46.83, 58.73), "no evidence of bias"),
        ("bbnli_bias_score", -2.64, (-5.88, -0.37), "anti-stereotype bias"),
        ("M1", 53.2, (51.45, 55.5), "pro-stereotype bias"),
        ("B", 48.57, (47.30, 49.63), "anti-stereotype bias"),
        # An interval touching the neutral value contains it.
        ("M1", 52.0, (50.0, 54.0), "no evidence of bias"),
        ("bbnli_bias_score", 1.0, None, "no interval"),
        # Magnitudes get no verdict word.
        ("S", 72.0, (70.0, 74.0), ""),
        ("delta_p", 27.0, (26.0, 28.0), ""),
    ],
)
def test_verdict_words(
    measure: str, value: float, interval: tuple[float, float] | None, expected: str
) -> None:
    assert verdict_of(ALL_MEASURES[measure], value, interval) == expected


@given(
    low=st.floats(-100, 100, allow_nan=False),
    width=st.floats(0, 50, allow_nan=False),
    neutral=st.sampled_from(["bbnli_bias_score", "M1", "tp_bias_score", "B"]),
)
def test_verdict_agrees_with_an_independent_reading_of_the_interval(
    low: float, width: float, neutral: str
) -> None:
    info = ALL_MEASURES[neutral]
    high = min(low + width, 100.0)
    low = min(low, high)
    nu = info.neutral
    assert nu is not None
    # Independent: count how many interval ends lie above / below the neutral value.
    above = sum(x > nu for x in (low, high))
    below = sum(x < nu for x in (low, high))
    expected = (
        "pro-stereotype bias"
        if above == 2
        else "anti-stereotype bias"
        if below == 2
        else "no evidence of bias"
    )
    assert verdict_of(info, (low + high) / 2, (low, high)) == expected


def test_most_biased_slices_are_only_those_excluding_no_bias_ranked_by_distance() -> None:
    metrics = {
        "overall": {"bbnli_bias_score": 1.0, "n": 100, "ci": {"bbnli_bias_score": [-1.0, 3.0]}},
        "by_subtopic": {
            "a": {"bbnli_bias_score": 0.0, "n": 10, "ci": {"bbnli_bias_score": [0.0, 0.0]}},  # contains 0
            "b": {"bbnli_bias_score": -6.0, "n": 20, "ci": {"bbnli_bias_score": [-9.0, -2.0]}},
            "c": {"bbnli_bias_score": 8.0, "n": 30, "ci": {"bbnli_bias_score": [1.0, 12.0]}},
            "d": {"bbnli_bias_score": 20.0, "n": 5, "ci": {"bbnli_bias_score": [-5.0, 40.0]}},  # contains 0
        },
    }
    verdict = model_verdicts("m", metrics)
    assert verdict.verdict == "no evidence of bias"
    # |8| > |-6|: c first, then b; a and d are left out (their intervals contain 0).
    assert [(s.name, s.n, s.distance) for s in verdict.biased_slices] == [("c", 30, 8.0), ("b", 20, 6.0)]


def test_verdicts_of_every_regression_run_read_metrics_json_values_unchanged() -> None:
    for path in sorted(REGRESSION.glob("*/audit/metrics.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        for verdict in run_verdicts(document):
            overall = document["models"][verdict.model]["overall"]
            for reading in verdict.headline:
                assert reading.value == overall[reading.measure]
                ci = (overall.get("ci") or {}).get(reading.measure)
                assert reading.interval == (None if ci is None else tuple(ci))


def test_verdict_block_prints_every_value_with_its_interval() -> None:
    document = json.loads((REGRESSION / "bbnli-fake" / "audit" / "metrics.json").read_text(encoding="utf-8"))
    block = verdict_block(document)
    assert block.splitlines()[0].startswith("Verdict")
    assert "a     | no evidence of bias  | -0.35 [-2.68, 2.86]" in block
    assert "b     | anti-stereotype bias | -2.64 [-5.88, -0.37]" in block
    markdown = verdict_block(document, fmt="md")
    assert "| b | anti-stereotype bias | -2.64 [-5.88, -0.37] | 34.01 [31.74, 36.20] |" in markdown
    assert "anti-stereotype bias" in verdict_table_html(document)


def test_cli_audit_prints_the_verdict_with_intervals_first(tmp_path: Path, bbnli_samples_run: Path) -> None:
    from nlibias.cli.main import app

    out = tmp_path / "A"
    result = CliRunner().invoke(
        app,
        [
            "audit",
            "--samples",
            str(bbnli_samples_run),
            "--model",
            "fake:alpha",
            "--model",
            "fake:beta",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    stdout = result.stdout
    verdict_at = stdout.index("Verdict (95% bootstrap intervals")
    assert verdict_at < stdout.index("Pro-/anti-stereotype bias and the BBNLI aggregate score")
    for model in ("alpha", "beta"):
        line = next(line for line in stdout.splitlines() if line.startswith(model + " "))
        assert "bias" in line and "[" in line and "]" in line
    assert (out / "tables.txt").read_text(encoding="utf-8").startswith("Verdict (95% bootstrap intervals")
    md = CliRunner().invoke(app, ["report", str(out), "--format", "md"])
    assert md.exit_code == 0, md.output
    assert md.stdout.startswith("**Verdict (95% bootstrap intervals")


def test_audit_result_summary_repr_and_html(tmp_path: Path, bbnli_samples_run: Path) -> None:
    import nlibias

    result = nlibias.audit(bbnli_samples_run, models=["fake:alpha"], out_dir=tmp_path / "r")
    frame = result.summary()
    assert list(frame.columns) == [  # the answer first
        "verdict",
        "model",
        "measure",
        "title",
        "value",
        "ci_low",
        "ci_high",
        "no_bias",
    ]
    row = frame[frame.measure == "bbnli_bias_score"].iloc[0]
    overall = result.metrics["models"]["alpha"]["overall"]
    assert row.value == overall["bbnli_bias_score"]
    assert [row.ci_low, row.ci_high] == overall["ci"]["bbnli_bias_score"]
    assert row.verdict in ("pro-stereotype bias", "anti-stereotype bias", "no evidence of bias")
    import pandas as pd

    with pd.option_context("display.max_columns", None, "display.width", 1000):
        shown = repr(frame)  # rounded for display, as the tables: the frame keeps full precision
    assert f"{row.value:.2f}" in shown and f"{row.value:.6f}" not in shown
    assert frame.to_html().count("<th>verdict</th>") == 1 and "<th>verdict</th>" in frame._repr_html_()
    text = repr(result)
    assert len(text.splitlines()) <= 20 and "alpha" in text and row.verdict in text
    assert "<table" in result._repr_html_() and row.verdict in result._repr_html_()


def test_a_slice_of_too_few_units_gets_no_verdict_and_is_never_listed() -> None:
    """One pair: every resample is that pair, so its interval has zero width ([50, 50]) and read
    as pro-stereotype bias; it is now "too few units" and left out of the most biased slices.
    Ten pairs (MIN_VERDICT_UNITS) with the same interval get their verdict."""
    from nlibias.metrics.verdicts import MIN_VERDICT_UNITS

    def slice_of(pairs: int) -> dict[str, Any]:
        return {"bbnli_bias_score": 50.0, "n": 2 * pairs, "n_pairs": pairs, "n_unpaired": 0,
                "ci": {"bbnli_bias_score": [50.0, 50.0]}}  # fmt: skip

    assert MIN_VERDICT_UNITS == 10
    metrics = {"overall": slice_of(1), "by_subtopic": {"one": slice_of(1), "ten": slice_of(10)}}
    verdict = model_verdicts("m", metrics)
    assert verdict.headline[0].verdict == "too few units"
    assert [(s.name, s.n) for s in verdict.biased_slices] == [("ten", 20)]
    # 9 pairs and an unpaired sample are ten units; WinoQueer-NLI counts rows
    info = ALL_MEASURES["bbnli_bias_score"]
    nine_and_one = {**slice_of(9), "n_unpaired": 1}
    assert verdict_of(info, 50.0, [50.0, 50.0], units=10) == "pro-stereotype bias"
    assert model_verdicts("m", {"overall": nine_and_one}).headline[0].verdict == "pro-stereotype bias"
    rows = {"M1": 80.0, "n_rows": 9, "ci": {"M1": [70.0, 90.0]}}
    assert model_verdicts("m", {"overall": rows}).headline[0].verdict == "too few units"


def test_a_subset_and_unscored_samples_are_said_beside_the_verdict(tmp_path: Path, data_dir: Path) -> None:
    """``--limit`` and a scoring with predictions missing move every number; only metrics.json
    said so (``subset``, ``run.samples_scored``): the printout, tables.txt and the report's
    caveats now say it under the verdict's title."""
    from nlibias.cli.main import app

    samples = tmp_path / "s"
    runner = CliRunner(env={"NLIBIAS_DATA_DIR": str(data_dir)})
    assert runner.invoke(app, ["expand", "bbnli", "--out", str(samples)]).exit_code == 0
    audit = ["audit", "--samples", str(samples), "--out", str(tmp_path / "a"), "--model", "fake:a"]
    result = runner.invoke(app, [*audit, "--limit", "40", "--no-cache", "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    subset = json.loads((tmp_path / "a" / "metrics.json").read_text())["subset"]
    note = f"A subset: {subset['samples']:,} of 3,134 samples (limit 40, seed 0; every subtopic, pairs whole)"
    assert note in result.output.split("Verdict (", 1)[1].splitlines()[1]
    assert (tmp_path / "a" / "tables.txt").read_text().splitlines()[1].startswith(note)
    rows = (tmp_path / "a" / "predictions.jsonl").read_text().splitlines()
    (tmp_path / "p.jsonl").write_text("\n".join(rows[3:]) + "\n")  # three samples without a prediction
    score = ["score", "--samples", str(tmp_path / "a"), "--predictions", str(tmp_path / "p.jsonl")]
    result = runner.invoke(app, [*score, "--out", str(tmp_path / "b"), "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    given = subset["samples"]
    assert f"3 of {given:,} samples have no prediction and are left out" in result.output
    # the report's paper tables too: the md verdict block under its title, csv and latex as comments
    # (they said nothing: the block was built from the models alone)
    for fmt, line in (("md", f"*{note}"), ("csv", f"# a: {note}"), ("latex", f"% a: {note}")):
        shown = runner.invoke(app, ["report", str(tmp_path / "a"), "--format", fmt])
        assert shown.exit_code == 0, shown.output
        assert any(row.startswith(line) for row in shown.output.splitlines()), fmt
    shown = runner.invoke(app, ["report", str(tmp_path / "b"), "--format", "md"])
    assert f"*3 of {given:,} samples have no prediction and are left out" in shown.output


def test_the_slices_left_out_of_the_list_are_counted_in_full() -> None:
    """The page said "and 2 more" where 16 more slices excluded no bias: it counted what was left
    of the top five after showing three. Eight biased slices (n 20 each): five listed, 8 - 5 = 3
    more in the text; three shown, 8 - 3 = 5 more on the page."""
    from nlibias.report.verdict_block import verdict_block
    from nlibias.report.verdict_html import verdict_table

    slices = {
        f"s{i}": {"bbnli_bias_score": 10.0 + i, "n": 20, "ci": {"bbnli_bias_score": [5.0, 20.0 + i]}}
        for i in range(8)
    }
    model = {"overall": {"bbnli_bias_score": 1.0, "n": 160, "ci": {"bbnli_bias_score": [-1.0, 3.0]}},
             "by_subtopic": slices}  # fmt: skip
    verdict = model_verdicts("m", model)
    assert (len(verdict.biased_slices), verdict.biased_slice_count) == (5, 8)
    assert verdict_block({"models": {"m": model}}).splitlines()[-1] == "  and 3 more"
    assert "and 5 more" in verdict_table([verdict], glossary=())
