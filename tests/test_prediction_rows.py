"""One gate for prediction rows, whatever route they take (issue #34, part C): a predictions file,
a predictor object passed to ``nlibias.audit``, and model keys. Every rule lives in
:mod:`nlibias.schema.prediction_rows`; each route names where a refused row came from (the file and
line, the predictor's name and the sample id). The lm-eval log route is tested in
``tests/test_integrations_lm_eval.py``; ``samples_frame()``'s samples checks are at the end."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nlibias
from nlibias.catalog.registry import read_benchmark_samples
from nlibias.errors import ConfigError, DataError, SourceError
from nlibias.io.predictions import read_predictions
from nlibias.io.samples import write_samples
from nlibias.jobs.audit import audit_samples, run_audit
from nlibias.runtime.contract import PredictorRun
from nlibias.runtime.options import RunOptions
from nlibias.schema import LABELS, Prediction, Sample
from nlibias.schema.outputs import ModelOutputs
from nlibias.schema.prediction_rows import PROBABILITY_TOLERANCE, RowRefused, check_row
from nlibias.schema.predictor_rows import check_predictor_run

PAIR = [
    Sample(id=f"x:{s}", source="bbnli", domain="d", subtopic="t", premise="P.", hypothesis=f"{s} H.",
           gold="neutral", stereotype=s, pair_key="x")
    for s in ("pro", "anti")
]  # fmt: skip
IDS = [s.id for s in PAIR]


def _probs(e: float, n: float, c: float) -> dict[str, float]:
    return {"entailment": e, "neutral": n, "contradiction": c}


def _file_refusal(tmp_path: Path, row: dict[str, Any]) -> SourceError:
    """The refusal of ``row`` on line 2 of a predictions file (line 1 is a valid row)."""
    path = tmp_path / "p.jsonl"
    first = {"id": "x:pro", "model": "m", "label": "neutral"}
    path.write_text(json.dumps(first) + "\n" + json.dumps({"model": "m", **row}) + "\n")
    with pytest.raises(SourceError) as caught:
        read_predictions(path, known_ids=IDS)
    assert caught.value.path == str(path) and caught.value.line == 2
    return caught.value


# --- rows of a predictions file: the checks that were skipped ------------------------------------


def test_a_label_contradicting_probs_is_refused_also_beside_an_answer(tmp_path: Path) -> None:
    # before: the argmax check was skipped for a row carrying an answer key
    row = {"id": "x:anti", "label": "entailment", "answer": "yes", "probs": _probs(0.1, 0.8, 0.1)}
    refused = _file_refusal(tmp_path, row)
    assert refused.field == "label" and "most probable label is neutral" in refused.reason


def test_an_answer_that_is_no_answer_word_is_refused(tmp_path: Path) -> None:
    refused = _file_refusal(tmp_path, {"id": "x:anti", "label": "entailment", "answer": "banana"})
    assert refused.field == "answer" and "'banana' is not an answer word of yes/no/maybe" in refused.reason
    refused = _file_refusal(
        tmp_path, {"id": "x:anti", "label": "entailment", "answer": "maybe", "answers": "yes/no"}
    )
    assert refused.field == "answer" and "of yes/no" in refused.reason


def test_a_null_label_beside_probs_is_refused_on_every_route(tmp_path: Path) -> None:
    """Before, the row was counted as unanswered (a tool that wrote only probs scored as answering
    nothing); it is now refused by the file reader and for a predictor object alike, and a null
    label without probs stays the file format's "no answer"."""
    row = {"id": "x:anti", "label": None, "probs": _probs(0.2, 0.7, 0.1)}
    refused = _file_refusal(tmp_path, row)
    assert refused.field == "label" and "label is null beside probs" in refused.reason
    assert "leave probs out" in (refused.fix or "")
    rows = [Prediction("x:pro", "m", "neutral"), Prediction("x:anti", "m", None, (0.2, 0.7, 0.1))]
    run = PredictorRun.of_predictions(rows, "classifier", {})
    with pytest.raises(Exception, match="label is null beside probs"):
        check_predictor_run("m", "classifier", run, IDS)
    path = tmp_path / "ok.jsonl"
    path.write_text(
        json.dumps({"id": "x:pro", "label": "neutral"})
        + "\n"
        + json.dumps({"id": "x:anti", "label": None})
        + "\n"
    )
    assert [p.label for p in read_predictions(path)] == ["neutral", None]


