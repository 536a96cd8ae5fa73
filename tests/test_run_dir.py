"""The run-directory record (``nlibias.io.run_dir``): a run read and checked once, each damaged or
foreign file refused there, naming the file and the field; the run's samples found one way."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import nlibias
from nlibias.errors import ConfigError, SourceError
from nlibias.io.run_dir import RunSamples, read_run
from nlibias.io.samples import write_samples
from nlibias.schema import Sample

PAIR = [
    Sample(id=f"x:{s}", source="bbnli", domain="d", subtopic="t", premise="P.", hypothesis=f"{s} H.",
           gold="neutral", stereotype=s, pair_key="x")
    for s in ("pro", "anti")
]  # fmt: skip


@pytest.fixture()
def run(tmp_path: Path) -> Path:
    data = write_samples(tmp_path / "data", PAIR)["jsonl"].parent
    out = tmp_path / "run"
    nlibias.audit(data, models=["fake:a"], cache=False, bootstrap=0, progress=False, out_dir=out)
    return out


def _edit_metrics(run: Path, text: str) -> None:
    (run / "metrics.json").write_text(text, encoding="utf-8")


def test_a_good_run_is_read_with_its_samples_predictions_and_tables(run: Path, tmp_path: Path) -> None:
    record = read_run(run)
    samples = tmp_path / "data" / "samples.jsonl"
    assert record.source == "bbnli" and list(record.metrics["models"]) == ["a"]
    assert record.kinds == {"a": "classifier"}
    assert record.manifest is not None and record.manifest["complete"]
    assert record.samples.found == samples.resolve()  # the manifest's absolute path, first
    assert record.samples.check(record.samples.file()) == samples.resolve()
    assert len(record.samples.sha256 or "") == 64
    assert len(record.predictions()) == 2 and record.tables == (run / "tables.txt").read_text().rstrip("\n")
    assert record.input_changes == () and record.stage("explain") is None
    assert record.model_run("a")["model"] == "a" and record.model_run("b") == {}
    with pytest.raises(ValueError):  # frozen: readers cannot change what was read
        record.path = tmp_path  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "field", "reason"),
    [
        ('{"source": "bbnli", "models": {', None, "not valid JSON"),
        ("", None, "the file is empty"),
        ('{"source": "bbnli", "models": {"a": {"overall": {"accuracy": -1.0}}}}', "models.a.overall.accuracy",
         "is outside [0, 100]"),
        ('{"source": "bbnli", "models": {"a": {"overall": {"n": 1, "n": 2}}}}', "models.a.overall.n",
         "given 2 times"),
        ('{"models": {"a": {"overall": {}}}}', "source", "missing"),
    ],
)  # fmt: skip
def test_a_damaged_or_foreign_metrics_json_is_refused_naming_the_file_and_field(
    run: Path, text: str, field: str | None, reason: str
) -> None:
    _edit_metrics(run, text)
    with pytest.raises(SourceError) as refused:
        read_run(run)
    assert refused.value.path == str(run / "metrics.json")
    assert refused.value.field == field and reason in refused.value.reason


def test_numbers_that_contradict_each_other_are_refused_after_the_manifest(run: Path) -> None:
    # 70 + 20 = 90: not what a run writes. With the manifest the edit is caught first (the file
    # changed); without it (an older run) the numbers themselves are refused.
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["models"]["a"]["overall"].update(accuracy=70.0, misprediction_rate=20.0)
    _edit_metrics(run, json.dumps(metrics))
    with pytest.raises(SourceError, match=r"file metrics\.json does not match manifest\.json"):
        read_run(run)
    (run / "manifest.json").unlink()
    with warnings.catch_warnings(), pytest.raises(SourceError) as refused:
        warnings.simplefilter("ignore")
        read_run(run)
    assert refused.value.field == "models.a.overall" and "= 90, not 100" in refused.value.reason


@pytest.mark.parametrize("name", ["predictions.jsonl", "tables.txt"])
def test_an_output_file_changed_after_the_run_is_refused_naming_it(run: Path, name: str) -> None:
    (run / name).write_text((run / name).read_text() + "\n")
    with pytest.raises(SourceError, match=rf"file {name} does not match manifest\.json"):
        read_run(run)


def test_a_damaged_manifest_and_an_interrupted_write_are_refused(run: Path) -> None:
    manifest = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps({**manifest, "complete": False}))
    with pytest.raises(SourceError, match="a write of its files was interrupted"):
        read_run(run)
    (run / "manifest.json").write_text(json.dumps({**manifest, "files": []}))
    with pytest.raises(SourceError, match="the run's manifest is damaged") as refused:
        read_run(run)
    assert refused.value.field == "files"


def test_no_metrics_json_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"no metrics\.json here"):
        read_run(tmp_path)


def test_samples_edited_after_the_run_are_listed_and_refused(run: Path, tmp_path: Path) -> None:
    samples = tmp_path / "data" / "samples.jsonl"
    samples.write_text(samples.read_text().replace("pro H.", "pro H, edited."))
    record = read_run(run)
    (change,) = record.input_changes
    assert f"samples file {samples.resolve()} changed after the run" in change
    with pytest.raises(ConfigError, match="is not the one the run audited") as refused:
        record.samples.check(record.samples.file())
    assert refused.value.parameter == "samples"


def test_samples_gone_say_what_the_run_recorded(run: Path, tmp_path: Path) -> None:
    for path in (tmp_path / "data").iterdir():
        path.unlink()
    record = read_run(run)
    assert record.samples.found is None
    with pytest.raises(SourceError) as refused:
        record.samples.file()
    assert refused.value.field == "run.samples" and "are not at" in refused.value.reason
    assert (
        record.samples.file(tmp_path / "elsewhere.jsonl") == tmp_path / "elsewhere.jsonl"
    )  # given: as it is


def test_a_relative_samples_path_is_found_from_the_run_s_parents(tmp_path: Path) -> None:
    """``run.samples`` as written from the folder the audit ran in: found from a folder above the
    run, wherever the reader works from (no manifest: an older run)."""
    write_samples(tmp_path / "data", PAIR)
    (tmp_path / "runs" / "r").mkdir(parents=True)
    metrics = {"source": "bbnli", "models": {"a": {"overall": {}}}, "run": {"samples": "data"}}
    located = RunSamples.locate(tmp_path / "runs" / "r", metrics, None)
    assert located.found == tmp_path / "data"
    assert located.recorded == "data" and located.sha256 is None
    none = RunSamples.locate(tmp_path / "runs" / "r", {"source": "bbnli", "models": {}}, None)
    with pytest.raises(SourceError, match="this run records no samples file"):
        none.file()


def test_score_refuses_a_run_directory_whose_predictions_changed(run: Path, tmp_path: Path) -> None:
    """A run directory given as the predictions is checked against its manifest as its file is
    (the directory was once read unchecked: only a file's directory was looked at)."""
    from nlibias.jobs.score import run_score

    rows = (run / "predictions.jsonl").read_text().splitlines()
    (run / "predictions.jsonl").write_text("\n".join(reversed(rows)) + "\n")  # the same rows, reordered
    for given in (run, run / "predictions.jsonl"):
        with pytest.raises(SourceError, match=r"file predictions\.jsonl does not match manifest\.json"):
            run_score(tmp_path / "data", given, bootstrap=0)
