"""``nlibias score`` without holding the file (predictions as arrays, samples as columns) against
the object scoring it replaced (:func:`nlibias.jobs.audit.score`): the same files and numbers, the
same refusals with the file and line, the fallbacks, and its memory per sample."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app
from nlibias.errors import DataError, SourceError
from nlibias.io.predictions import read_prediction_arrays
from nlibias.io.samples import read_samples, write_samples
from nlibias.jobs.score import run_score
from nlibias.schema import LABELS, Sample
from nlibias.testing.reference_audit import score_objects


@pytest.fixture(scope="module")
def bbnli_run(bbnli_samples_run: Path) -> Path:
    return bbnli_samples_run


def _probs(rng: random.Random) -> dict[str, float]:
    weights = [rng.random() + 1e-3 for _ in LABELS]
    return {label: w / sum(weights) for label, w in zip(LABELS, weights, strict=True)}


def _rows(
    samples: list[Sample], *, seed: int, model: str | None, probs: bool, label: str = "argmax"
) -> list[dict]:
    """One row per sample: probabilities (or none), a label that is the most probable one, a
    random one (``label="random"``), or null now and then (``"some-null"``: no answer, so without
    probabilities, as the file format asks), plus a field that another tool might add."""
    rng = random.Random(seed)
    rows = []
    for sample in samples:
        p = _probs(rng)
        row: dict[str, Any] = {"id": sample.id, "label": max(p, key=p.__getitem__)}
        if label == "random":
            row["label"] = rng.choice(LABELS)
        elif label == "some-null" and rng.random() < 0.05:
            row["label"] = None
        if model is not None:
            row["model"] = model
        if probs and row["label"] is not None:
            row["probs"] = p
        row["tool_note"] = f"row {len(rows)}"
        rows.append(row)
    return rows


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _score_both(run: Path, predictions: Path, tmp_path: Path, bootstrap: int = 100) -> tuple[Path, Path]:
    objects, streamed = tmp_path / "objects", tmp_path / "streamed"
    score_objects(run, predictions, out_dir=objects, bootstrap=bootstrap)
    run_score(run, predictions, out_dir=streamed, bootstrap=bootstrap)
    return objects, streamed


def _assert_same_files(objects: Path, streamed: Path) -> dict:
    expected, got = (json.loads((d / "metrics.json").read_text()) for d in (objects, streamed))
    assert got["models"] == expected["models"]
    for key in ("source", "n_samples", "bootstrap"):
        assert got[key] == expected[key]
    for key in ("predictions", "samples_scored", "samples_given", "samples"):
        assert got["run"].get(key) == expected["run"].get(key), key
    assert (streamed / "predictions.jsonl").read_bytes() == (objects / "predictions.jsonl").read_bytes()
    assert (streamed / "tables.txt").read_text() == (objects / "tables.txt").read_text()
    return got


def test_bbnli_two_models_a_subset_and_label_only_rows_score_as_the_objects_do(
    bbnli_run: Path, tmp_path: Path
) -> None:
    samples = read_samples(bbnli_run)
    # Every 7th sample left out by both models: the scoring covers the others only.
    kept = [s for i, s in enumerate(samples) if i % 7]
    rows = _rows(kept, seed=0, model="with-probs", probs=True, label="some-null")
    rows += _rows(list(reversed(kept)), seed=1, model="labels-only", probs=False, label="random")
    predictions = _write(tmp_path / "p.jsonl", rows)
    got = _assert_same_files(*_score_both(bbnli_run, predictions, tmp_path))
    assert list(got["models"]) == ["with-probs", "labels-only"]
    assert got["run"]["samples_scored"] == len(kept) < got["run"]["samples_given"] == len(samples)
    # The rows' labels are scored, not their most probable ones: a null label is no answer.
    assert got["models"]["with-probs"]["overall"]["n_unanswered"] > 0


def test_wq_nli_and_occupations_score_as_the_objects_do(tmp_path: Path) -> None:
    from nlibias.benchmarks.occupations import expand_occupations
    from nlibias.benchmarks.wq_nli import expand_wq_nli

    for name, samples in (
        ("wq", list(expand_wq_nli().samples)[:3000]),
        ("occupations", list(expand_occupations().samples)),
    ):
        run = tmp_path / name
        write_samples(run, samples)
        # Occupations' S compares the given labels, dP the probabilities. Every row answers: these
        # measures need probabilities on every row, and a row with no answer has none.
        rows = _rows(samples, seed=2, model="m", probs=True)
        predictions = _write(tmp_path / f"{name}.jsonl", rows)
        got = _assert_same_files(*_score_both(run, predictions, tmp_path / f"out-{name}"))
        assert got["source"] == samples[0].source


def test_rows_without_model_take_the_file_name_and_the_cli_scores_the_same(
    bbnli_run: Path, tmp_path: Path
) -> None:
    samples = read_samples(bbnli_run)[:400]
    predictions = _write(tmp_path / "other-tool.jsonl", _rows(samples, seed=3, model=None, probs=False))
    objects, _ = _score_both(bbnli_run, predictions, tmp_path)
    out = tmp_path / "cli"
    result = CliRunner().invoke(
        app,
        [
            "score",
            "--samples",
            str(bbnli_run),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
            "--bootstrap",
            "100",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "samples have no prediction and are left out" in result.output
    got = _assert_same_files(objects, out)
    assert list(got["models"]) == ["other-tool"]


def test_bad_rows_are_refused_with_the_line(bbnli_run: Path, tmp_path: Path) -> None:
    samples = read_samples(bbnli_run)[:10]
    rows = _rows(samples, seed=4, model="m", probs=True)
    cases = {
        "unknown": (
            [*rows[:3], {**rows[3], "id": "nope"}],
            r"unknown.jsonl:4: field id: unknown sample id 'nope'",
        ),
        "duplicate": (
            [*rows[:5], rows[2]],
            r"duplicate.jsonl:6: field id: duplicate row for id .* and model 'm' \(first on line 3\)",
        ),
        "label": (
            [*rows[:2], {**rows[2], "label": "yes"}],
            r"label.jsonl:3: field label: unknown label 'yes'",
        ),
        "json": (rows[:2], r"json.jsonl:3: invalid JSON"),
    }
    for name, (bad, pattern) in cases.items():
        path = _write(tmp_path / f"{name}.jsonl", bad)
        if name == "json":
            path.write_text(path.read_text() + "{not json\n")
        with pytest.raises(SourceError, match=pattern):
            run_score(bbnli_run, path, out_dir=None, bootstrap=0)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(SourceError, match="no predictions"):
        run_score(bbnli_run, empty, out_dir=None, bootstrap=0)


def test_a_model_that_misses_a_sample_another_model_predicted_is_refused(
    bbnli_run: Path, tmp_path: Path
) -> None:
    samples = read_samples(bbnli_run)[:20]
    rows = _rows(samples, seed=5, model="a", probs=False) + _rows(
        samples[:18], seed=6, model="b", probs=False
    )
    path = _write(tmp_path / "p.jsonl", rows)
    message = rf"2 samples have no prediction \(first: '{samples[18].id}'\)"
    with pytest.raises(DataError, match=message):
        run_score(bbnli_run, path, out_dir=None, bootstrap=0)
    with pytest.raises(DataError, match=message):  # the object scoring says the same
        score_objects(bbnli_run, path, out_dir=None, bootstrap=0)


def test_a_predictions_file_changed_before_it_is_copied_is_refused(bbnli_run: Path, tmp_path: Path) -> None:
    samples = read_samples(bbnli_run)[:10]
    path = _write(tmp_path / "p.jsonl", _rows(samples, seed=7, model="m", probs=True))
    ids = [s.id for s in samples]
    arrays = read_prediction_arrays(
        path, position_of=lambda i: ids.index(i) if i in ids else -1, n_samples=10
    )
    assert arrays.rows[9].sample_id == samples[9].id  # read again from its offset
    path.write_text(path.read_text() + "\n")
    os.utime(path, ns=(1, 1))  # a different size and time
    with pytest.raises(SourceError, match="changed after it was checked"):
        list(arrays.rows)


def test_generative_rows_are_scored_by_their_kind_on_the_one_path(bbnli_run: Path, tmp_path: Path) -> None:
    samples = read_samples(bbnli_run)[:40]
    # A name that looks generative does not decide the measures: the rows' kind does.
    named_only = _write(
        tmp_path / "n.jsonl", _rows(samples, seed=8, model="x|prompt=true|scored", probs=False)
    )
    overall = run_score(bbnli_run, named_only, out_dir=None, bootstrap=0).metrics["models"]
    assert "yes_rate_pro" not in overall["x|prompt=true|scored"]["overall"]
    generative_rows = [
        {**row, "kind": "generative", "answer": "yes" if row["label"] == "entailment" else "no"}
        for row in _rows(samples, seed=8, model="lm|prompt=true|scored", probs=False)
    ]
    generative = _write(tmp_path / "g.jsonl", generative_rows)
    objects, streamed = _score_both(bbnli_run, generative, tmp_path, bootstrap=40)
    metrics = _assert_same_files(objects, streamed)
    assert metrics["predictor_kinds"] == {"lm|prompt=true|scored": "generative"}
    assert "yes_rate_pro" in metrics["models"]["lm|prompt=true|scored"]["overall"]
    assert sorted(p.name for p in streamed.iterdir()) == [
        "manifest.json",
        "metrics.json",
        "predictions.jsonl",
        "tables.txt",
    ]


def test_streamed_scoring_holds_a_fraction_of_the_object_scoring(
    bbnli_x8_samples_run: Path, tmp_path: Path, traced_peak: Callable[[Callable[[], object]], int]
) -> None:
    """Python memory at the peak of scoring a predictions file of BBNLI copied 8 times (25,072
    samples), per sample. The object scoring holds a Sample (~0.45 kB) and a Prediction (~0.35 kB
    with the row's extra field) per row and the scorer's lists; the streamed one columns (~0.15
    kB), ~30 bytes a sample and model, and 8 bytes a row. Measured: objects ~1.6 kB, streamed
    ~0.47 kB (the measures' transient arrays included)."""
    run = bbnli_x8_samples_run
    samples = read_samples(run)
    predictions = _write(tmp_path / "p.jsonl", _rows(samples, seed=9, model="m", probs=True))
    n = len(samples)
    del samples

    def objects() -> None:
        score_objects(run, predictions, out_dir=None, bootstrap=50)

    def streamed() -> None:
        run_score(run, predictions, out_dir=None, bootstrap=50)

    object_peak, streamed_peak = traced_peak(objects) / n, traced_peak(streamed) / n
    print(f"objects {object_peak:.0f} B, streamed {streamed_peak:.0f} B a sample")
    assert streamed_peak < 600, streamed_peak
    assert streamed_peak < object_peak / 3, (streamed_peak, object_peak)


def test_rescoring_a_run_directory_in_place_keeps_its_predictions(bbnli_run: Path, tmp_path: Path) -> None:
    """``--predictions RUN --out RUN``: the copy is written to a temporary file and renamed, so
    the file being read is replaced only once it has been read to the end."""
    samples = read_samples(bbnli_run)[:300]
    run = tmp_path / "run"
    run.mkdir()
    original = _write(run / "predictions.jsonl", _rows(samples, seed=10, model="m", probs=True)).read_bytes()
    first = run_score(bbnli_run, run, out_dir=run, bootstrap=0)
    normalised = (run / "predictions.jsonl").read_bytes()
    assert normalised.count(b"\n") == original.count(b"\n") == 300
    again = run_score(bbnli_run, run, out_dir=run, bootstrap=0)
    assert (run / "predictions.jsonl").read_bytes() == normalised  # a normalised file is a fixed point
    assert again.metrics["models"] == first.metrics["models"]
    # The result's rows are read back from the file now in the run directory.
    assert [p.to_dict() for p in again.predictions] == [json.loads(row) for row in normalised.splitlines()]
    assert again.predictions[-1].sample_id == samples[-1].id


def test_rows_as_nlibias_writes_them_and_rows_that_need_rewriting_give_the_object_files(
    bbnli_run: Path, tmp_path: Path
) -> None:
    """Rows already in ``write_predictions``' form are written as they are read; any difference
    (field order, integer or reordered probabilities, a null ``probs``, no model) is rewritten."""
    samples = read_samples(bbnli_run)[:240]
    rng = random.Random(11)
    rows: list[dict[str, Any]] = []
    for i, sample in enumerate(samples):
        p = _probs(rng)
        row: dict[str, Any] = {"id": sample.id, "model": "m", "label": max(p, key=p.__getitem__), "probs": p}
        variant = i % 6
        if variant == 1:
            row = {"label": row["label"], **row}  # another field order
        elif variant == 2:
            row["probs"] = {"entailment": 0, "neutral": 1, "contradiction": 0}  # integers
            row["label"] = "neutral"
        elif variant == 3:
            row["probs"] = dict(reversed(list(p.items())))
        elif variant == 4:
            row["probs"] = None
            row["extra"] = [1, "é"]
        elif variant == 5:
            row["after"] = {"k": 1}  # an extra field after the written ones: still as is
        rows.append(row)
    predictions = _write(tmp_path / "p.jsonl", rows)
    objects, streamed = _score_both(bbnli_run, predictions, tmp_path)
    _assert_same_files(objects, streamed)
    written = [json.loads(line) for line in (streamed / "predictions.jsonl").read_text().splitlines()]
    assert written[2]["probs"] == {"entailment": 0.0, "neutral": 1.0, "contradiction": 0.0}
    assert "probs" not in written[4] and list(written[1])[:3] == ["id", "model", "label"]


def test_a_refused_file_leaves_the_run_directory_as_it_was(bbnli_run: Path, tmp_path: Path) -> None:
    """The copy is written while the file is read; a bad row near the end discards it."""
    samples = read_samples(bbnli_run)[:200]
    out = tmp_path / "out"
    good = _write(tmp_path / "good.jsonl", _rows(samples, seed=12, model="m", probs=True))
    run_score(bbnli_run, good, out_dir=out, bootstrap=0)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    rows = _rows(samples, seed=13, model="m", probs=True)
    rows[-2]["label"] = "maybe"
    with pytest.raises(SourceError, match=r"bad.jsonl:199: field label"):
        run_score(bbnli_run, _write(tmp_path / "bad.jsonl", rows), out_dir=out, bootstrap=0)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no temporary file left either