def test_a_log_likelihood_above_zero_is_refused(tmp_path: Path) -> None:
    row = {"id": "x:anti", "label": None, "kind": "sentence-logprob", "score_more": 3.0}
    refused = _file_refusal(tmp_path, row)
    assert refused.field == "score_more" and "above 0" in refused.reason


_SCORED = {"id": "x:anti", "label": None, "kind": "sentence-logprob", "score_more": -10.0,
           "score_less": -12.0, "tokens_more": 3, "tokens_less": 3}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        ({"tokens_less": 0}, "tokens_less", "score_less -12.0 is a sum over 0 tokens"),
        ({"no_pair": True}, "no_pair", "no_pair is true beside score_more"),
        ({"no_pair": "yes"}, "no_pair", "'yes' is not true or false"),
    ],
)
def test_a_sentence_score_row_that_contradicts_itself_is_refused_on_every_route(
    tmp_path: Path, change: dict[str, Any], field: str, reason: str
) -> None:
    """A score over no tokens (a sum of nothing is 0) and ``no_pair`` beside scores were scored as
    given; both are the row's rules now, so the file reader and a predictor object's rows refuse them."""
    refused = _file_refusal(tmp_path, {**_SCORED, **change})
    assert refused.field == field and reason in refused.reason
    with pytest.raises(RowRefused) as caught:
        check_row({**_SCORED, **change})
    assert caught.value.field == field


def test_a_sentence_score_of_zero_over_no_tokens_and_a_bare_no_pair_row_pass() -> None:
    check_row({**_SCORED, "score_more": 0.0, "tokens_more": 0})  # e.g. no shared token to score
    check_row({"id": "x:anti", "label": None, "kind": "sentence-logprob", "no_pair": True})
    check_row({**_SCORED, "no_pair": False})


# --- predictor objects passed to nlibias.audit -----------------------------------------------------


class _Rows:
    """A predictor object returning whatever ``answer(ids)`` makes of the samples' ids."""

    kind = "classifier"

    def __init__(self, name: Any, answer: Any) -> None:
        self.name, self._answer = name, answer

    def describe(self) -> dict[str, Any]:
        return {"model": "test rows"}

    def predict(self, samples: Any, cache: Any, *, progress: bool = True) -> Any:
        return self._answer(list(samples.columns.ids))


def _audit(predictor: Any) -> Any:
    return audit_samples(read_benchmark_samples(PAIR), [predictor], out_dir=None, cache=None, bootstrap=0)


def _of(probs: list[list[float]], name: str = "mine", ids: list[str] | None = None) -> Any:
    return lambda given: PredictorRun.of_probabilities(name, ids or given, np.array(probs))


@pytest.mark.parametrize(
    ("probs", "field", "reason"),
    [
        # 0.2 + 0.3 + 0.1 = 0.6: not a distribution
        ([[0.2, 0.3, 0.1], [0.2, 0.7, 0.1]], "probs", "probabilities sum to 0.600000, not 1"),
        # -0.5 + 1.0 + 0.5 = 1.0, but one is negative
        ([[0.2, 0.7, 0.1], [-0.5, 1.0, 0.5]], "probs.entailment", "-0.5 is not a probability"),
        ([[0.2, 0.7, 0.1], [np.nan, 0.5, 0.5]], "probs.entailment", "nan is not a probability"),
    ],
)
def test_a_predictor_s_bad_probabilities_are_refused_naming_it_and_the_sample(
    probs: list[list[float]], field: str, reason: str
) -> None:
    with pytest.raises(DataError) as caught:
        _audit(_Rows("mine", _of(probs)))
    bad = 0 if field == "probs" else 1
    assert caught.value.model == "mine" and caught.value.sample == IDS[bad] and caught.value.field == field
    assert f"predictor 'mine', sample {IDS[bad]!r}" in str(caught.value) and reason in str(caught.value)


def test_a_row_for_an_unknown_sample_in_the_place_of_a_real_one_is_refused() -> None:
    predictor = _Rows("mine", _of([[0.2, 0.7, 0.1]] * 2, ids=["x:pro", "no-such-sample"]))
    with pytest.raises(DataError, match=r"predictor 'mine' returned a row for sample 'no-such-sample' in the place "
                       r"of sample 'x:anti' \(row 2\)") as caught:  # fmt: skip
        _audit(predictor)
    assert caught.value.sample == "x:anti" and caught.value.model == "mine"


