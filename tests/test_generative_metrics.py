"""Generative measures (yes-rates, unparsed counts, Table 8, prompt sensitivity, the pair measures
with the binary answer set) and the generative predictor on the deterministic fake backend."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlibias.catalog.registry import read_benchmark_samples
from nlibias.metrics.generative import prompt_sensitivity, score_generative, wilson_interval
from nlibias.metrics.ranking import most_biased_subtopics
from nlibias.models.generative.backend import (
    FakeGenerativeBackend,
)
from nlibias.models.generative.prompts import PROMPT_STYLES
from nlibias.report.generative_tables import format_generative_tables
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.generative import GenerativePredictor, build_generative_predictors
from nlibias.schema import Prediction, Sample
from nlibias.schema.model_keys import split_model_key

LABEL = {"yes": "entailment", "no": "neutral", None: None}


def pair(subtopic: str, domain: str, k: int) -> list[Sample]:
    return [
        Sample(
            id=f"{subtopic}{k}:{s}",
            source="bbnli",
            domain=domain,
            subtopic=subtopic,
            premise=f"P{subtopic}{k}.",
            hypothesis=f"{s} H{k}.",
            gold="neutral",
            stereotype=s,
            pair_key=f"{subtopic}{k}",
        )  # type: ignore[arg-type]
        for s in ("pro", "anti")
    ]


def toy() -> tuple[list[Sample], list[Prediction]]:
    """Five pairs and one test sample; answers (pro, anti):
    A1 yes/no, A2 yes/yes, A3 no/unparsed (gender); B1 no/yes, B2 no/no (race); test: no."""
    samples = pair("A", "gender", 1) + pair("A", "gender", 2) + pair("A", "gender", 3)
    samples += pair("B", "race", 1) + pair("B", "race", 2)
    samples.append(
        Sample(
            id="t",
            source="bbnli",
            domain="race",
            subtopic="B",
            premise="P.",
            hypothesis="T.",
            gold="contradiction",
        )
    )
    answers = ["yes", "no", "yes", "yes", "no", None, "no", "yes", "no", "no", "no"]
    predictions = [
        Prediction(s.id, "m|prompt=true|scored", LABEL[a], extra={"answer": a, "answers": "yes/no"})  # type: ignore[arg-type]
        for s, a in zip(samples, answers, strict=True)
    ]
    return samples, predictions


def test_yes_rates_pair_measures_and_unparsed_by_hand() -> None:
    samples, predictions = toy()
    m = score_generative(samples, predictions, bootstrap=0)
    o = m["overall"]
    # pro answered: A1 yes, A2 yes, A3 no, B1 no, B2 no → 2/5; anti answered: A1 no, A2 yes, B1 yes, B2 no → 2/4
    assert (o["yes_rate_pro"], o["yes_rate_anti"]) == (40.0, 50.0)
    assert (o["n_pro_answered"], o["n_anti_answered"], o["n_unparsed"]) == (5, 4, 1)
    # pairs with both answers: A1 yes/no pro+1, A2 yes/yes error+2, B1 no/yes anti+1, B2 no/no 0;
    # 4 pairs = 8 paired samples → cf_pro 1/8, cf_anti 1/8, cf_error 2/8; A3 is unpaired
    assert (o["cf_pro"], o["cf_anti"], o["cf_error"]) == (12.5, 12.5, 25.0)
    assert o["n_pairs"] == 4 and o["n_unpaired"] == 1 and o["n_unanswered"] == 1
    # right answer is always no: A1 anti, A3 pro, B1 pro, B2 pro, B2 anti = 5 of 9 answered
    assert o["accuracy"] == pytest.approx(500 / 9)
    # binary prompts cannot tell neutral from contradiction: the test sample's "no" is correct
    assert o["test_accuracy"] == 100.0
    assert o["answers"] == {"no": 6, "yes": 4}
    a, b = m["by_subtopic"]["A"], m["by_subtopic"]["B"]
    assert (a["yes_rate_pro"], a["yes_rate_anti"], a["n_unparsed"]) == (pytest.approx(200 / 3), 50.0, 1)
    assert (b["yes_rate_pro"], b["yes_rate_anti"], b["n_unparsed"]) == (0.0, 50.0, 0)
    assert m["by_domain"]["gender"]["yes_rate_pro"] == pytest.approx(200 / 3)
    # none is "most biased": A holds 2 pairs + 1 unpaired = 3 units (a verdict needs 10), B is at 0 %
    assert m["most_biased_subtopics"] == []
    assert (m["answer_set"], m.get("prompt")) == ("yes/no", None)


def test_wilson_interval_by_hand() -> None:
    # p = 2/5, z² = 3.8415: centre = (0.4 + 0.38415) / 1.7683 = 0.44345,
    # half = 1.96 * sqrt(0.048 + 0.038415) / 1.7683 = 0.32585 → [11.76, 76.93] percent
    assert wilson_interval(2, 5) == pytest.approx([11.76, 76.93], abs=0.01)
    samples, predictions = toy()
    ci = score_generative(samples, predictions, bootstrap=0)["overall"]["ci"]
    assert ci["yes_rate_pro"] == pytest.approx([11.76, 76.93], abs=0.01)
    assert wilson_interval(0, 0) is None


@given(trials=st.integers(1, 5000), data=st.data())
def test_a_wilson_interval_holds_its_proportion_and_ends_exactly_at_0_and_100(
    trials: int, data: st.DataObject
) -> None:
    """At 0 successes the lower bound came out as 2.8e-15, not 0: a subtopic at a 0 % yes-rate had
    an interval that "excluded 0" and was listed as most biased (the demo's Table 8 did)."""
    successes = data.draw(st.integers(0, trials))
    low, high = wilson_interval(successes, trials)  # type: ignore[misc]
    assert 0.0 <= low <= 100.0 * successes / trials <= high <= 100.0
    assert (low == 0.0) == (successes == 0) and (high == 100.0) == (successes == trials)


def test_a_subtopic_at_no_bias_is_never_listed_as_most_biased() -> None:
    from nlibias.report.paper_tables import biased_subtopics

    zero = {"yes_rate_pro": 0.0, "n_pro_answered": 12, "n_pairs": 12, "ci": {"yes_rate_pro": [2.8e-15, 24.2]}}
    five = {"yes_rate_pro": 5.0, "n_pro_answered": 20, "n_pairs": 20, "ci": {"yes_rate_pro": [0.9, 23.6]}}
    assert [e["subtopic"] for e in biased_subtopics({"by_subtopic": {"zero": zero, "five": five}})] == [
        "five"
    ]


def test_three_way_answers_keep_contradictions() -> None:
    samples, _ = toy()
    words = ["yes", "no", "maybe", "maybe", "no", "yes", "maybe", "maybe", "no", "maybe", "no"]
    three = {"yes": "entailment", "no": "contradiction", "maybe": "neutral"}
    predictions = [
        Prediction(s.id, "m|prompt=t3|scored", three[w], extra={"answer": w, "answers": "yes/no/maybe"})  # type: ignore[arg-type]
        for s, w in zip(samples, words, strict=True)
    ]
    m = score_generative(samples, predictions, bootstrap=0)
    o = m["overall"]
    assert m["answer_set"] == "yes/no/maybe"
    # A1: pro yes (E) / anti no (C) → pro+2 (paper Table 6); A2 maybe/maybe → 0; A3 no (C)/yes (E) → anti+2;
    # B1 maybe/maybe → 0; B2 no (C)/maybe (N) → anti+1.  10 paired samples.
    assert (o["cf_pro"], o["cf_anti"], o["cf_error"]) == (20.0, 30.0, 0.0)
    assert o["test_accuracy"] == 100.0  # gold contradiction, answered no = contradiction


def test_most_biased_subtopics_orders_and_skips_undefined() -> None:
    rows = most_biased_subtopics(
        {
            "x": {"yes_rate_pro": 5.0},
            "y": {"yes_rate_pro": 50.0},
            "z": {"yes_rate_pro": None},
            "w": {"yes_rate_pro": 50.0},
        },
        {"w": "gender"},
        top=2,
    )
    assert [(r["subtopic"], r["domain"]) for r in rows] == [("w", "gender"), ("y", None)]  # ties by name


def metrics_for(style: str, rates: dict[str, float], unparsed: int = 0) -> dict:
    return {
        "overall": {
            "n_pro_answered": 10,
            "n_anti_answered": 10,
            "n_unparsed": unparsed,
            "yes_rate_pro": 1.0,
            "yes_rate_anti": 2.0,
            "accuracy": 90.0,
            "cf_pro": 1.0,
            "cf_anti": 0.0,
            "cf_error": 3.0,
        },
        "by_subtopic": {name: {"yes_rate_pro": value} for name, value in rates.items()},
        "most_biased_subtopics": most_biased_subtopics({n: {"yes_rate_pro": v} for n, v in rates.items()}),
    }


def test_prompt_sensitivity_and_tables() -> None:
    models = {
        "m|prompt=true|scored": metrics_for("true", {"s1": 30.0, "s2": 10.0, "s3": 5.0}, unparsed=3),
        "m|prompt=entailed|scored": metrics_for("entailed", {"s1": 10.0, "s2": 12.0, "s3": 5.0}),
        "roberta": {"overall": {}},
    }
    sensitivity = prompt_sensitivity(models)
    # spreads: s1 |30 - 10| = 20, s2 2, s3 0
    assert [(r["subtopic"], r["spread"]) for r in sensitivity["m|scored"]] == [
        ("s1", 20.0),
        ("s2", 2.0),
        ("s3", 0.0),
    ]
    text = format_generative_tables(models)
    assert "prompt=true (unparsed 3)" in text and "prompt=entailed (unparsed 0)" in text
    assert "Prompt sensitivity: m (scored)" in text and "true: 3, entailed: 0" in text
    # "answered" counts bias hypotheses, "unparsed" test ones too: side by side they looked like
    # one total (1,713 + 763 beside 2,276 bias samples); the legend says which is which
    assert (
        "answered = bias-audit hypotheses answered; unparsed = answers not read, test hypotheses included"
        in text
    )
    assert "roberta" not in text
    assert format_generative_tables({"roberta": {}}) == ""


def test_model_keys_round_trip() -> None:
    assert split_model_key("openai:x|y|prompt=true|generated") == ("openai:x|y", "true", "generated")
    assert split_model_key("m|prompt=true|sampled") is None


def test_fake_predictor_generated_answers_count_unparsed(tmp_path: Path) -> None:
    samples, _ = toy()
    predictor = build_generative_predictors("fake:f", [PROMPT_STYLES["true"]], mode="generated")[0]
    run = predictor.predict(
        read_benchmark_samples(samples), PredictionCache(tmp_path / "c.sqlite"), progress=False
    )
    texts = {p.extra["text"] for p in run.predictions}
    assert texts <= set(FakeGenerativeBackend.TEXTS)
    unparsed = [p for p in run.predictions if p.label is None]
    assert all(p.extra["text"] == "I cannot determine that from the paragraph." for p in unparsed)
    assert run.stats["n_unparsed"] == len(unparsed)
    m = score_generative(samples, run.predictions, bootstrap=0)
    assert m["overall"]["n_unparsed"] == len(unparsed) and m["mode"] == "generated" and m["prompt"] == "true"


def test_fake_predictor_uses_the_cache_and_dedups_prompts(tmp_path: Path) -> None:
    samples, _ = toy()
    twin = {**samples[0].to_dict(), "id": "dup", "pair_key": None, "stereotype": None}
    samples = [*samples, Sample.from_dict(twin)]  # same texts
    backend = FakeGenerativeBackend()
    cache = PredictionCache(tmp_path / "c.sqlite")
    first = GenerativePredictor(backend, PROMPT_STYLES["true"]).predict(
        read_benchmark_samples(samples), cache, progress=False
    )
    assert backend.calls == len(samples) - 1  # the duplicate text is asked once
    second = GenerativePredictor(backend, PROMPT_STYLES["true"]).predict(
        read_benchmark_samples(samples), cache, progress=False
    )
    assert backend.calls == len(samples) - 1 and second.stats["cached"] == len(samples) - 1
    assert [p.to_dict() for p in first.predictions] == [p.to_dict() for p in second.predictions]
    GenerativePredictor(backend, PROMPT_STYLES["true"], mode="generated").predict(
        read_benchmark_samples(samples), cache, progress=False
    )
    assert backend.calls == 2 * (len(samples) - 1)  # another mode is another question


def test_mean_probability_of_yes_by_hand() -> None:
    samples, predictions = toy()
    p_yes = [0.6, 0.4, 0.7, 0.9, 0.2, None, 0.1, 0.8, 0.3, 0.2, 0.4]
    scored = [
        Prediction(p.sample_id, p.model, p.label, extra={**p.extra, "answer_probs": {"yes": y, "no": 1 - y}})
        if y is not None
        else p
        for p, y in zip(predictions, p_yes, strict=True)
    ]
    o = score_generative(samples, scored, bootstrap=0)["overall"]
    # pro: 60, 70, 20, 10, 30 → 38.0; anti: 40, 90, 80, 20 → 57.5; gap 38.0 - 57.5 = -19.5
    assert o["mean_p_yes_pro"] == pytest.approx(38.0)
    assert o["mean_p_yes_anti"] == pytest.approx(57.5)
    assert o["p_yes_gap"] == pytest.approx(-19.5)
    assert toy_metrics_have_no_p_yes()


def toy_metrics_have_no_p_yes() -> bool:
    samples, predictions = toy()
    o = score_generative(samples, predictions, bootstrap=0)["overall"]
    return o["mean_p_yes_pro"] is None and o["p_yes_gap"] is None


def test_p_yes_gap_gets_a_bootstrap_interval_by_pair() -> None:
    """Two pairs with p(yes) pro/anti 60/40 and 70/30: gaps 20 and 40. A resample draws two
    whole pairs, so its gap is 20 (both the first), 30 (one each) or 40 (both the second): the
    interval is [20, 40]. Drawn by sample instead, a resample could hold no anti hypothesis or
    gaps such as 70 - 40 = 30 of unrelated halves; by pair it never leaves [20, 40]."""
    samples = pair("A", "gender", 1) + pair("A", "gender", 2)
    probs = [0.6, 0.4, 0.7, 0.3]
    predictions = [
        Prediction(
            sample_id=s.id,
            model="lm|prompt=true|scored",
            label="neutral",
            extra={"answer": "no", "answer_probs": {"yes": p, "no": 1 - p}, "answer_mass": 1.0},
        )
        for s, p in zip(samples, probs, strict=True)
    ]
    report = score_generative(samples, predictions, bootstrap=400, seed=0)
    overall = report["overall"]
    assert overall["p_yes_gap"] == pytest.approx(30.0)  # (60 + 70) / 2 - (40 + 30) / 2
    assert overall["ci"]["p_yes_gap"] == pytest.approx([20.0, 40.0])
    # No resamples, no interval; the other values are those of the run with intervals.
    plain = score_generative(samples, predictions, bootstrap=0, seed=0)["overall"]
    assert plain["ci"]["p_yes_gap"] is None
    assert plain["p_yes_gap"] == overall["p_yes_gap"]
