"""The streamed audit (samples kept as columns, predictions as arrays) against the object audit:
the same files and numbers, chunked or not; its checks before compute; its memory per sample."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from nlibias.catalog.registry import read_benchmark_samples
from nlibias.errors import ConfigError, DataError, SourceError
from nlibias.io.samples import read_samples, write_samples
from nlibias.jobs.audit import audit_samples
from nlibias.models.base import BatchResult, Pair
from nlibias.models.fake import FakeNLIClassifier
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.classifier import ClassifierPredictor
from nlibias.testing.reference_audit import audit_objects as audit


@pytest.fixture(scope="module")
def bbnli_run(bbnli_samples_run: Path) -> Path:
    return bbnli_samples_run


@pytest.fixture(scope="module")
def wq_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from nlibias.benchmarks.wq_nli import expand_wq_nli

    run = tmp_path_factory.mktemp("wq")
    # 6,000 samples: whole rows, the repeated rows' region of the file left out (speed).
    write_samples(run, list(expand_wq_nli().samples)[:6000])
    return run


def _predictors() -> list[ClassifierPredictor]:
    return [
        ClassifierPredictor(FakeNLIClassifier("fake-a", seed=0)),
        ClassifierPredictor(FakeNLIClassifier("fake-b", seed=1, rules={"not": "contradiction"})),
    ]


def _both_ways(run: Path, tmp_path: Path, *, chunk_pairs: int, bootstrap: int) -> tuple[Path, Path]:
    objects, streamed = tmp_path / "objects", tmp_path / "streamed"
    audit(
        read_samples(run),
        _predictors(),
        out_dir=objects,
        cache=None,
        bootstrap=bootstrap,
        progress=False,
        samples_path=run,
    )
    audit_samples(
        read_benchmark_samples(run),
        [ClassifierPredictor(p.classifier, chunk_pairs=chunk_pairs) for p in _predictors()],
        out_dir=streamed,
        cache=None,
        bootstrap=bootstrap,
        progress=False,
    )
    return objects, streamed


def _metrics(out: Path) -> dict:
    return json.loads((out / "metrics.json").read_text())


@pytest.mark.parametrize("chunk_pairs", [16_384, 700])
def test_bbnli_streamed_equals_object_audit(bbnli_run: Path, tmp_path: Path, chunk_pairs: int) -> None:
    objects, streamed = _both_ways(bbnli_run, tmp_path, chunk_pairs=chunk_pairs, bootstrap=400)
    before, after = _metrics(objects), _metrics(streamed)
    assert after["models"] == before["models"]  # every measure, count, id list and CI
    assert (after["source"], after["n_samples"], after["bootstrap"]) == (
        before["source"],
        before["n_samples"],
        before["bootstrap"],
    )
    for model in ("fake-a", "fake-b"):
        old, new = before["run"]["models"][model]["stats"], after["run"]["models"][model]["stats"]
        # BBNLI repeats some (premise, hypothesis) pairs: each distinct one is predicted once.
        assert new["unique_inputs"] == old["unique_inputs"] < before["n_samples"]
        assert new["computed"] == old["computed"] == old["unique_inputs"]
    # The fake model answers each pair the same whatever its batch: the files are byte-identical.
    assert (streamed / "predictions.jsonl").read_bytes() == (objects / "predictions.jsonl").read_bytes()
    assert (streamed / "tables.txt").read_text() == (objects / "tables.txt").read_text()


def test_wq_nli_streamed_equals_object_audit(wq_run: Path, tmp_path: Path) -> None:
    objects, streamed = _both_ways(wq_run, tmp_path, chunk_pairs=1000, bootstrap=100)
    assert _metrics(streamed)["models"] == _metrics(objects)["models"]
    assert _metrics(streamed)["models"]["fake-a"]["overall"]["n_rows"] == 3000
    assert (streamed / "predictions.jsonl").read_bytes() == (objects / "predictions.jsonl").read_bytes()


class _CountingClassifier(FakeNLIClassifier):
    """The fake classifier, recording every pair it is asked for."""

    def __init__(self) -> None:
        super().__init__("counting")
        self.asked: list[Pair] = []

    def predict_batches(self, pairs: Sequence[Pair]) -> Iterator[BatchResult]:
        self.asked += list(pairs)
        yield from super().predict_batches(pairs)


def test_each_distinct_pair_goes_to_the_model_once_and_the_cache_answers_a_rerun(
    bbnli_run: Path, tmp_path: Path
) -> None:
    checked = read_benchmark_samples(bbnli_run)
    cache = PredictionCache(tmp_path / "cache.sqlite")
    first = _CountingClassifier()
    result = audit_samples(
        checked, [ClassifierPredictor(first, chunk_pairs=500)], out_dir=None, cache=cache, bootstrap=0,
        progress=False,
    )  # fmt: skip
    samples = read_samples(bbnli_run)
    distinct = list(dict.fromkeys((s.premise, s.hypothesis) for s in samples))
    assert first.asked == distinct  # first-occurrence order, across chunk boundaries, no repeats
    assert result.metrics["run"]["models"]["counting"]["stats"]["cached"] == 0
    again = _CountingClassifier()
    rerun = audit_samples(
        checked, [ClassifierPredictor(again)], out_dir=None, cache=cache, bootstrap=0, progress=False
    )
    assert again.asked == []
    stats = rerun.metrics["run"]["models"]["counting"]["stats"]
    assert (stats["cached"], stats["computed"]) == (len(distinct), 0)
    # Predictions made on demand from the arrays: one per sample, the label the most probable one.
    prediction = rerun.predictions[len(samples) - 1]
    assert prediction.sample_id == samples[-1].id
    assert prediction.probs is not None and prediction.label is not None
    assert (
        max(prediction.probs)
        == prediction.probs[["entailment", "neutral", "contradiction"].index(prediction.label)]
    )


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _row(i: int, **changes: object) -> dict:
    row = {
        "id": f"s{i}", "source": "bbnli", "domain": "gender", "subtopic": "t", "premise": "P.",
        "hypothesis": f"H {i}.", "gold": "neutral", "stereotype": "pro", "pair_key": f"k{i}",
    }  # fmt: skip
    return row | changes


def test_bad_input_is_refused_before_any_model_runs(tmp_path: Path) -> None:
    duplicate = _write_jsonl(tmp_path / "dup.jsonl", [_row(1), _row(2), _row(1, hypothesis="other")])
    with pytest.raises(
        SourceError, match=r"dup.jsonl:3: field id: duplicate sample id 's1' \(also sample 1\)"
    ):
        read_benchmark_samples(duplicate)
    mixed = _write_jsonl(tmp_path / "mixed.jsonl", [_row(1), _row(2, source="wq-nli")])
    with pytest.raises(DataError, match="mix sources bbnli, wq-nli"):
        read_benchmark_samples(mixed)
    unknown = _write_jsonl(tmp_path / "unknown.jsonl", [_row(1, source="bbnly")])
    with pytest.raises(SourceError, match=r"unknown.jsonl: field source: .*Did you mean 'bbnli'"):
        read_benchmark_samples(unknown)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(SourceError, match="no samples"):
        read_benchmark_samples(empty)
    bad_label = _write_jsonl(tmp_path / "bad.jsonl", [_row(1), _row(2, gold="yes")])
    with pytest.raises(SourceError, match=r"bad.jsonl:2: field gold"):
        read_benchmark_samples(bad_label)
    # Two pro samples in one pair: found by scoring placeholder answers, named from the file.
    twins = _write_jsonl(tmp_path / "twins.jsonl", [_row(1, pair_key="dup"), _row(2, pair_key="dup")])
    with pytest.raises(SourceError, match=r"twins.jsonl: pair_key 'dup' has more than one pro"):
        read_benchmark_samples(twins)
    wq_twins = [_row(i, source="wq-nli", pair_key="row7") for i in (1, 2)]
    with pytest.raises(
        SourceError, match=r"wq.jsonl: field pair_key: pair 'row7' has two pro samples \('s1', 's2'\)"
    ):
        read_benchmark_samples(_write_jsonl(tmp_path / "wq.jsonl", wq_twins))
    checked = read_benchmark_samples(_write_jsonl(tmp_path / "ok.jsonl", [_row(1)]))
    with pytest.raises(ConfigError, match="chunk_pairs"):
        ClassifierPredictor(FakeNLIClassifier(), chunk_pairs=0)
    with pytest.raises(ConfigError, match="given twice"):
        audit_samples(checked, _predictors() * 2, out_dir=None, cache=None)


def test_classifier_and_generative_predictors_share_the_one_path(bbnli_run: Path, tmp_path: Path) -> None:
    from nlibias.models.generative.backend import FakeGenerativeBackend
    from nlibias.models.generative.prompts import PROMPT_STYLES
    from nlibias.runtime.generative import GenerativePredictor

    def predictors() -> list:
        return [*_predictors()[:1], GenerativePredictor(FakeGenerativeBackend(), PROMPT_STYLES["true"])]

    objects, streamed = tmp_path / "objects", tmp_path / "streamed"
    audit(
        read_samples(bbnli_run),
        predictors(),
        out_dir=objects,
        cache=None,
        bootstrap=40,
        samples_path=bbnli_run,
    )
    audit_samples(read_benchmark_samples(bbnli_run), predictors(), out_dir=streamed, cache=None, bootstrap=40,
                  progress=False)  # fmt: skip
    assert (objects / "predictions.jsonl").read_bytes() == (streamed / "predictions.jsonl").read_bytes()
    expected, got = _metrics(objects), _metrics(streamed)
    assert got["models"] == expected["models"]
    assert got["predictor_kinds"] == {"fake-a": "classifier", "fake|prompt=true|scored": "generative"}


def test_streamed_audit_holds_a_fraction_of_the_object_audit(
    bbnli_x8_samples_run: Path, traced_peak: Callable[[Callable[[], object]], int]
) -> None:
    """Python memory at the peak of each audit of BBNLI copied 8 times (25,072 samples, each copy
    with its own ids, keys and hypotheses), per sample. The object audit holds the samples
    (~0.45 kB each), a Prediction per sample (~0.33 kB) and the scorer's lists; the streamed one
    columns (~0.15 kB) and three floats a sample. Measured: objects ~1.7 kB, streamed ~0.45 kB."""
    run = bbnli_x8_samples_run
    n = 8 * 3134

    def objects() -> None:
        audit(read_samples(run), _predictors()[:1], out_dir=None, cache=None, bootstrap=50, progress=False)

    def streamed() -> None:
        checked = read_benchmark_samples(run)
        predictor = ClassifierPredictor(_predictors()[0].classifier, chunk_pairs=2000)
        # a chunk's texts are a fixed cost: small here, so that n dominates
        audit_samples(checked, [predictor], out_dir=None, cache=None, bootstrap=50, progress=False)

    object_peak, streamed_peak = traced_peak(objects) / n, traced_peak(streamed) / n
    print(f"objects {object_peak:.0f} B, streamed {streamed_peak:.0f} B a sample")
    assert streamed_peak < 600, streamed_peak
    assert streamed_peak < object_peak / 3, (streamed_peak, object_peak)


@pytest.mark.parametrize("change", ["appended", "truncated", "rewritten"])
def test_a_file_changed_after_it_was_read_is_audited_as_read_and_the_run_says_so(
    tmp_path: Path, change: str
) -> None:
    """The samples are read once: a change after that does not reach the audit, and the run's
    manifest records the file as it was read, so a report of the run names the change."""
    from nlibias.io.run_manifest import changed_inputs

    path = _write_jsonl(tmp_path / "s.jsonl", [_row(1), _row(2, stereotype="anti", pair_key="k1")])
    checked = read_benchmark_samples(path)
    lines = path.read_text().splitlines(keepends=True)
    if change == "appended":
        lines.append(json.dumps(_row(3)) + "\n")
    elif change == "truncated":
        lines = lines[:1]
    else:
        lines[1] = json.dumps({"id": "other"}) + "\n"
    path.write_text("".join(lines))
    out = tmp_path / "run"
    result = audit_samples(checked, _predictors()[:1], out_dir=out, cache=None, bootstrap=0, progress=False)
    assert [p.sample_id for p in result.predictions] == ["s1", "s2"]
    (changed,) = changed_inputs(out)
    assert f"{path.resolve()} changed after the run (SHA-256 {checked.sha256[:12]} when audited" in changed


def test_a_file_changed_while_it_is_read_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nlibias.io.samples as samples_io

    path = _write_jsonl(tmp_path / "s.jsonl", [_row(1), _row(2, stereotype="anti", pair_key="k1")])
    real = samples_io.iter_samples

    def then_append(*args: object, **kwargs: object) -> Iterator[object]:
        yield from real(*args, **kwargs)  # type: ignore[arg-type]
        with path.open("a") as handle:
            handle.write(json.dumps(_row(3)) + "\n")

    monkeypatch.setattr(samples_io, "iter_samples", then_append)
    with pytest.raises(SourceError, match=r"s\.jsonl: the file changed while it was being read"):
        read_benchmark_samples(path)


def test_predictions_lines_are_what_json_writes_for_every_row(tmp_path: Path) -> None:
    """The audit writes ``predictions.jsonl`` from formatted lines; they must be byte for byte
    what ``json.dumps`` of each row gives, for ids and models that JSON must escape too."""
    import numpy as np

    from nlibias.io.predictions import prediction_lines, write_predictions
    from nlibias.runtime.classifier import DistinctPairs
    from nlibias.schema import Sample
    from nlibias.schema.columns import SampleColumns
    from nlibias.schema.outputs import ChainedRows, ProbabilityRows

    ids = ['q"uote', "back\\slash", "new\nline\ttab", "é ü 漢字 🙂", "\u2028\x00\x1f", "plain:1"] * 1500
    samples = [
        Sample(id=f"{i}:{text}", source="bbnli", domain="d", subtopic="t", premise="P",
               hypothesis=f"H{i % 700}", gold="neutral")
        for i, text in enumerate(ids)
    ]  # fmt: skip
    columns = SampleColumns.from_samples(samples)
    distinct = DistinctPairs.of(columns)  # 700 distinct texts: samples share rows
    rng = np.random.default_rng(0)
    probs = {model: rng.dirichlet([1.0, 1.0, 1.0], size=len(distinct)) for model in ("m", 'model "2" \\ é')}
    probs["m"][3] = [1.0, 0.0, 0.0]  # exact zeros and ones
    predictions = ChainedRows([ProbabilityRows(m, columns.ids, distinct.slot, p) for m, p in probs.items()])
    expected = "".join(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in predictions)
    assert "".join(prediction_lines(predictions)) == expected
    written = write_predictions(tmp_path / "p.jsonl", predictions)
    assert written.read_text(encoding="utf-8") == expected
    assert expected.count("\n") == 2 * len(samples)  # 9,000 rows a model: more than one block

    probs["m"][5, 1] = np.nan
    with pytest.raises(ValueError, match="not finite"):
        write_predictions(
            tmp_path / "nan.jsonl", ProbabilityRows("m", columns.ids, distinct.slot, probs["m"])
        )