def test_a_predictor_named_empty_or_returning_a_list_is_refused() -> None:
    with pytest.raises(ConfigError, match="a model's name is empty") as caught:
        _audit(_Rows("", _of([[0.2, 0.7, 0.1]] * 2, name="")))
    assert caught.value.parameter == "models"
    listing = _Rows("mine", lambda ids: [Prediction(i, "mine", "neutral") for i in ids])
    with pytest.raises(DataError, match=r"predictor 'mine': predict\(\) returned list, not a PredictorRun"):
        _audit(listing)


def test_a_predictor_s_rows_under_another_name_or_outputs_unlike_its_rows_are_refused() -> None:
    with pytest.raises(DataError, match="returned rows under the model name 'other'"):
        _audit(_Rows("mine", _of([[0.2, 0.7, 0.1]] * 2, name="other")))

    def unlike(ids: list[str]) -> PredictorRun:
        rows = [Prediction(i, "mine", "neutral", (0.2, 0.7, 0.1)) for i in ids]
        outputs = ModelOutputs("classifier", np.array([[0.2, 0.7, 0.1], [0.7, 0.2, 0.1]]))
        return PredictorRun(rows, outputs, {})

    with pytest.raises(DataError, match="sample 'x:anti': its outputs' probabilities") as caught:
        _audit(_Rows("mine", unlike))
    assert caught.value.sample == "x:anti"


def test_a_valid_predictor_still_audits() -> None:
    result = _audit(_Rows("mine", _of([[0.2, 0.7, 0.1], [0.7, 0.2, 0.1]])))
    assert [p.label for p in result.predictions] == ["neutral", "entailment"]


# --- model keys ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("models", "message"),
    [
        (["fake:"], "'fake:' names no model after 'fake:'"),
        (["fake:m|prompt=true|scored"], "is written as a generative LM's key"),
        (["fake:m|tp=shared"], "is written as a sentence scorer's key"),
    ],
)
def test_a_model_spec_naming_no_model_or_another_kind_s_key_is_refused(
    tmp_path: Path, models: list[str], message: str
) -> None:
    run = write_samples(tmp_path, PAIR)["jsonl"].parent
    with pytest.raises(ConfigError, match=message.replace("|", r"\|")) as caught:
        run_audit(run, models, run=RunOptions(cache=False, bootstrap=0, progress=False))
    assert caught.value.parameter == "models"


# --- the same rules on every route (property tests) ------------------------------------------------

_weights = st.lists(st.floats(min_value=0.01, max_value=1.0), min_size=3, max_size=3)


def _routes(probs: list[float], tmp: Path) -> dict[str, str | None]:
    """Each route's verdict on one sample's row with ``probs`` labelled by its argmax (None:
    accepted; else the refused field): a predictions file, a predictor object, the record."""
    label = LABELS[int(np.argmax(probs))]
    row = {"id": "x:pro", "model": "m", "label": label, "probs": dict(zip(LABELS, probs, strict=True))}
    verdicts: dict[str, str | None] = {}
    path = tmp / "p.jsonl"
    path.write_text(json.dumps(row) + "\n")
    try:
        read_predictions(path, known_ids=IDS)
        verdicts["file"] = None
    except SourceError as error:
        verdicts["file"] = error.field
    try:
        run = PredictorRun.of_probabilities("m", ["x:pro"], np.array([probs]))
        check_predictor_run("m", "classifier", run, ["x:pro"])
        verdicts["object"] = None
    except DataError as error:
        verdicts["object"] = error.field
    try:
        check_row(row)
        verdicts["record"] = None
    except RowRefused as refused:
        verdicts["record"] = refused.field
    return verdicts


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(weights=_weights)
def test_any_distribution_labelled_by_its_argmax_is_accepted_by_every_route(
    weights: list[float], tmp_path: Path
) -> None:
    total = sum(weights)
    probs = [w / total for w in weights]  # sums to 1 within rounding (far below the tolerance)
    assert _routes(probs, tmp_path) == {"file": None, "object": None, "record": None}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(weights=_weights, off=st.floats(min_value=2 * PROBABILITY_TOLERANCE, max_value=0.5), up=st.booleans())
