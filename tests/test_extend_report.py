"""`nlibias report RUN` of an extend run shows its dataset card with the "Fill models compared"
table (docs/extension.md), a run waiting for judgements shows its fill comparison, and
`report RUN/dataset` is accepted (it reports the run the dataset belongs to)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app


def extend(run: Path, *more: str) -> None:
    args = ["extend", "--out", str(run), "--cache", str(run.parent / "c.sqlite"), "--mlm", "fake"]
    args += ["--compare-fill", "fake:other", "--filter-model", "fake:a", "--holdout-model", "fake:held"]
    args += ["--subtopic", "man_is_to_programmer", "--top-k", "2", "--no-progress", *more]
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 3), result.output


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("ext") / "run"
    extend(run, "--unvalidated")
    assert (run / "dataset" / "README.md").is_file()
    return run


def report(target: Path, out: Path) -> str:
    result = CliRunner().invoke(app, ["report", str(target), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_the_report_of_an_extend_run_shows_its_card_and_fill_comparison(
    finished: Path, tmp_path: Path
) -> None:
    html = report(finished, tmp_path / "r.html")
    assert '<section id="card">' in html and '<section id="provenance">' in html
    assert "dataset card" in html and "Fill models compared" in html
    assert "fake:other" in html  # the compared fill's row


def test_report_of_the_dataset_folder_is_accepted(finished: Path, tmp_path: Path) -> None:
    html = report(finished / "dataset", tmp_path / "d.html")
    assert '<section id="card">' in html and "Fill models compared" in html


def test_a_run_waiting_for_judgements_shows_its_fill_comparison(tmp_path: Path) -> None:
    run = tmp_path / "waiting"
    extend(run)  # stops at the validation queue: no dataset, no card yet
    assert not (run / "dataset").exists() and (run / "filter" / "fill_compare.json").is_file()
    html = report(run, tmp_path / "w.html")
    assert '<section id="card">' in html and "Fill models compared" in html and "fake:other" in html
