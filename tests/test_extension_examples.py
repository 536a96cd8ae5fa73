"""Worked examples of the extension and validation helpers (once doctests in their docstrings)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace as N

from nlibias.extension.card import flat_identity, model_rows, resolution_note, source_record
from nlibias.extension.dataset import local_model_names, renamed
from nlibias.extension.fill import fill_statistics
from nlibias.extension.validation_handoff import disagreed_hypotheses
from nlibias.schema import Sample
from nlibias.validation.address import bind_socket, check_bind, foreign_origin, same_origin
from nlibias.validation.explanation_queue import ExplanationItem, stratified_sample
from nlibias.validation.status import unjudged_count
from nlibias.validation.store import AnnotationStore


def test_a_local_model_is_published_by_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "lm"
    folder.mkdir()
    names = local_model_names([f"causal:{folder}?beam=8", "smollm2", "fake:a"])
    assert (names[f"causal:{folder}?beam=8"], names[str(folder)]) == (
        "causal:<local>/lm?beam=8",
        "<local>/lm",
    )
    assert renamed({f"causal:{folder}?beam=8": {"model": f"causal:{folder}?beam=8"}}, names) == {
        "causal:<local>/lm?beam=8": {"model": "causal:<local>/lm?beam=8"}
    }


def test_source_record_of_an_unpinned_file(tmp_path: Path) -> None:
    (tmp_path / "gender").mkdir()
    (tmp_path / "gender" / "mine.json").write_text("{}")
    record = source_record(str(tmp_path), ["mine"])
    assert record is not None
    assert (record["release"], record["files"], len(record["sha256"])) == (None, 1, 64)


def test_resolution_note_names_the_rule_and_agreement() -> None:
    round_ = {
        "annotators": ["ana", "ben"],
        "items": 6,
        "percent": 83.33,
        "kappa": 0.714,
        "kappa_kind": "cohen",
    }
    note = resolution_note({"rule": "drop", "left_out_of_agreement": {}, "agreement": {"category": round_}})
    assert note[0] == (
        "Resolved by `nlibias validate resolve` with the rule `drop`. Agreement of ana, ben: valid / invalid / "
        "incoherent 83.3 % (Cohen's kappa 0.714) over the 6 hypotheses all of them answered."
    )


def test_model_rows_flatten_the_fill_identity() -> None:
    identity = {"backend": "causal-fill", "lm": {"weights": "ab12"}}
    rows = model_rows(
        {"fill": {"fill_model": {"name": "smollm2", "kind": "causal", "identity": identity}}, "filter": {}}
    )
    assert (rows[0]["role"], flat_identity(rows[0]["identity"])) == (
        "fill",
        "backend=causal-fill, lm.weights=ab12",
    )


def test_fill_statistics_count_variants_per_template() -> None:
    samples = [
        Sample(
            id=str(i),
            source="x",
            domain="d",
            subtopic="t",
            premise="P",
            hypothesis=w,
            gold="neutral",
            provenance={"template_id": t, "fill_word": w},
        )
        for i, (t, w) in enumerate([("a", "x"), ("a", "y"), ("b", "x")])
    ]
    assert fill_statistics(samples) == {
        "candidates": 3,
        "templates": 2,
        "variants_per_template": 1.5,
        "distinct_words": 2,
    }


def test_disagreed_hypotheses_are_the_dropped_unjudged_rows(tmp_path: Path) -> None:
    path = tmp_path / "judgements.csv"
    path.write_text("hypothesis_id,judgement,resolution\nh1,,dropped\nh2,,pending\nh3,valid,resolved\n")
    assert sorted(disagreed_hypotheses(path)) == ["h1"]


def test_check_bind_and_bind_socket() -> None:
    assert check_bind("127.0.0.1", None) is None
    assert len(check_bind("0.0.0.0", None) or "") > 20
    sock = bind_socket("127.0.0.1", 0)
    assert sock.getsockname()[1] > 0
    sock.close()


def test_same_and_foreign_origin() -> None:
    assert same_origin("http://127.0.0.1:8765/?token=x", "127.0.0.1:8765")
    assert (
        same_origin("http://localhost:8765", "127.0.0.1:8765"),
        same_origin("null", "127.0.0.1:8765"),
    ) == (
        False,
        False,
    )
    evil = {"host": "127.0.0.1:8765", "origin": "http://evil.example"}
    assert foreign_origin("POST", evil) == "origin http://evil.example is not this server"
    assert foreign_origin("POST", {"host": "127.0.0.1:8765"}) is None


def test_stratified_sample_takes_one_per_stratum_in_turn() -> None:
    items = [ExplanationItem(str(k), "s", "m", None, "p", "h", "yes", "e", "t", "d", "pro") for k in range(5)]
    strata = {"0": "a", "1": "a", "2": "a", "3": "b", "4": "b"}
    assert [strata[it.item_id] for it in stratified_sample(items, strata, 3, 0)] == ["a", "b", "a"]


def test_the_store_keeps_the_current_answers(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path / "a.sqlite")
    store.record("h1", "ana", "category", "valid")
    assert store.current()["h1"]["ana"].category == "valid"
    assert store.record_explanation("e1", "ana", "biased", fingerprint="f0").label == "biased"


def test_unjudged_count() -> None:
    queue = [N(hypothesis_id="a"), N(hypothesis_id="b")]
    assert unjudged_count(queue, {"a": {"ana": N(category="valid")}}) == 1


def test_small_helpers() -> None:
    from nlibias.extension.config import ExtendConfig, _is_gguf, settings_problem
    from nlibias.extension.config_rules import one_of
    from nlibias.extension.pipeline import STAGES
    from nlibias.extension.validation_handoff import resolution_record
    from nlibias.validation.address import error_details, host_name
    from nlibias.validation.formats import _questions
    from nlibias.validation.store import ROUND_LABELS, check_choice

    assert (_is_gguf("causal", "smollm2"), _is_gguf("causal", "causal:org/lm")) == (
        True,
        False,
    )
    config = ExtendConfig.model_validate({"filter": {"compare_fills": ["fake"]}, "mlm": {"model": "fake"}})
    assert settings_problem(config) == (
        "filter.compare_fills",
        "'fake' is the fill model itself; compare the fill model with another one",
    )
    assert (_questions("valid", "pro"), _questions("invalid", None)) == (
        [("judgement", "valid"), ("stereotype", "pro")],
        [("judgement", "invalid")],
    )
    assert check_choice("pro", ROUND_LABELS["stereotype"], "stereotype label", parameter="label") == "pro"
    assert one_of("Fill", STAGES, "stage", "until") == "fill"
    assert resolution_record("no/such/judgements.csv") is None
    hosts = (host_name("127.0.0.1:8765"), host_name("[::1]:80"), host_name("localhost"))
    assert hosts == ("127.0.0.1", "[::1]", "localhost")
    error = {"type": "missing", "loc": ("body", "label"), "msg": "Field required", "input": {"x": 1}}
    assert error_details([error]) == [{"type": "missing", "loc": ["body", "label"], "msg": "Field required"}]
