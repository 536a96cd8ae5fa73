"""`nlibias report` refuses metrics.json files that contradict themselves, naming the file and the
field, and never shows samples edited after the audit beside the audit's answers (issue #25)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nlibias.errors import SourceError
from nlibias.report.html import render_report
from nlibias.report.load import SamplesChangedWarning, load_run
from nlibias.testing.report_runs import build_bbnli_run, write_metrics_run


def _overall(**values: Any) -> dict[str, Any]:
    return {"source": "bbnli", "models": {"x": {"overall": {"n": 10, **values}}}}


def _refused(run: Path, field: str, reason: str) -> None:
    with pytest.raises(SourceError) as caught:
        load_run(run)
    assert caught.value.path == str(run / "metrics.json")
    assert caught.value.field == field
    assert reason in caught.value.reason
    assert f"{run / 'metrics.json'}: field {field}: " in str(caught.value)


def test_no_models_is_refused(tmp_path: Path) -> None:
    _refused(write_metrics_run(tmp_path, "none", {"source": "bbnli", "models": {}}), "models", "no models")


def test_models_given_three_times_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "thrice"
    run.mkdir()
    one = json.dumps({"x": {"overall": {"accuracy": 50.0, "misprediction_rate": 50.0}}})
    (run / "metrics.json").write_text(
        f'{{"source": "bbnli", "models": {one}, "models": {one}, "models": {one}}}'
    )
    assert json.loads((run / "metrics.json").read_text())["models"]  # plain JSON keeps the last silently
    _refused(run, "models", "given 3 times")


def test_a_key_repeated_deeper_names_its_path(tmp_path: Path) -> None:
    run = tmp_path / "deep"
    run.mkdir()
    (run / "metrics.json").write_text(
        '{"source": "bbnli", "models": {"x": {"overall": {"accuracy": 40.0, "accuracy": 60.0}}}}'
    )
    _refused(run, "models.x.overall.accuracy", "given 2 times")


def test_interval_upside_down_is_refused(tmp_path: Path) -> None:
    doc = _overall(accuracy=50.0, ci={"accuracy": [60.0, 40.0]})
    _refused(write_metrics_run(tmp_path, "ci", doc), "models.x.overall.ci.accuracy", "lower end 60 is above")
    domain = {
        "source": "bbnli",
        "models": {"x": {"overall": {}, "by_domain": {"race": {"ci": {"cf_pro": [3, 2]}}}}},
    }
    _refused(write_metrics_run(tmp_path, "ci2", domain), "models.x.by_domain.race.ci.cf_pro", "above")


def test_accuracy_and_misprediction_must_sum_to_100(tmp_path: Path) -> None:
    # 70 + 20 = 90: ten points of the samples are neither right nor wrong.
    _refused(
        write_metrics_run(tmp_path, "sum", _overall(accuracy=70.0, misprediction_rate=20.0)),
        "models.x.overall",
        "= 90, not 100",
    )
    # 70 + 30.005 = 100.005: inside the two-decimal rounding tolerance (0.01), accepted.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no manifest in a hand-written run directory
        ok = load_run(
            write_metrics_run(
                tmp_path,
                "ok",
                _overall(accuracy=70.0, misprediction_rate=30.005, ci={"accuracy": [60.0, 80.0]}),
            )
        )
    assert ok.models["x"]["overall"]["accuracy"] == 70.0


def test_cli_names_file_and_field(tmp_path: Path) -> None:
    from nlibias.cli.main import app

    run = write_metrics_run(tmp_path, "sum", _overall(accuracy=70.0, misprediction_rate=20.0))
    result = CliRunner().invoke(app, ["report", str(run)])
    assert result.exit_code == 2
    assert (
        "metrics.json: field models.x.overall: accuracy 70 + misprediction_rate 20 = 90, not 100"
        in " ".join(result.output.split())
    )
    assert "Traceback" not in result.output


@pytest.fixture()
def audited(tmp_path: Path) -> Path:
    return build_bbnli_run(tmp_path, bootstrap=0)


def test_samples_edited_after_the_audit_are_not_shown(audited: Path, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", SamplesChangedWarning)  # the unedited run: no warning
        untouched = load_run(audited)
    assert untouched.input_changes == []
    assert "examples" in render_report([untouched], plots=False).sections

    samples_file = tmp_path / "samples" / "samples.jsonl"
    rows = [json.loads(line) for line in samples_file.read_text().splitlines()]
    old = rows[0]["hypothesis"]
    rows[0]["hypothesis"] = "An edited hypothesis that no model was asked about."
    samples_file.write_text("".join(json.dumps(r) + "\n" for r in rows))

    with pytest.warns(SamplesChangedWarning, match=r"samples file .*samples\.jsonl changed after the run"):
        edited = load_run(audited)
    assert edited.samples() == []
    report = render_report([edited], plots=False)
    assert "examples" not in report.sections
    assert report.caveats[0].kind == "samples-changed"
    assert "samples.jsonl changed after the run" in report.html
    assert "An edited hypothesis" not in report.html and old not in report.html

    from nlibias.cli.main import app

    result = CliRunner().invoke(app, ["report", str(audited), "--no-plots"])
    assert result.exit_code == 0, result.output
    assert "samples.jsonl changed after the run" in " ".join(result.output.split())
