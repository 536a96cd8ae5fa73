"""``report --compare`` compares runs, not spellings: one run, or one run named twice (``./a``,
``a/``, a symlink, its metrics.json), is refused; a copy of a run is another run; runs over the
same samples in another order are paired as runs over the same samples are; runs of two
benchmarks are refused; as the gate: models of another kind are not compared, and samples edited
since the audits are refused."""

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


def _audit(samples: Path, out: Path, **models: list[str]) -> Path:
    from nlibias.jobs.audit import run_audit
    from nlibias.runtime.model_set import ModelSet
    from nlibias.runtime.options import ModelOptions, RunOptions

    generative = bool(models.get("generative"))
    run_audit(
        samples,
        ModelSet.of(**models, prompts=["true"] if generative else []),
        run=RunOptions(cache=False, bootstrap=50, progress=False),
        out_dir=out,
        options=ModelOptions(mode="generated" if generative else "scored"),
    )
    return out


def test_models_of_another_kind_are_not_compared(run: Path, tmp_path: Path) -> None:
    """The gate's rule (a classifier and a generative LM measure different things): a column is
    compared with a model of its own kind only; runs with none to compare are refused."""
    from nlibias.jobs.report import make_report
    from nlibias.report.compare import compare, format_comparison
    from nlibias.report.load import load_run
    from nlibias.schema.applies import InapplicableOption

    samples = run.parent / "samples" / "samples.jsonl"
    generative = _audit(samples, tmp_path / "G", generative=["fake:g"])
    with pytest.raises(InapplicableOption) as caught:
        make_report([run, generative], compare=True, fmt="md")
    assert caught.value.parameter == "compare" and str(generative) in str(caught.value)
    assert "**G**" in make_report([run, generative], fmt="md").text  # side by side: the paper tables
    both = _audit(samples, tmp_path / "both", models=["fake:m"], generative=["fake:g"])
    alone = compare([load_run(both)])  # one run's generative column is not measured against its classifier
    assert alone.tests == ["reference", "reference"] and alone.n_differences == 0
    later = compare([load_run(run), load_run(both)])
    assert later.tests[-2] in ("paired", "overlap") and later.tests[-1] == "unlike", later.tests
    assert "Not compared (both · g|prompt=true|generated)" in format_comparison(later)


def test_samples_edited_after_the_audits_are_refused_as_the_gate_refuses_them(
    run: Path, tmp_path: Path
) -> None:
    import shutil

    import nlibias
    from nlibias.errors import NlibiasError

    folder = Path(shutil.copytree(run.parent / "samples", tmp_path / "s"))
    one, two = (
        _audit(folder / "samples.jsonl", tmp_path / name, models=["fake:m"]) for name in ("one", "two")
    )
    lines = (folder / "samples.jsonl").read_text().splitlines()
    edited = {**json.loads(lines[0]), "hypothesis": "Nobody is the main breadwinner."}
    (folder / "samples.jsonl").write_text("\n".join([json.dumps(edited), *lines[1:]]) + "\n")
    for call in (
        lambda: nlibias.make_report([one, two], compare=True, fmt="md"),
        lambda: nlibias.gate(one, two),
    ):
        with pytest.raises(NlibiasError, match="is not the one the run audited") as caught:
            call()
        assert str(folder / "samples.jsonl") in str(caught.value)
