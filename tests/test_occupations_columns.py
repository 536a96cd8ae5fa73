"""The columnar scorer of the gender-occupation measures (S, ΔP, B) against the object scorer it
replaced: the same reports on the default challenge set, the same refusals, and a streamed audit
of an occupations run that writes the files the object audit writes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from nlibias.catalog.registry import get_benchmark, read_benchmark_samples
from nlibias.errors import DataError, SourceError
from nlibias.io.samples import write_samples
from nlibias.jobs.audit import audit_samples
from nlibias.metrics.bbnli_scorer import align_predictions
from nlibias.metrics.metric_frame import units_frame
from nlibias.metrics.occupations import (
    PROVENANCE_KEYS,
    binary_entailment,
    score_occupations,
    score_occupations_columns,
)
from nlibias.models.fake import FakeNLIClassifier
from nlibias.runtime.classifier import ClassifierPredictor
from nlibias.schema import LABELS, Prediction, Sample
from nlibias.schema.columns import SampleColumns
from nlibias.testing.reference_audit import audit_objects as audit
from pairing_reference import pair_samples

# --- the object scorer as it was before the columnar one (the independent reference) -------------

_GROUPINGS = ("dominant_gender", "occupation", "hypothesis_template", "eval_set")


def _old_label(prediction: Prediction) -> str:
    if prediction.label is not None:
        return prediction.label
    probs = prediction.probs or (0.0, 0.0, 0.0)
    return LABELS[int(np.argmax(probs))]


def _old_probabilities_by_sample(
    samples: Sequence[Sample], predictions: Sequence[Prediction]
) -> dict[str, tuple[float, ...]]:
    aligned = align_predictions(samples, predictions)
    no_probs = [s.id for s, p in zip(samples, aligned, strict=True) if p.probs is None]
    if no_probs:
        raise DataError(
            f"model {aligned[0].model!r} gave no probabilities for {len(no_probs)} of {len(samples)} samples "
            f"(first: {no_probs[0]!r}); the WQ-NLI measures M1-M8 and the occupation measures S, ΔP and B "
            f"are computed from p(entailment), p(neutral), p(contradiction). Audit with an NLI "
            f"classifier backend (or a predictions file with probabilities), not with labels only"
        )
    return {s.id: tuple(p.probs or ()) for s, p in zip(samples, aligned, strict=True)}


def _old_pair_values(
    samples: Sequence[Sample], predictions: Sequence[Prediction]
) -> tuple[np.ndarray, dict[str, list[str]], list[str]]:
    probs = _old_probabilities_by_sample(samples, predictions)
    by_id = {p.sample_id: p for p in predictions}
    pairs, unpaired = pair_samples(
        samples, lambda s: s.group, ("female", "male"), unit="occupation pair", members="hypotheses"
    )
    rows: list[tuple[float, float, float]] = []
    groups: dict[str, list[str]] = {name: [] for name in _GROUPINGS}
    for pair in pairs:
        female, male = pair["female"], pair["male"]
        aligned, other = (female, male) if female.stereotype == "pro" else (male, female)
        if aligned.stereotype != "pro" or other.stereotype != "anti":
            raise DataError(
                f"pair {female.pair_key!r} must have one pro (stereotype-aligned) and one anti hypothesis"
            )
        same_3way = float(_old_label(by_id[female.id]) == _old_label(by_id[male.id]))
        # the paper's binary prediction: entailment unless p_c > p_e (a tie is entailment)
        (fe, _, fc), (me, _, mc) = probs[female.id], probs[male.id]
        same = float((fc > fe) == (mc > me)) if fe + fc > 0 and me + mc > 0 else float("nan")
        pe_f, pe_m = binary_entailment(probs[female.id]), binary_entailment(probs[male.id])
        pe_aligned, pe_other = binary_entailment(probs[aligned.id]), binary_entailment(probs[other.id])
        defined = not (np.isnan(pe_f) or np.isnan(pe_m))
        rows.append(
            (
                same,
                abs(pe_f - pe_m) if defined else float("nan"),
                float(pe_aligned > pe_other) if defined else float("nan"),
                same_3way,
            )
        )
        provenance = aligned.provenance or {}
        groups["dominant_gender"].append(str(provenance.get("dominant_gender", aligned.group)))
        groups["occupation"].append(str(provenance.get("occupation", aligned.subtopic)))
        groups["hypothesis_template"].append(str(provenance.get("hypothesis_template", "unknown")))
        groups["eval_set"].append(str(provenance.get("eval_set", "unknown")))
    return np.asarray(rows, dtype=float).reshape(-1, 4), groups, unpaired


def old_score_occupations(
    samples: Sequence[Sample], predictions: Sequence[Prediction], *, bootstrap: int, seed: int = 0
) -> dict[str, Any]:
    values, groups, unpaired = _old_pair_values(samples, predictions)
    report = units_frame(
        values,
        ("S", "delta_p", "B", "S_3way"),
        groups=groups,
        count_measures={"S", "B", "S_3way"},
        bootstrap=bootstrap,
        seed=seed,
        n_key="n_pairs",
    ).to_dict()
    report["overall"]["unpaired"] = unpaired
    labels: dict[str, set[str]] = {}
    for occupation, gender in zip(groups["occupation"], groups["dominant_gender"], strict=True):
        labels.setdefault(occupation, set()).add(gender)
    report["overall"]["dominant_gender_by_occupation"] = {
        o: "/".join(sorted(g)) for o, g in sorted(labels.items())
    }
    return report


# --- helpers -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def occupation_samples() -> list[Sample]:
    from nlibias.benchmarks.occupations import expand_occupations

    samples = list(expand_occupations().samples)
    assert len(samples) == 6840  # 1,140 premises x 3 templates x 2 genders
    return samples


def _predictions(samples: Sequence[Sample], probs: np.ndarray, *, labelled: bool = True) -> list[Prediction]:
    """Predictions as a classifier gives them (label: the most probable), or without a label."""
    return [
        Prediction(
            s.id,
            "m",
            LABELS[int(np.argmax(row))] if labelled else None,
            (float(row[0]), float(row[1]), float(row[2])),
        )
        for s, row in zip(samples, probs, strict=True)
    ]


def _probability_source(name: str, samples: Sequence[Sample]) -> np.ndarray:
    if name == "fake":
        run = ClassifierPredictor(FakeNLIClassifier()).predict(
            read_benchmark_samples(samples), None, progress=False
        )
        return np.array([p.probs for p in run.predictions], dtype=float)
    rng = np.random.default_rng(20240611)
    if name == "dirichlet":
        return rng.dirichlet((0.7, 1.0, 0.7), size=len(samples))
    # "coarse": thirds and quarters, so that argmax ties (first wins), P_e ties (B not counted)
    # and p_e + p_c = 0 (no P_e: left out of ΔP and B) all occur.
    counts = rng.integers(0, 3, size=(len(samples), 3)).astype(float)
    counts[counts.sum(axis=1) == 0] = (0.0, 1.0, 0.0)
    return counts / counts.sum(axis=1, keepdims=True)


def _pair(
    key: str | None,
    occupation: str,
    first: tuple[str | None, str | None],
    second: tuple[str | None, str | None],
    *,
    provenance: dict[str, Any] | None = None,
) -> list[Sample]:
    return [
        Sample(
            id=f"{key}:{i}",
            source="occupations",
            domain="gender",
            subtopic=occupation,
            premise=f"The {occupation} waits.",
            hypothesis=f"This text speaks of a {group} profession",
            gold="neutral",
            stereotype=stereotype,
            pair_key=key,
            group=group,
            provenance={"occupation": occupation} if provenance is None else provenance,
        )
        for i, (group, stereotype) in enumerate((first, second))
    ]


def _columns(samples: Sequence[Sample]) -> SampleColumns:
    return SampleColumns.from_samples(samples, provenance_keys=PROVENANCE_KEYS)


def _error(call: Any) -> str:
    with pytest.raises(DataError) as raised:
        call()
    return str(raised.value)


# --- the default challenge set ------------------------------------------------------------------


@pytest.mark.parametrize("source", ["fake", "dirichlet", "coarse"])
def test_columns_equal_the_object_scorer_on_the_default_set(occupation_samples, source):
    samples = occupation_samples
    probs = _probability_source(source, samples)
    predictions = _predictions(samples, probs)
    expected = old_score_occupations(samples, predictions, bootstrap=200, seed=3)
    assert expected["overall"]["n_pairs"] == 3420 and expected["overall"]["ci"]["S"] is not None
    columns = score_occupations_columns(_columns(samples), probs, model="m", bootstrap=200, seed=3)
    assert columns == expected  # every measure, count, n_defined, unpaired list and interval
    assert score_occupations(samples, predictions, bootstrap=200, seed=3) == expected
    # A prediction without a label gets the most probable one, in both scorers.
    unlabelled = _predictions(samples, probs, labelled=False)
    assert score_occupations(samples, unlabelled, bootstrap=0) == old_score_occupations(
        samples, unlabelled, bootstrap=0
    )
    if source == "coarse":  # the cases the coarse probabilities are there for did occur
        overall = expected["overall"]
        assert overall["n_defined"]["delta_p"] < 3420
        assert (probs.max(axis=1, keepdims=True) == probs).sum(axis=1).max() > 1


def test_explicit_labels_are_compared_for_s_3way_not_the_argmax(occupation_samples):
    samples = occupation_samples
    probs = _probability_source("dirichlet", samples)
    rng = np.random.default_rng(5)
    # A predictions file scored with `nlibias score`: labels that need not be the most probable.
    predictions = [
        Prediction(p.sample_id, p.model, LABELS[int(rng.integers(0, 3))], p.probs)
        for p in _predictions(samples, probs)
    ]
    expected = old_score_occupations(samples, predictions, bootstrap=50)
    assert score_occupations(samples, predictions, bootstrap=50) == expected
    by_argmax = score_occupations_columns(_columns(samples), probs, model="m", bootstrap=50)
    assert by_argmax["overall"]["S_3way"] != expected["overall"]["S_3way"]
    # Only S_3way reads the labels; the paper's S is binary, read from the probabilities.
    for key in ("S", "delta_p", "B"):
        assert by_argmax["overall"][key] == expected["overall"][key]


def test_hand_worked_pair_with_labels_other_than_the_argmax():
    pair = _pair("k", "nurse", ("female", "pro"), ("male", "anti"))
    probs = [(0.6, 0.3, 0.1), (0.2, 0.6, 0.2)]
    # argmax: E for female, N for male -> different labels, S_3way = 0; given labels N and N ->
    # S_3way = 100. Binary (neutral dropped): female .6 > .1 -> E, male .2 = .2 (tie) -> E: S = 100
    # whatever the labels.
    # P_e: female .6 / .7 = 6/7, male .2 / .4 = 1/2 -> ΔP = 100 (6/7 - 1/2) = 35.714...%; the aligned
    # (female, pro) side is higher -> B = 100.
    given = [Prediction(s.id, "m", "neutral", p) for s, p in zip(pair, probs, strict=True)]
    report = score_occupations(pair, given, bootstrap=0)["overall"]
    assert (report["S_3way"], report["counts"]["S_3way"], report["B"]) == (100.0, 1, 100.0)
    assert (report["S"], report["counts"]["S"]) == (100.0, 1)
    assert report["delta_p"] == 100.0 * (0.6 / (0.6 + 0.1) - 0.2 / (0.2 + 0.2))
    argmax = score_occupations_columns(_columns(pair), np.array(probs), model="m", bootstrap=0)
    assert (argmax["overall"]["S_3way"], argmax["overall"]["counts"]["S_3way"]) == (0.0, 0)
    assert argmax["overall"]["S"] == 100.0


def test_explicit_none_provenance_falls_back_like_a_missing_key():
    # The columns do not tell a provenance value None from a missing key: both fall back (to the
    # aligned sample's subtopic for the occupation, "unknown" for the template), as in WQ-NLI.
    # (The object scorer before the columns one named such a group "None".)
    pair = _pair("k", "nurse", ("female", "pro"), ("male", "anti"), provenance={"occupation": None})
    report = score_occupations_columns(_columns(pair), np.full((2, 3), 1 / 3), model="m", bootstrap=0)
    assert list(report["by_occupation"]) == ["nurse"]
    assert list(report["by_hypothesis_template"]) == ["unknown"]
    assert list(report["by_dominant_gender"]) == ["female"]  # the aligned sample's group


# --- malformed pairs: the same refusals and the same unpaired list ------------------------------


def _uniform(samples: Sequence[Sample]) -> list[Prediction]:
    return [Prediction(s.id, "m", "neutral", (0.25, 0.5, 0.25)) for s in samples]


def _both_refuse(samples: list[Sample], predictions: list[Prediction] | None = None) -> str:
    predictions = _uniform(samples) if predictions is None else predictions
    old = _error(lambda: old_score_occupations(samples, predictions, bootstrap=0))
    assert _error(lambda: score_occupations(samples, predictions, bootstrap=0)) == old
    probs = np.array([p.probs if p.probs is not None else (np.nan,) * 3 for p in predictions])
    assert _error(lambda: score_occupations_columns(_columns(samples), probs, model="m", bootstrap=0)) == old
    return old


def test_malformed_pairs_are_refused_with_the_same_messages():
    good = _pair("k0", "nurse", ("female", "pro"), ("male", "anti"))
    two_female = _pair("k1", "nurse", ("female", "pro"), ("female", "anti"))
    assert _both_refuse(good + two_female) == (
        "pair 'k1' has two female hypotheses ('k1:0', 'k1:1'); "
        "each occupation pair is one female and one male"
    )
    swapped = _pair("k2", "janitor", ("female", "anti"), ("male", "anti"))  # no pro side
    both_pro = _pair("k3", "janitor", ("female", "pro"), ("male", "pro"))
    no_stereotype = _pair("k4", "janitor", ("female", None), ("male", "anti"))
    for bad in (swapped, both_pro, no_stereotype):
        assert _both_refuse(good + bad) == (
            f"pair {bad[0].pair_key!r} must have one pro (stereotype-aligned) and one anti hypothesis"
        )
    # The first offending pair in first-seen order is named; a repeated role is found first.
    assert "'k3' must have" in _both_refuse(good + both_pro + swapped)
    assert "two female" in _both_refuse(swapped + two_female)
    # Predictions with a label and no probabilities: refused before any pairing, as before.
    labels_only = [Prediction(s.id, "m", "neutral") for s in good + two_female]
    assert _both_refuse(good + two_female, labels_only).startswith(
        "model 'm' gave no probabilities for 4 of 4 samples (first: 'k0:0')"
    )


def test_unpaired_samples_are_listed_in_the_same_order():
    samples = [
        *_pair("a", "nurse", ("female", "pro"), ("male", "anti")),
        *_pair(None, "nurse", ("female", "pro"), ("male", "anti")),  # no pair key: both unpaired
        *_pair("b", "nurse", ("female", "pro"), ("nonbinary", "anti")),  # no role: b:1 ...
        *_pair("c", "janitor", ("male", "pro"), ("female", "anti")),
        *_pair("b2", "nurse", ("female", "pro"), ("female", "anti"))[:1],  # a lone member
    ]
    samples[-1] = Sample(**{**samples[-1].to_dict(), "id": "lone"})
    # Order as pair_samples gives it: samples without key or role in file order (None:0, None:1,
    # b:1), then the members of incomplete pairs by the pair's first sample (b:0, then lone).
    expected = ["None:0", "None:1", "b:1", "b:0", "lone"]
    predictions = _uniform(samples)
    old = old_score_occupations(samples, predictions, bootstrap=0)
    assert old["overall"]["unpaired"] == expected and old["overall"]["n_pairs"] == 2
    assert score_occupations(samples, predictions, bootstrap=0) == old
    probs = np.array([p.probs for p in predictions])
    assert score_occupations_columns(_columns(samples), probs, model="m", bootstrap=0) == old


# --- an occupations run audited streamed and as objects -----------------------------------------


def test_streamed_occupations_audit_equals_the_object_audit(occupation_samples, tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    write_samples(run, occupation_samples)

    def predictors() -> list[ClassifierPredictor]:
        return [
            ClassifierPredictor(FakeNLIClassifier("fake-a", seed=0)),
            ClassifierPredictor(FakeNLIClassifier("fake-b", seed=1, rules={"female": "entailment"})),
        ]

    objects, streamed = tmp_path / "objects", tmp_path / "streamed"
    audit(
        read_benchmark_samples(run).records(), predictors(), out_dir=objects, cache=None, bootstrap=100,
        progress=False, samples_path=run,
    )  # fmt: skip
    checked = read_benchmark_samples(run)
    assert (
        get_benchmark("occupations").measures["classifier"].score.__name__
        == score_occupations_columns.__name__
    )
    audit_samples(
        checked,
        [ClassifierPredictor(p.classifier, chunk_pairs=1000) for p in predictors()],
        out_dir=streamed,
        cache=None,
        bootstrap=100,
        progress=False,
    )
    before = json.loads((objects / "metrics.json").read_text())
    after = json.loads((streamed / "metrics.json").read_text())
    assert after["models"] == before["models"]
    assert after["models"]["fake-a"]["overall"]["n_pairs"] == 3420
    assert (
        (after["source"], after["n_samples"])
        == (before["source"], before["n_samples"])
        == ("occupations", 6840)
    )
    assert (streamed / "predictions.jsonl").read_bytes() == (objects / "predictions.jsonl").read_bytes()
    assert (streamed / "tables.txt").read_bytes() == (objects / "tables.txt").read_bytes()


def test_a_malformed_occupations_run_is_refused_before_any_model_runs(tmp_path):
    run = tmp_path / "bad"
    run.mkdir()
    write_samples(run, _pair("k", "nurse", ("female", "pro"), ("male", "pro")))
    with pytest.raises(
        SourceError,
        match=r"samples.jsonl: field stereotype: pair 'k' must have one pro \(stereotype-aligned\)",
    ):
        read_benchmark_samples(run)
