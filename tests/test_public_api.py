"""The Python API as a user's code sees it: the public types at the package root, a per-sample
frame of a result, the TypedDicts through mypy (``py.typed``), and no temporary directories left
behind by ``expand()``."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

import nlibias


def test_public_types_are_at_the_root_and_listed() -> None:
    from nlibias.benchmarks.base import Benchmark
    from nlibias.jobs.results import AuditResult

    assert nlibias.AuditResult is AuditResult and nlibias.Benchmark is Benchmark
    for name in nlibias.__all__:
        assert getattr(nlibias, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        nlibias.nothing  # noqa: B018


def test_samples_frame_has_one_row_per_sample_and_model(tmp_path: Path) -> None:
    samples = nlibias.expand("occupations", out_dir=tmp_path / "occ")
    result = nlibias.audit(samples, models=["fake:a", "fake:b"], cache=False, bootstrap=0, progress=False)
    frame = result.samples_frame()
    records = samples.to_frame().set_index("id")
    assert len(frame) == 2 * len(samples) == len(result.predictions)
    assert set(frame["model"]) == {"a", "b"}  # fake:NAME reports as NAME
    assert not frame.duplicated(["id", "model"]).any()
    # every row carries its own sample's text and its own model's probabilities
    by_key = {(p.sample_id, p.model): p for p in result.predictions}
    for row in frame.sample(25, random_state=0).itertuples():
        prediction = by_key[(row.id, row.model)]
        assert prediction.probs is not None
        assert (row.p_entailment, row.p_neutral, row.p_contradiction) == prediction.probs
        assert row.label == prediction.label
        assert row.premise == records.loc[row.id, "premise"]
        assert row.hypothesis == records.loc[row.id, "hypothesis"]
    # a loaded run gives the same frame
    written = nlibias.audit(
        samples, models=["fake:a"], cache=False, bootstrap=0, progress=False, out_dir=tmp_path / "run"
    )
    loaded = nlibias.load_run(tmp_path / "run").samples_frame()
    assert loaded.equals(written.samples_frame())


def test_samples_frame_refuses_predictions_of_other_samples(tmp_path: Path) -> None:
    from nlibias.errors import DataError
    from nlibias.report.frame import samples_frame
    from nlibias.schema import Prediction

    samples = nlibias.expand("occupations", out_dir=tmp_path / "occ")
    with pytest.raises(DataError, match="'nope'"):
        samples_frame([Prediction("nope", "m", "neutral")], [])
    assert len(samples_frame([], [])) == 0 and "premise" in samples_frame([], []).columns
    assert samples.path.is_dir()


def test_expand_into_a_temporary_directory_cleans_up() -> None:
    samples = nlibias.expand("occupations")
    path = samples.path
    assert (path / "samples.jsonl").is_file()
    del samples
    gc.collect()
    assert not path.exists()


def test_a_users_mypy_sees_the_typed_results(tmp_path: Path) -> None:
    snippet = tmp_path / "user_code.py"
    snippet.write_text(
        "import nlibias\n"
        "r = nlibias.load_run('run')\n"
        "reveal_type(r.metrics['run'])\n"
        "r.metrics['modelz']\n",  # a typo the TypedDict catches
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--no-incremental",
            "--python-executable",
            sys.executable,
            str(snippet),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert "TypedDict(nlibias.io.results.RunInfo" in done.stdout, done.stdout
    assert "user_code.py:4: error:" in done.stdout and "[typeddict-item]" in done.stdout, done.stdout


def test_the_wheel_ships_py_typed_and_the_prompt_files() -> None:
    """Package data is what an installed copy has: a user's type checker reads py.typed."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = data["tool"]["setuptools"]["package-data"]["nlibias"]
    assert "py.typed" in shipped and (root / "src" / "nlibias" / "py.typed").is_file()
