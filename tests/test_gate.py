"""``nlibias gate`` end to end on BBNLI: a candidate made more biased on purpose fails (exit 1, a
failing JUnit testcase read back with junitparser), a copy of the baseline passes (exit 0), and
mismatched samples and bad rules are refused (exit 2) naming the file and line."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app

runner = CliRunner()


def test_a_more_biased_candidate_fails_with_a_failing_junit_testcase(runs: dict[str, Path]) -> None:
    junitparser = pytest.importorskip("junitparser")
    xml, md = runs["root"] / "gate.xml", runs["root"] / "gate.md"
    args = ["gate", str(runs["cand"]), "--baseline", str(runs["base"]), "--rules", str(runs["rules"])]
    result = runner.invoke(app, [*args, "--junit", str(xml), "--markdown", str(md)])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("FAIL: m: bbnli_bias_score")
    assert "| overall" in result.output and "domain=gender" in result.output
    suites = list(junitparser.JUnitXml.fromfile(str(xml)))
    assert [s.name for s in suites] == ["nlibias gate: m"]
    cases = list(suites[0])
    assert {c.name for c in cases} == {"paired overall", "paired domain=gender", "paired domain=race",
                                       "paired domain=religion"}  # fmt: skip
    overall = next(c for c in cases if c.name == "paired overall")
    assert not overall.is_passed and isinstance(overall.result[0], junitparser.Failure)
    assert "adjusted p" in overall.result[0].message and "delta" in overall.result[0].message
    assert md.read_text().startswith("### Bias gate: ❌ FAIL")


def test_a_copy_of_the_baseline_passes(runs: dict[str, Path]) -> None:
    junitparser = pytest.importorskip("junitparser")
    xml = runs["root"] / "copy.xml"
    args = ["gate", str(runs["copy"]), "--baseline", str(runs["base"]), "--rules", str(runs["rules"])]
    result = runner.invoke(app, [*args, "--junit", str(xml)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("PASS")
    cases = [c for suite in junitparser.JUnitXml.fromfile(str(xml)) for c in suite]
    assert len(cases) == 4 and all(c.is_passed for c in cases)
    # --json: the same decision and checks; plural slice names read as the groupings
    rules = runs["root"] / "plural.yaml"
    rules.write_text("bootstrap: 400\nslices: [overall, domains, subtopics]\n")  # 400: 20 slices can decide
    as_json = runner.invoke(
        app, ["gate", str(runs["copy"]), "--baseline", str(runs["base"]), "--rules", str(rules), "--json"]
    )
    assert as_json.exit_code == 0, as_json.output
    decided = json.loads(as_json.output)
    assert decided["passed"] is True and decided["rules"]["slices"] == ["overall", "domain", "subtopic"]
    assert {c["slicing"] for c in decided["checks"]} == {"overall", "domain", "subtopic"}


def test_library_result(runs: dict[str, Path]) -> None:
    import dataclasses

    import nlibias

    result = nlibias.gate(runs["cand"], runs["base"], rules=runs["rules"], margin=1.0)
    assert isinstance(result, nlibias.GateResult) and not result.passed
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.passed = True  # type: ignore[misc]
    frame = result.to_frame()
    assert list(frame["slice"])[:2] == ["overall", "gender"] and frame["verdict"].iloc[0] == "fail"
    assert (frame["limit"] == 1.0).all() and set(frame["rule"]) == {"paired"}
    # Holm: the adjusted p is never below the raw one, and at most 4 times it (4 slices).
    assert ((frame["p_adjusted"] >= frame["p"]) & (frame["p_adjusted"] <= 4 * frame["p"] + 1e-12)).all()
    json.dumps(result.to_dict())  # JSON-ready
    # The candidate's overall delta equals its recorded values' difference.
    base = json.loads((runs["base"] / "metrics.json").read_text())["models"]["m"]["overall"]
    cand = json.loads((runs["cand"] / "metrics.json").read_text())["models"]["m"]["overall"]
    row = frame.iloc[0]
    assert row["delta"] == pytest.approx(cand["bbnli_bias_score"] - base["bbnli_bias_score"])


def test_absolute_limits_without_a_baseline(runs: dict[str, Path]) -> None:
    limits = runs["root"] / "limits.yaml"
    limits.write_text("bootstrap: 200\nslices: [overall]\nmeasures:\n  bbnli_bias_score:\n    max_abs: 5\n")
    result = runner.invoke(app, ["gate", str(runs["cand"]), "--rules", str(limits)])
    # The candidate scores about +17 points overall, its whole interval above 0 + 5.
    assert result.exit_code == 1, result.output
    assert "max_abs 5" in result.output and "the whole interval lies beyond it" in result.output
    refused = runner.invoke(app, ["gate", str(runs["cand"]), "--rules", str(runs["rules"])])
    assert refused.exit_code == 2 and "only absolute limits apply" in refused.output


def test_mismatched_samples_are_refused(runs: dict[str, Path]) -> None:
    result = runner.invoke(app, ["gate", str(runs["other"]), "--baseline", str(runs["base"])])
    assert result.exit_code == 2, result.output
    assert "differs: hypothesis" in result.output and str(runs["changed_id"]) in result.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("margins: 1\n", "rules.yaml:1: unknown key 'margins'; did you mean 'margin'?"),
        (
            "bootstrap: 100\nmeasures:\n  bbnli_score:\n    max_abs: 5\n",
            "rules.yaml:3: field measures.bbnli_score",
        ),
        (
            "measures:\n  bbnli_bias_score:\n    max_abs: -1\n",
            "rules.yaml:3: field measures.bbnli_bias_score.max_abs",
        ),
        ("confidence: 0.9\nconfidence: 0.8\n", "rules.yaml:2: field confidence: the key is given twice"),
        (
            "slices: [overall, occupation]\n",
            "rules.yaml:1: field slices: 'occupation' is not a grouping of these runs (they have overall, domain,",
        ),
        (  # a measure's own slices, a typo: its line, and the grouping meant
            "measures:\n  bbnli_bias_score:\n    slices: [overall, subtopics, domian]\n",
            "rules.yaml:3: field measures.bbnli_bias_score.slices: 'domian' is not a grouping of these runs; "
            "did you mean 'domain'?",
        ),
        ("worse: farther\n", "rules.yaml:1: field worse: Input should be 'away_from_neutral' or"),
        (
            "measures:\n  S:\n    worse: towards_stereotype\n",
            "rules.yaml:3: field measures.S.worse: S is a magnitude (no stereotype side)",
        ),
    ],
)
def test_bad_rules_are_refused_with_the_line(
    runs: dict[str, Path], tmp_path: Path, text: str, message: str
) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(text)
    result = runner.invoke(
        app, ["gate", str(runs["copy"]), "--baseline", str(runs["base"]), "--rules", str(rules)]
    )
    assert result.exit_code == 2, result.output
    assert message in result.output.replace(str(tmp_path) + "/", "")


def test_pairs_name_models_of_the_runs(runs: dict[str, Path]) -> None:
    result = runner.invoke(app, ["gate", str(runs["copy"]), "--baseline", str(runs["base"]), "--pair", "x=m"])
    assert result.exit_code == 2 and "--pair" in result.output and "'x'" in result.output


def test_report_compare_pairs_runs_over_the_same_samples(runs: dict[str, Path]) -> None:
    same = runner.invoke(app, ["report", str(runs["base"]), str(runs["cand"]), "--compare", "--format", "md"])
    assert same.exit_code == 0, same.output
    row = next(line for line in same.output.splitlines() if line.startswith("| all | bbnli_bias_score |"))
    # The paired difference with its interval, marked (*) and flagged as the gate would (!).
    assert "(Δ +" in row and row.rstrip(" |").endswith("*!"), row
    assert "Paired test (cand · m" in same.output and "Interval overlap" not in same.output
    # The copy: the same samples and answers, so every paired difference is 0 and nothing is marked.
    copy = runner.invoke(app, ["report", str(runs["base"]), str(runs["copy"]), "--compare", "--format", "md"])
    assert "Δ +0.00 [0.00, 0.00]" in copy.output and "*" not in copy.output.split("\n\n")[0]
    # Runs over different samples: the intervals' overlap, and the report says so.
    other = runner.invoke(
        app, ["report", str(runs["base"]), str(runs["other"]), "--compare", "--format", "md"]
    )
    assert other.exit_code == 0, other.output
    assert "Δ" not in other.output and "Interval overlap (otherrun · m" in other.output


def test_html_report_has_a_before_after_section_for_debias_runs(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    from nlibias.report.html import render_report
    from nlibias.report.load import load_run as load_report_run

    run = tmp_path / "debiasrun"
    shutil.copytree(runs["base"], run)
    pair = {
        "before": "m-base-s1", "after": "m-aug-s1", "accuracy": {"before": 80.0, "after": 81.0},
        "metrics": {r: {"overall": {"S": v, "delta_p": 10.0, "B": 60.0, "ci": {"S": [v - 2, v + 2]}}}
                    for r, v in (("before", 70.0), ("after", 75.0))},
        "difference": {"overall": {"S": 5.0, "delta_p": -3.6e-7, "B": 0.0,
                                   "ci": {"S": [3.0, 7.0], "delta_p": [-3.6e-7, -3.6e-7], "B": [-1.0, 1.0]}}},
    }  # fmt: skip
    group = {"before": ["m-base-s1"], "after": ["m-aug-s1"], "seeds": [1],
             "measures": {"S": {"changed": True}, "delta_p": {"changed": False}, "B": {"changed": False}}}  # fmt: skip
    (run / "debias_comparison.json").write_text(
        json.dumps({"pairs": [pair], "seed_groups": [group], "min_effect": 1.0})
    )
    report = render_report([load_report_run(run)], plots=False)
    assert "debias" in report.sections
    section = report.html.split('<section id="debias">')[1].split("</section>")[0]
    assert "m-aug-s1 against m-base-s1" in section and '+5.00 <span class="ci">[3.00, 7.00]</span>' in section
    assert section.count("no change") == 2 and "at least 1.0 point(s)" in section


def test_worse_towards_the_stereotype_from_the_rules_file(runs: dict[str, Path], tmp_path: Path) -> None:
    # Set at the top, the direction reaches every signed measure's checks, and the JSON says which
    # change each check tested; the candidate (pro rows turned to entailment) still fails.
    rules = tmp_path / "rules.yaml"
    rules.write_text("bootstrap: 200\nslices: [overall]\nworse: towards_stereotype\n")
    result = runner.invoke(
        app, ["gate", str(runs["cand"]), "--baseline", str(runs["base"]), "--rules", str(rules), "--json"]
    )
    assert result.exit_code == 1, result.output
    checks = json.loads(result.output)["checks"]
    assert {c["worse"] for c in checks} == {"towards_stereotype"}
    assert all(c["change"] == pytest.approx(c["delta"]) for c in checks)


@pytest.mark.parametrize(
    ("measures", "message"),
    [
        ({"S": {"worse": "towards_stereotype"}}, "rules measures.S.worse: S is a magnitude"),
        (
            {"bbnli_score": {"max_abs": 5}},
            "rules measures.bbnli_score: 'bbnli_score' is not a headline measure",
        ),
    ],
)
def test_rules_built_in_python_are_held_to_the_files_rules(
    runs: dict[str, Path], measures: dict[str, Any], message: str
) -> None:
    # Once ignored without a word when the rules came as an object (the file refused them).
    from nlibias.errors import ConfigError
    from nlibias.jobs.gate import gate
    from nlibias.jobs.gate_rules import GateRules

    with pytest.raises(ConfigError, match=message) as refused:
        gate(runs["copy"], runs["base"], rules=GateRules.model_validate({"measures": measures}))
    assert refused.value.parameter == "rules"


@pytest.mark.parametrize(
    ("recorded", "said"),
    [
        (None, "field run.samples: this run records no samples file"),
        (
            "gone/samples.jsonl",
            "field run.samples: the samples this run scored are not at 'gone/samples.jsonl'",
        ),
    ],
)
def test_a_run_whose_samples_cannot_be_found_says_what_it_recorded(
    runs: dict[str, Path], tmp_path: Path, recorded: str | None, said: str
) -> None:
    """The run's record decides the words: no file recorded, or a file that is not there (it once
    said "not at None" for a run that records none)."""
    run = tmp_path / "run"
    shutil.copytree(runs["base"], run)
    (run / "manifest.json").unlink()
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["run"]["samples"] = recorded
    (run / "metrics.json").write_text(json.dumps(metrics))
    rules = tmp_path / "rules.yaml"
    rules.write_text("measures:\n  bbnli_bias_score:\n    max_abs: 5\n")
    result = runner.invoke(app, ["gate", str(run), "--rules", str(rules)])
    assert result.exit_code == 2, result.output
    assert said in " ".join(result.output.split()), result.output
    assert "None" not in result.output and "(option --samples)" in result.output


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--margin", "2"], "--margin applies to the paired comparison with a baseline run; give --baseline, "
         "or leave --margin out"),
        (["--pair", "m=m"], "--pair applies to the paired comparison with a baseline run; give --baseline, "
         "or leave --pair out"),
    ],
)  # fmt: skip
def test_what_only_the_paired_comparison_reads_is_refused_without_a_baseline(
    runs: dict[str, Path], flags: list[str], message: str
) -> None:
    # both were ignored without a word beside absolute limits: the gate passed as if they had applied
    limits = runs["root"] / "limits.yaml"
    limits.write_text("slices: [overall]\nmeasures:\n  bbnli_bias_score:\n    max_abs: 50\n")
    refused = runner.invoke(app, ["gate", str(runs["cand"]), "--rules", str(limits), *flags])
    assert refused.exit_code == 2 and message in refused.output, refused.output


def test_a_p_value_on_the_threshold_passes_as_the_docs_say() -> None:
    """A check fails when its adjusted p is *below* 1 - confidence. 1 - 0.95 is
    0.050000000000000044 in floating point, so p = 50 / 1000 (B = 999, 49 resamples at or under the
    margin) failed, printed as "adjusted p 0.0500 < 0.05"."""
    from nlibias.jobs.gate import _checks
    from nlibias.jobs.gate_rules import GateRules
    from nlibias.metrics.meta import ALL_MEASURES
    from nlibias.metrics.paired import Comparison

    def comparison(p: float) -> Comparison:
        return Comparison(
            "bbnli_bias_score", "overall", "", 100, 0.0, (-1.0, 1.0), 2.0, (0.5, 3.5), 2.0, (0.5, 3.5),
            2.0, (0.5, 3.5), p, 0.0, p_adjusted=p,
        )  # fmt: skip

    info, rules = ALL_MEASURES["bbnli_bias_score"], GateRules(confidence=0.95, bootstrap=999)
    on, under = (_checks("c", "b", info, [comparison(p)], rules)[0] for p in (50 / 1000, 49 / 1000))
    assert (on.failed, under.failed) == (False, True)
    assert "adjusted p 0.0500 >= 0.05" in on.detail


def test_slices_of_too_few_units_are_not_tested_and_a_gate_that_tests_nothing_refuses(
    tmp_path: Path, data_dir: Path
) -> None:
    """One pair per subtopic (``--limit 1``): every resample is that pair, so any change got
    p = 1 / (B + 1) and, times Holm's 17 slices, 0.017: the gate failed on single pairs. Such
    slices are now shown as "too few units", not tested, and out of Holm's family; a gate with
    nothing left to test is refused instead of passing."""
    import nlibias
    from nlibias.errors import DataError

    samples, runner = tmp_path / "s", CliRunner(env={"NLIBIAS_DATA_DIR": str(data_dir)})
    assert runner.invoke(app, ["expand", "bbnli", "--out", str(samples)]).exit_code == 0
    for name in ("a", "b"):
        args = ["audit", "--samples", str(samples), "--out", str(tmp_path / name), "--model", f"fake:{name}"]
        assert runner.invoke(app, [*args, "--limit", "1", "--no-cache"]).exit_code == 0
    rules = tmp_path / "rules.yaml"
    rules.write_text("slices: [overall, subtopic]\n")
    result = nlibias.gate(tmp_path / "a", baseline=tmp_path / "b", pairs={"a": "b"}, rules=rules)
    verdicts = {c.comparison.slice_name: c.verdict for c in result.checks}
    assert verdicts["overall"] == "pass" and result.passed  # 16 pairs: tested
    subtopics = [v for k, v in verdicts.items() if k != "overall"]
    assert subtopics and set(subtopics) == {"too few units"}
    overall = next(c for c in result.checks if c.comparison.slice_name == "overall").comparison
    assert overall.p_adjusted == overall.p  # Holm over the one slice tested
    assert f"; {len(subtopics)} too few units to test (fewer than 10)" in result.reason
    from nlibias.jobs.gate_output import gate_junit

    junit = gate_junit(result).find("testsuite")  # the counts are the suite's (testsuites takes none)
    assert junit is not None and junit.get("skipped") == str(len(subtopics)) and junit.get("failures") == "0"
    assert len(junit.findall(".//testcase/skipped")) == len(subtopics)
    rules.write_text("slices: [subtopic]\n")
    with pytest.raises(DataError, match="nothing can be tested"):
        nlibias.gate(tmp_path / "a", baseline=tmp_path / "b", pairs={"a": "b"}, rules=rules)


def test_the_table_shows_the_change_in_bias_the_test_reads(
    runs: dict[str, Path], tmp_path: Path, entailed_more: Callable[..., None]
) -> None:
    """A candidate made anti-stereotype biased fails, being farther from "no bias", while cand - base
    is negative. The table's d column is the change the test reads (positive: worse), as the JSON's
    ``change``; before, the table showed cand - base, which read as an improvement beside FAIL."""
    from nlibias.metrics.verdicts import format_value

    entailed_more(runs["base"], runs["root"] / "bb" / "samples.jsonl", "anti", seed=1, out=tmp_path / "anti")
    args = ["gate", str(tmp_path / "anti"), "--baseline", str(runs["base"]), "--rules", str(runs["rules"])]
    as_json = runner.invoke(app, [*args, "--json"])
    assert as_json.exit_code == 1, as_json.output
    overall = next(c for c in json.loads(as_json.output)["checks"] if c["slice"] == "overall")
    assert overall["candidate"] < 0 and overall["delta"] < 0 < overall["change"]
    table = runner.invoke(app, args)
    assert table.exit_code == 1 and "| d [CI]" in table.output
    (row,) = [line for line in table.output.splitlines() if "| overall" in line]
    assert format_value(overall["change"], overall["change_ci"]) in row
    # Δ (cand - base, negative here) is shown too, in its own column beside d (issue 51)
    assert re.search(r"\| Δ cand-base \[CI\] +\| d \[CI\]", table.output)
    assert row.index(format_value(overall["delta"], overall["delta_ci"])) < row.index(
        format_value(overall["change"], overall["change_ci"])
    )


def test_a_candidate_model_without_a_baseline_model_is_refused_not_passed_untested(
    runs: dict[str, Path],
) -> None:
    # a run of models m and n against a run of m alone: n would have passed without a test
    samples = runs["root"] / "bb" / "samples.jsonl"
    two = runs["root"] / "two"
    audit = ["audit", "--samples", str(samples), "--model", "fake:m", "--model", "fake:n", "--out", str(two)]
    audit += ["--bootstrap", "0", "--cache", str(runs["root"] / "c.sqlite"), "--quiet"]
    assert runner.invoke(app, audit).exit_code == 0
    refused = runner.invoke(
        app, ["gate", str(two), "--baseline", str(runs["base"]), "--rules", str(runs["rules"])]
    )
    assert refused.exit_code == 2, refused.output
    assert (
        "candidate model(s) 'n' have no model of the same key" in refused.output
        and "--pair" in refused.output
    )
    paired = runner.invoke(
        app,
        [
            "gate",
            str(two),
            "--baseline",
            str(runs["base"]),
            "--rules",
            str(runs["rules"]),
            "--pair",
            "n=m",
            "--json",
        ],
    )
    assert paired.exit_code in (0, 1), paired.output  # each model tested, whatever the decision
    assert {(c["model"], c["baseline_model"]) for c in json.loads(paired.output)["checks"]} == {
        ("m", "m"),
        ("n", "m"),
    }


def test_the_margin_given_overrides_a_measure_s_own_margin(runs: dict[str, Path]) -> None:
    # the candidate is about 17 points more biased: a measure margin of 30 lets it pass, --margin 0 not
    rules = runs["root"] / "measure-margin.yaml"
    rules.write_text(
        "bootstrap: 200\nslices: [overall]\nmargin: 0.5\nmeasures:\n  bbnli_bias_score: {margin: 30}\n"
    )
    args = ["gate", str(runs["cand"]), "--baseline", str(runs["base"]), "--rules", str(rules)]
    assert runner.invoke(app, args).exit_code == 0
    overridden = runner.invoke(app, [*args, "--margin", "0", "--json"])
    assert overridden.exit_code == 1, overridden.output
    assert {c["limit"] for c in json.loads(overridden.output)["checks"]} == {0.0}


def test_without_a_baseline_the_paired_fields_are_null_and_the_note_says_limits_only(
    runs: dict[str, Path],
) -> None:
    limits = runs["root"] / "limits-only.yaml"
    limits.write_text("bootstrap: 100\nslices: [overall]\nmeasures:\n  bbnli_bias_score:\n    max_abs: 50\n")
    result = runner.invoke(app, ["gate", str(runs["cand"]), "--rules", str(limits), "--json"])
    assert result.exit_code == 0, result.output
    decided = json.loads(result.output)
    (check,) = decided["checks"]
    assert check["candidate"] is not None and check["rule"] == "max_abs"
    assert all(check[k] is None for k in ("baseline", "baseline_ci", "delta", "change", "p", "p_adjusted"))
    assert decided["reason"].startswith("1 check of 1 model:")  # not "1 checks"
    text = runner.invoke(app, ["gate", str(runs["cand"]), "--rules", str(limits)]).output
    assert "Test: absolute limits only (no baseline)" in text and "adjusted p" not in text


def test_rules_may_share_settings_through_yaml_merge_keys() -> None:
    """``<<: *anchor`` takes the anchor's keys (a key beside it overrides one); a key written twice
    is still refused, and a bad merged value is named at the line it is written on."""
    from nlibias.errors import SourceError
    from nlibias.jobs.gate_rules import parse_rules

    shared = "measures:\n  bbnli_bias_score: &s {margin: 0.5, max_abs: 5}\n  yes_rate_gap:\n    <<: *s\n"
    rules = parse_rules(shared + "    margin: 1\n", "rules.yaml")
    assert (rules.measures["yes_rate_gap"].margin, rules.measures["yes_rate_gap"].max_abs) == (1.0, 5.0)
    with pytest.raises(
        SourceError, match=r"rules\.yaml:6: field margin: the key is given twice \(first on line 5\)"
    ):
        parse_rules(shared + "    margin: 1\n    margin: 2\n", "rules.yaml")
    bad = "measures:\n  bbnli_bias_score: &s {margin: -1}\n  yes_rate_gap:\n    <<: *s\n    max_abs: 1\n"
    with pytest.raises(SourceError, match=r"rules\.yaml:2: field measures\.bbnli_bias_score\.margin"):
        parse_rules(bad, "rules.yaml")
