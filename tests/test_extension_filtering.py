"""Adversarial filtering: policies on hand-built predictions, recorded predictions, held-out models."""

from __future__ import annotations

import pytest

from nlibias.errors import ConfigError
from nlibias.extension.config_rules import FilterPolicy, parse_policy
from nlibias.extension.filtering import filter_candidates, misprediction_table, policy_counts
from nlibias.models.fake import FakeNLIClassifier
from nlibias.schema import Sample

# Hypothesis keyword → label of filter models A, B, C (the fakes answer 0.9 for the rule's label).
# Mispredictions (non-neutral) per candidate: alpha 3, beta 1, gamma 1, delta 0, epsilon 2.
RULES = {
    "A": {
        "alpha": "entailment",
        "beta": "entailment",
        "gamma": "neutral",
        "delta": "neutral",
        "epsilon": "entailment",
    },
    "B": {
        "alpha": "contradiction",
        "beta": "neutral",
        "gamma": "neutral",
        "delta": "neutral",
        "epsilon": "contradiction",
    },
    "C": {
        "alpha": "entailment",
        "beta": "neutral",
        "gamma": "contradiction",
        "delta": "neutral",
        "epsilon": "neutral",
    },
}
DOMAIN = {"alpha": "gender", "beta": "gender", "gamma": "race", "delta": "race", "epsilon": "race"}


def candidates() -> list[Sample]:
    return [
        Sample(
            id=word,
            source="bbnli-next",
            domain=DOMAIN[word],
            subtopic=f"{DOMAIN[word]}_topic",
            premise="A premise.",
            hypothesis=f"They are {word}.",
            gold="neutral",
            stereotype="pro",
        )
        for word in DOMAIN
    ]


def models() -> list[FakeNLIClassifier]:
    return [FakeNLIClassifier(name, rules=rules) for name, rules in RULES.items()]


@pytest.mark.parametrize(
    ("policy", "kept"),
    [
        ("any", ["alpha", "beta", "gamma", "epsilon"]),  # at least one of three mispredicts
        ("all", ["alpha"]),  # all three
        ("at_least:2", ["alpha", "epsilon"]),
        ({"at_least": 3}, ["alpha"]),
    ],
)
def test_policies_keep_what_they_say(policy: object, kept: list[str]) -> None:
    run = filter_candidates(candidates(), models(), None, policy=policy, progress=False)  # type: ignore[arg-type]
    assert [s.id for s in run.kept] == kept


def test_every_model_label_and_probabilities_are_recorded_on_every_candidate() -> None:
    run = filter_candidates(candidates(), models(), None, policy="all", progress=False)
    assert len(run.candidates) == 5
    for sample in run.candidates:
        record = sample.provenance["filter"]
        assert set(record) == {"A", "B", "C"}
        word = sample.id
        for name in "ABC":
            assert record[name]["label"] == RULES[name][word]
            assert record[name]["probs"][RULES[name][word]] == pytest.approx(0.9)
            assert sum(record[name]["probs"].values()) == pytest.approx(1.0)
        assert sample.provenance["kept"] == (word == "alpha")
    assert [s.provenance["mispredicted_by"] for s in run.candidates] == [3, 1, 1, 0, 2]


def test_misprediction_table_and_policy_counts() -> None:
    run = filter_candidates(candidates(), models(), None, progress=False)
    table = {(r["model"], r["domain"]): r["count"] for r in misprediction_table(run.candidates, run.models)}
    # A: alpha, beta (gender), epsilon (race); B: alpha (gender), epsilon (race); C: alpha (gender), gamma (race)
    assert table == {
        ("A", "gender"): 2, ("A", "race"): 1, ("A", "all"): 3,
        ("B", "gender"): 1, ("B", "race"): 1, ("B", "all"): 2,
        ("C", "gender"): 1, ("C", "race"): 1, ("C", "all"): 2,
    }  # fmt: skip
    assert policy_counts(run.candidates, 3) == {
        "any": 4,
        "all": 1,
        "at_least:1": 4,
        "at_least:2": 2,
        "at_least:3": 1,
    }


def test_filter_predictions_go_through_the_cache(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from nlibias.runtime.cache import PredictionCache

    with PredictionCache(tmp_path / "c.sqlite") as cache:
        filter_candidates(candidates(), models(), cache, progress=False)
        again = models()
        run = filter_candidates(candidates(), again, cache, progress=False)
    assert all(model.calls == [] for model in again)
    assert all(stats["cached"] == 5 for stats in run.model_stats.values())


def test_held_out_models_and_bad_policies_are_refused() -> None:
    with pytest.raises(ConfigError, match="both a filter model and a held-out model"):
        filter_candidates(candidates(), models(), None, holdout=["C"], progress=False)
    with pytest.raises(ConfigError, match="between 1 and 3"):
        filter_candidates(candidates(), models(), None, policy="at_least:4", progress=False)
    with pytest.raises(ConfigError, match="listed twice"):
        filter_candidates(candidates(), [*models(), FakeNLIClassifier("A")], None, progress=False)
    for bad in ("most", "at_least:0", {"at_most": 1}, True):
        with pytest.raises(ConfigError, match="unknown filter policy"):
            parse_policy(bad)  # type: ignore[arg-type]
    assert parse_policy("at-least-2") == FilterPolicy("at_least", 2)