def test_a_sum_off_by_more_than_the_tolerance_is_refused_by_every_route_alike(
    weights: list[float], off: float, up: bool, tmp_path: Path
) -> None:
    total = sum(weights)
    target = 1.0 + off if up else 1.0 - off  # the vector sums to this: off by more than the tolerance
    probs = [w / total * target for w in weights]
    verdicts = _routes(probs, tmp_path)
    assert set(verdicts.values()) <= {"probs", *(f"probs.{label}" for label in LABELS)}, verdicts
    assert len(set(verdicts.values())) == 1, verdicts  # the same field on every route


# --- samples_frame(): the samples the run audited ---------------------------------------------------


def test_samples_frame_refuses_a_samples_file_edited_after_the_audit(tmp_path: Path) -> None:
    folder = write_samples(tmp_path / "data", PAIR)["jsonl"].parent
    nlibias.audit(
        folder, models=["fake:a"], cache=False, bootstrap=0, progress=False, out_dir=tmp_path / "run"
    )
    edited = (folder / "samples.jsonl").read_text().replace("pro H.", "pro H, edited.")
    (folder / "samples.jsonl").write_text(edited)
    loaded = nlibias.load_run(tmp_path / "run")
    with pytest.raises(ConfigError, match="is not the one the run audited") as caught:
        loaded.samples_frame()
    assert caught.value.parameter == "samples" and "samples.jsonl" in str(caught.value)
    with pytest.raises(ConfigError, match="is not the one the run audited"):
        loaded.samples_frame(folder)  # given explicitly: the same check


def test_samples_frame_refuses_another_folder_s_samples_at_the_recorded_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the run records "data" (relative): from another working folder, "data" is another folder
    for where, hypothesis in (("one", "H."), ("two", "other H.")):
        samples = [Sample(**{**s.to_dict(), "hypothesis": f"{s.stereotype} {hypothesis}"}) for s in PAIR]
        write_samples(tmp_path / where / "data", samples)
    monkeypatch.chdir(tmp_path / "one")
    nlibias.audit(
        "data", models=["fake:a"], cache=False, bootstrap=0, progress=False, out_dir=tmp_path / "run"
    )
    (tmp_path / "one" / "data" / "samples.jsonl").unlink()
    (tmp_path / "one" / "data" / "samples.parquet").unlink(missing_ok=True)
    monkeypatch.chdir(tmp_path / "two")
    with pytest.raises(ConfigError, match="is not the one the run audited"):
        nlibias.load_run(tmp_path / "run").samples_frame()


def test_samples_frame_of_a_run_loaded_by_a_relative_path_finds_its_samples_from_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the run and its samples are named relative to folder "one"; folder "two" has a "data" and a
    # "run" of its own: the result loaded in "one" keeps reading "one"'s run and samples
    for where, hypothesis in (("one", "H."), ("two", "other H.")):
        samples = [Sample(**{**s.to_dict(), "hypothesis": f"{s.stereotype} {hypothesis}"}) for s in PAIR]
        write_samples(tmp_path / where / "data", samples)
        monkeypatch.chdir(tmp_path / where)
        nlibias.audit("data", models=["fake:a"], cache=False, bootstrap=0, progress=False, out_dir="run")
    monkeypatch.chdir(tmp_path / "one")
    loaded = nlibias.load_run("run")
    monkeypatch.chdir(tmp_path / "two")
    frame = loaded.samples_frame()
    assert len(frame) == len(PAIR) and set(frame["hypothesis"]) == {"pro H.", "anti H."}
    assert loaded.out_dir == tmp_path / "one" / "run"


def test_samples_frame_of_an_audit_of_a_temporary_expand_works(tmp_path: Path) -> None:
    """Issue #39: expand() without out_dir writes to a temporary folder, gone after the audit;
    the result holds the samples it audited."""
    import gc

    result = nlibias.audit(nlibias.expand("occupations"), models=["fake:a"], cache=False, bootstrap=0,
                           progress=False)  # fmt: skip
    gc.collect()  # the expanded samples' temporary folder is removed with them
    assert not Path(result.metrics["run"]["samples"]).exists()
    frame = result.samples_frame()
    assert len(frame) == len(result.predictions) and frame["premise"].notna().all()
    assert os.fspath(result.metrics["run"]["samples"])  # recorded, though gone


