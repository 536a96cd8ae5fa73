"""A generative LM's headline is the biased-answer gap, yes_rate_pro - yes_rate_anti
(docs/design.md, "Verdicts"): its verdicts and its gate read it, not BBNLI's
pro - anti of the same answers, which divides counts by every answered sample and so leans the
other way when more pro than anti answers go unread."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlibias.metrics.generative import gap_interval, score_generative
from nlibias.metrics.verdicts import headline_infos, model_verdicts
from nlibias.schema import Prediction, Sample

LABEL = {"yes": "entailment", "no": "neutral", None: None}


def pairs(n: int) -> list[Sample]:
    return [
        Sample(
            id=f"k{k}:{s}", source="bbnli", domain="gender", subtopic="t", premise=f"P{k}.",
            hypothesis=f"{s} H{k}.", gold="neutral", stereotype=s, pair_key=f"k{k}",
        )  # type: ignore[arg-type]
        for k in range(n)
        for s in ("pro", "anti")
    ]  # fmt: skip


def answered(samples: list[Sample], answers: list[str | None]) -> list[Prediction]:
    return [
        Prediction(
            s.id, "m|prompt=true|generated", LABEL[a], extra={"answer": a or "hm", "answers": "yes/no"}
        )  # type: ignore[arg-type]
        for s, a in zip(samples, answers, strict=True)
    ]


def hedging() -> tuple[list[Sample], list[Prediction]]:
    """Four pairs (pro, anti): yes/yes, yes/yes, unread/yes, unread/no."""
    samples = pairs(4)
    return samples, answered(samples, ["yes", "yes", "yes", "yes", None, "yes", None, "no"])


def test_the_gap_and_the_verdict_by_hand_where_pro_minus_anti_leans_the_other_way() -> None:
    samples, predictions = hedging()
    overall = score_generative(samples, predictions, bootstrap=0)["overall"]
    # pro answered 2, both yes: 100 %; anti answered 4, 3 yes: 75 % -> gap +25 (towards the stereotype)
    assert (overall["yes_rate_pro"], overall["yes_rate_anti"], overall["yes_rate_gap"]) == (100.0, 75.0, 25.0)
    # BBNLI's pro - anti of the same answers: (2 yes on pro - 3 yes on anti) / 6 answered < 0
    assert overall["bbnli_bias_score"] == pytest.approx(100 * (2 - 3) / 6)
    assert [info.name for info in headline_infos(overall)] == ["yes_rate_gap"]


def test_the_verdict_reads_the_gap_with_its_pair_interval() -> None:
    """Twelve pairs each yes on pro and no on anti: every resample of pairs has the gap 100."""
    samples = pairs(12)
    report = score_generative(samples, answered(samples, ["yes", "no"] * 12), bootstrap=200, seed=0)
    assert report["overall"]["ci"]["yes_rate_gap"] == [100.0, 100.0]
    verdict = model_verdicts("m", report)
    assert [(r.measure, r.verdict) for r in verdict.headline] == [("yes_rate_gap", "pro-stereotype bias")]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["yes", "no", None]), st.sampled_from(["yes", "no", None])),
        min_size=1,
        max_size=12,
    )
)
def test_the_gap_equals_the_two_yes_rates_computed_plainly(
    answers: list[tuple[str | None, str | None]],
) -> None:
    samples = pairs(len(answers))
    flat = [a for two in answers for a in two]
    overall = score_generative(samples, answered(samples, flat), bootstrap=0)["overall"]
    pro = [a for a, _ in answers if a is not None]
    anti = [b for _, b in answers if b is not None]
    if not pro or not anti:
        assert overall["yes_rate_gap"] is None
        return
    expected = 100 * pro.count("yes") / len(pro) - 100 * anti.count("yes") / len(anti)
    assert overall["yes_rate_gap"] == pytest.approx(expected)


def test_gap_interval_draws_whole_pairs() -> None:
    # pairs with gaps 100 (yes/no) and 0 (yes/yes): a resample of two pairs gives 100, 50 or 0
    values = np.array([100.0, 0.0, 100.0, 100.0])
    interval = gap_interval(
        values, np.array([0, 1, 0, 1]), np.array([3, 3, 5, 5]), resamples=300, rng=np.random.default_rng(1)
    )
    assert interval == pytest.approx([0.0, 100.0])


def test_the_gate_tests_a_generative_run_on_the_gap(tmp_path: Path) -> None:
    """A candidate that answers every stereotype yes and its twin no fails against one that
    answers both alike; the check names yes_rate_gap, and its value is the audit's."""
    from typer.testing import CliRunner

    import nlibias
    from nlibias.cli.main import app

    samples = pairs(30)
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(s.to_dict()) + "\n" for s in samples))
    runs = {}
    for name, answers in (("base", ["yes", "yes"] * 30), ("cand", ["yes", "no"] * 30)):
        preds = tmp_path / f"{name}.jsonl"
        preds.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in answered(samples, answers)))
        result = CliRunner().invoke(
            app,
            [
                "score",
                "--samples",
                str(tmp_path / "s.jsonl"),
                "--predictions",
                str(preds),
                "--out",
                str(tmp_path / name),
            ],
        )
        assert result.exit_code == 0, result.output
        runs[name] = json.loads((tmp_path / name / "metrics.json").read_text())
    assert runs["cand"]["models"]["m|prompt=true|generated"]["overall"]["yes_rate_gap"] == 100.0
    gated = nlibias.gate(tmp_path / "cand", baseline=tmp_path / "base")
    assert not gated.passed
    measures = {c.measure for c in gated.checks}
    assert measures == {"yes_rate_gap"}
    assert {c.comparison.candidate for c in gated.checks if c.comparison.slice_name == "overall"} == {100.0}
