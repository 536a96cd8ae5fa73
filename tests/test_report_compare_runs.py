"""``report --compare`` compares runs, not spellings: one run, or one run named twice (``./a``,
``a/``, a symlink, its metrics.json), is refused; a copy of a run is another run; runs over the
same samples in another order are paired as runs over the same samples are; runs of two
benchmarks are refused."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app
from nlibias.testing.report_runs import build_bbnli_run

runner = CliRunner()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bbnli_run(tmp_path_factory.mktemp("compare"))


def test_one_run_or_one_run_twice_is_refused(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(run.parent)
    (run.parent / "link").symlink_to(run.name)
    alone = runner.invoke(app, ["report", "audit", "--compare", "--format", "md"])
    assert alone.exit_code == 2 and "--compare applies to two or more runs" in alone.output, alone.output
    for twice in (["./audit", "audit/"], ["audit", "link"], ["audit", "audit/metrics.json"]):
        done = runner.invoke(app, ["report", *twice, "--compare", "--format", "md"])
        assert done.exit_code == 2, done.output
        assert "names one run directory twice" in done.output and "RUNS" in done.output


def test_the_same_samples_in_another_order_are_paired(run: Path) -> None:
    """The run's answers scored against its samples shuffled: the same samples, so the columns are
    paired (every difference 0), not compared by their intervals' overlap."""
    lines = (run.parent / "samples" / "samples.jsonl").read_text().splitlines()
    random.Random(0).shuffle(lines)
    shuffled = run.parent / "shuffled"
    shuffled.mkdir()
    (shuffled / "samples.jsonl").write_text("\n".join(lines) + "\n")
    assert [json.loads(line)["id"] for line in lines] != [
        json.loads(line)["id"] for line in (run.parent / "samples" / "samples.jsonl").read_text().splitlines()
    ]
    scored = runner.invoke(app, ["score", "--samples", str(shuffled / "samples.jsonl"), "--predictions",
                                 str(run / "predictions.jsonl"), "--out", str(run.parent / "reordered"),
                                 "--bootstrap", "50"])  # fmt: skip
    assert scored.exit_code == 0, scored.output
    done = runner.invoke(
        app, ["report", str(run), str(run.parent / "reordered"), "--compare", "--format", "md"]
    )
    assert done.exit_code == 0, done.output
    assert (
        "Paired test (reordered · rules" in done.output and "Interval overlap (reordered" not in done.output
    )
    assert "Δ +0.00 [0.00, 0.00]" in done.output


def test_runs_of_two_benchmarks_are_refused_naming_both(run: Path) -> None:
    from dataclasses import replace

    from nlibias.errors import DataError
    from nlibias.report.compare import compare
    from nlibias.report.load import load_run

    bbnli = load_run(run)
    bbq = replace(bbnli, path=run.parent / "bbq", label="bbq", metrics={**bbnli.metrics, "source": "bbq"})
    with pytest.raises(DataError, match=f"run {run} is of benchmark 'bbnli' and run {bbq.path} of 'bbq'"):
        compare([bbnli, bbq])