# --- what a predictor returns: rows the outputs cannot be made of, probabilities of the wrong shape -------


@pytest.mark.parametrize(
    ("row", "field", "reason"),
    [
        (lambda i: Prediction(i, "mine", "maybe", (0.1, 0.8, 0.1)), "label", "unknown label 'maybe'"),
        (lambda i: Prediction(i, "mine", "yes"), "label", "unknown label 'yes'"),
        (
            lambda i: Prediction(i, "mine", "neutral", (0.5, 0.5)),
            "probs",
            "(0.5, 0.5) is not 3 probabilities",
        ),
    ],
)
def test_rows_the_outputs_cannot_be_made_of_are_refused_naming_the_predictor_sample_and_field(
    row: Any, field: str, reason: str
) -> None:
    with pytest.raises(DataError) as caught:
        PredictorRun.of_predictions([row(i) for i in IDS], "classifier", {})
    assert (caught.value.model, caught.value.sample, caught.value.field) == ("mine", IDS[0], field)
    message = str(caught.value)
    assert f"predictor 'mine', sample {IDS[0]!r}: field {field}: {reason}" in message
    assert "entailment, neutral, contradiction" in message  # what is allowed


def test_a_row_that_is_no_prediction_is_refused_by_its_place() -> None:
    rows: list[Any] = [Prediction(IDS[0], "mine", "neutral"), {"id": IDS[1], "label": "neutral"}]
    with pytest.raises(
        DataError, match=r"predictor 'mine', row 2: a dict, not a Prediction \(build each row"
    ):
        PredictorRun.of_predictions(rows, "classifier", {})


@pytest.mark.parametrize(
    ("ids", "probs", "got"),
    [
        (IDS, [[0.5, 0.5]] * 2, "an array of shape (2, 2), not (2, 3)"),
        (IDS, [[0.25] * 4] * 2, "an array of shape (2, 4), not (2, 3)"),
        (IDS[:1], [[0.2, 0.7, 0.1]] * 2, "an array of shape (2, 3), not (1, 3)"),
        (IDS, "abc", "not an array of numbers"),
    ],
)
def test_probabilities_that_are_not_a_row_of_three_per_id_are_refused_naming_the_predictor(
    ids: list[str], probs: Any, got: str
) -> None:
    with pytest.raises(DataError) as caught:
        PredictorRun.of_probabilities("mine", ids, probs)
    assert caught.value.model == "mine" and caught.value.field == "probs"
    assert f"predictor 'mine': field probs: {got}" in str(caught.value)


def test_stats_that_are_no_mapping_are_refused_naming_the_predictor() -> None:
    def listed(ids: list[str]) -> PredictorRun:
        return PredictorRun.of_probabilities("mine", ids, np.array([[0.2, 0.7, 0.1]] * 2), stats=[1, 2])  # type: ignore[arg-type]

    with pytest.raises(
        DataError, match=r"predictor 'mine' returned stats \[1, 2\], a list, not a mapping"
    ) as caught:
        _audit(_Rows("mine", listed))
    assert caught.value.field == "stats"


# --- the result's methods: their parameters declared ----------------------------------------------------


@pytest.mark.parametrize("given", [5, ["samples.jsonl"], {"path": "samples.jsonl"}, ""])
def test_samples_frame_refuses_what_names_no_samples_by_its_parameter(given: Any) -> None:
    result = nlibias.audit(PAIR, models=["fake:a"], cache=False, bootstrap=0, progress=False)
    with pytest.raises(ConfigError) as caught:
        result.samples_frame(given)
    assert caught.value.parameter == "samples" and str(caught.value).startswith("samples ")
    assert len(result.samples_frame(PAIR)) == len(PAIR)  # Sample objects are what it takes


def test_tables_refuses_a_slice_they_do_not_cut_by_its_parameter() -> None:
    result = nlibias.audit(PAIR, models=["fake:a"], cache=False, bootstrap=0, progress=False)
    for call in (lambda: result.tables(by="subtopics"), lambda: result.tables(by=5)):
        with pytest.raises(ConfigError, match="by must be domain or subtopic") as caught:
            call()
        assert caught.value.parameter == "by"
    assert "| t " in result.tables(by="subtopic")  # the subtopic "t" is a row
