"""WinoQueer-NLI scoring over columns (:func:`nlibias.metrics.wq_nli.score_wq_nli_columns`):
the same report as a plain-Python scan of the samples, pairing on codes, fallbacks and refusals."""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from nlibias.errors import DataError
from nlibias.metrics.metric_frame import units_frame
from nlibias.metrics.pairing import pair_codes
from nlibias.metrics.wq_nli import (
    M_KEYS,
    PROVENANCE_KEYS,
    arrange_rows,
    score_wq_nli,
    score_wq_nli_columns,
)
from nlibias.schema import Prediction, Sample
from nlibias.schema.columns import Categorical, SampleColumns
from pairing_reference import pair_samples
from test_wq_nli import naive_conditions


@pytest.fixture(scope="module")
def expansion(wq_nli_expansion):  # type: ignore[no-untyped-def]
    return wq_nli_expansion


# --- scoring over columns: the same report as a plain-Python scan ---------------------------------


def hashed_probs(sample_id: str) -> tuple[Fraction, Fraction, Fraction]:
    """A fixed probability triple per id, exact, on a coarse grid so that ties are frequent."""
    a, b, c = (x % 5 for x in hashlib.blake2b(sample_id.encode(), digest_size=3).digest())
    total = a + b + c
    return (
        (Fraction(a, total), Fraction(b, total), Fraction(c, total))
        if total
        else (Fraction(1), Fraction(0), Fraction(0))
    )


REFERENCE_GROUPINGS = ("identity_group", "predicate_category", "counterfactual", "subject_kind", "domain")


def reference_report(samples: list[Sample], probs_of: dict[str, tuple]) -> dict:
    """Rows, unpaired ids, repeats and per-group counts of M1..M8 from a plain dict-based scan."""
    slots: dict[str, dict[str, Sample]] = {}
    unpaired = []
    for s in samples:
        if s.pair_key is None or s.stereotype not in ("pro", "anti"):
            unpaired.append(s.id)
            continue
        slots.setdefault(s.pair_key, {})[s.stereotype] = s
    rows = [(slot["pro"], slot["anti"]) for slot in slots.values() if len(slot) == 2]
    unpaired += [s.id for slot in slots.values() if len(slot) == 1 for s in slot.values()]

    def label(pro: Sample, key: str, fallback: str | None) -> str:
        value = pro.provenance.get(key)
        return str(value if value is not None else fallback if fallback is not None else "unknown")

    groups: dict[str, dict[str, list[int]]] = {name: {} for name in REFERENCE_GROUPINGS}
    overall = [0] * 9  # n_rows, then how often M1..M8 hold
    for pro, anti in rows:
        counts = [1, *map(int, naive_conditions(probs_of[pro.id], probs_of[anti.id]))]
        labels = {
            "identity_group": label(pro, "identity_group", pro.group),
            "predicate_category": label(pro, "predicate_category", pro.subtopic),
            "counterfactual": label(pro, "counterfactual", pro.counterfactual_group),
            "subject_kind": label(pro, "subject_kind", None),
            "domain": pro.domain,
        }
        for by, name in labels.items():
            totals = groups[by].setdefault(name, [0] * 9)
            totals[:] = [t + c for t, c in zip(totals, counts, strict=True)]
        overall[:] = [t + c for t, c in zip(overall, counts, strict=True)]
    repeated = sum(pro.provenance.get("repeat_of") is not None for pro, _ in rows)
    return {"overall": overall, "groups": groups, "unpaired": unpaired, "repeated_rows": repeated}


def assert_matches_reference(report: dict, reference: dict) -> None:
    def check(part: dict, totals: list[int]) -> None:
        assert part["n_rows"] == totals[0]
        assert part["counts"] == dict(zip(M_KEYS, totals[1:], strict=True))
        assert [part[k] for k in M_KEYS] == [100.0 * c / totals[0] for c in totals[1:]]

    check(report["overall"], reference["overall"])
    assert report["overall"]["unpaired"] == reference["unpaired"]
    assert report["overall"]["repeated_rows"] == reference["repeated_rows"]
    for by, totals_by_name in reference["groups"].items():
        assert list(report[f"by_{by}"]) == sorted(totals_by_name)
        for name, totals in totals_by_name.items():
            check(report[f"by_{by}"][name], totals)


def test_real_samples_scored_as_a_plain_scan_would(expansion):
    # Shuffled, every 97th sample dropped (787 lone partners) and every 50th pro sample without
    # provenance (its labels fall back to group / subtopic / counterfactual_group / "unknown").
    samples = [
        replace(s, provenance={}) if s.stereotype == "pro" and i % 100 == 0 else s
        for i, s in enumerate(expansion.samples)
        if i % 97 != 5
    ]
    random.Random(11).shuffle(samples)
    probs_of = {s.id: hashed_probs(s.id) for s in samples}
    predictions = [Prediction(i, "m", "neutral", tuple(map(float, p))) for i, p in probs_of.items()]
    report = score_wq_nli(samples, predictions, bootstrap=0)
    reference = reference_report(samples, probs_of)
    assert_matches_reference(report, reference)
    assert len(reference["unpaired"]) == 787 and 0 < reference["repeated_rows"] < 128
    assert "unknown" in report["by_subject_kind"]  # the fallback was exercised
    # the columns path with bootstrap intervals: the same report as the object path
    columns = SampleColumns.from_samples(samples, provenance_keys=PROVENANCE_KEYS)
    probs = np.array([probs_of[s.id] for s in samples], dtype=float)
    on_columns = score_wq_nli_columns(columns, probs, model="m", bootstrap=50, seed=4)
    assert on_columns == score_wq_nli(samples, predictions[::-1], bootstrap=50, seed=4)
    assert on_columns["overall"]["ci"]["M1"] is not None


def wq(sample_id: str, stereotype: str | None, pair_key: str | None, **fields) -> Sample:
    return Sample(id=sample_id, source="wq-nli", domain=fields.pop("domain", "sexual_orientation"),
                  subtopic=fields.pop("subtopic", "moral"), premise=f"P {sample_id}.", hypothesis="H.",
                  gold="neutral", stereotype=stereotype, pair_key=pair_key, **fields)  # fmt: skip


def small_wq_set() -> tuple[list[Sample], np.ndarray]:
    samples = [
        wq("b:anti", "anti", "b"),
        wq("x:none", None, "x"),  # a key but no role: unpaired at once, and does not open pair x
        wq(
            "a:pro",
            "pro",
            "a",
            group="Lesbian",
            counterfactual_group="Straight",
            provenance={"identity_group": None, "predicate_category": None},
        ),
        wq("c:pro", "pro", "c"),  # no anti: its pair is incomplete
        wq(
            "b:pro",
            "pro",
            "b",
            group="LGBTQ",
            subtopic="danger",
            provenance={"identity_group": "Gay", "subject_kind": "name", "repeat_of": 3},
        ),
        wq("free", "pro", None),  # no key
        # a row's labels and repeat come from its pro sample: Queer and repeat_of 1 are not read
        wq("a:anti", "anti", "a", provenance={"identity_group": "Queer", "repeat_of": 1}),
        wq("x:pro", "pro", "x"),  # opens pair x, here: after c
    ]
    probs = {
        "b:pro": (0.6, 0.3, 0.1),
        "b:anti": (0.2, 0.7, 0.1),
        "a:pro": (0.1, 0.8, 0.1),
        "a:anti": (0.8, 0.1, 0.1),
    }
    return samples, np.array([probs.get(s.id, (0.25, 0.5, 0.25)) for s in samples])


def test_small_set_pairs_labels_and_repeats():
    samples, probs = small_wq_set()
    predictions = [Prediction(s.id, "m", "neutral", tuple(p)) for s, p in zip(samples, probs, strict=True)]
    rows = arrange_rows(samples, predictions)
    # rows in the order their key is first seen with a role: b (position 0), a (position 2)
    assert list(rows.pair_keys) == ["b", "a"]
    assert rows.stereo.tolist() == [[0.6, 0.3, 0.1], [0.1, 0.8, 0.1]]
    assert rows.counter.tolist() == [[0.2, 0.7, 0.1], [0.8, 0.1, 0.1]]
    # no key or no role first (x:none, free, by position), then lone members of pairs c (seen at
    # 3) and x (seen at 7, not at 1)
    assert rows.unpaired == ("x:none", "free", "c:pro", "x:pro")
    # b: provenance Gay / no predicate_category -> subtopic "danger" / no counterfactual and no
    # counterfactual_group -> "unknown" / "name". a: identity_group None -> group "Lesbian",
    # predicate_category None -> subtopic "moral", counterfactual -> "Straight", subject_kind "unknown"
    assert rows.groups["identity_group"].tolist() == ["Gay", "Lesbian"]
    assert rows.groups["predicate_category"].tolist() == ["danger", "moral"]
    assert rows.groups["counterfactual"].tolist() == ["unknown", "Straight"]
    assert rows.groups["subject_kind"].tolist() == ["name", "unknown"]
    assert rows.groups["domain"].tolist() == ["sexual_orientation"] * 2
    assert rows.repeated_rows == 1  # b:pro repeats row 3; a's repeat_of is on its anti sample
    # row b holds M1, M2, M3, M5, M6, M7 (first hand-worked case above); row a holds nothing
    report = score_wq_nli(samples, predictions, bootstrap=0)
    assert report["overall"]["counts"] == dict(zip(M_KEYS, [1, 1, 1, 0, 1, 1, 1, 0], strict=True))
    assert report["overall"]["M1"] == 50.0 and report["overall"]["n_rows"] == 2
    assert {k: v["M1"] for k, v in report["by_identity_group"].items()} == {"Gay": 100.0, "Lesbian": 0.0}
    assert list(report["by_counterfactual"]) == ["Straight", "unknown"]  # sorted by name
    assert report["overall"]["unpaired"] == list(rows.unpaired) and report["overall"]["repeated_rows"] == 1


def test_columns_without_a_provenance_key_fall_back_everywhere():
    samples, probs = small_wq_set()
    report = score_wq_nli_columns(SampleColumns.from_samples(samples), probs, model="m", bootstrap=0)
    # no provenance kept: identity groups from `group` (b: LGBTQ, a: Lesbian), no repeats
    assert list(report["by_identity_group"]) == ["LGBTQ", "Lesbian"]
    assert list(report["by_subject_kind"]) == ["unknown"] and report["overall"]["repeated_rows"] == 0


def test_columns_refuse_missing_probabilities():
    samples, probs = small_wq_set()
    probs[[2, 5]] = np.nan  # a:pro and free
    columns = SampleColumns.from_samples(samples, provenance_keys=PROVENANCE_KEYS)
    with pytest.raises(
        DataError, match=r"model 'm' gave no probabilities for 2 of 8 samples \(first: 'a:pro'\)"
    ):
        score_wq_nli_columns(columns, probs, model="m", bootstrap=0)


@pytest.mark.parametrize(
    ("keys_and_roles", "message"),
    [
        # k opens first, but the scan meets j's second pro (position 2) before k's (position 3)
        (
            [("k", "pro"), ("j", "pro"), ("j", "pro"), ("k", "pro")],
            "pair 'j' has two pro samples ('s1', 's2')",
        ),
        # a third one: the error names the first two
        ([("k", "anti"), ("k", "anti"), ("k", "anti")], "pair 'k' has two anti samples ('s0', 's1')"),
    ],
)
def test_two_samples_in_one_role_name_the_key_and_both_ids(keys_and_roles, message):
    samples = [wq(f"s{i}", role, key) for i, (key, role) in enumerate(keys_and_roles)]
    probs = np.full((len(samples), 3), 1 / 3)
    with pytest.raises(DataError, match=re.escape(message + "; each WQ-NLI row is one pro and one anti")):
        score_wq_nli_columns(SampleColumns.from_samples(samples), probs, model="m", bootstrap=0)
    with pytest.raises(DataError, match=re.escape(message)):  # as the sample-by-sample pairing says
        pair_samples(samples, lambda s: s.stereotype, ("pro", "anti"), unit="WQ-NLI row")


def test_pairing_on_codes_equals_pairing_sample_by_sample():
    rng = random.Random(5)
    outcomes = Counter()
    for trial in range(400):
        samples = [
            wq(
                f"s{i}",
                rng.choice(["pro", "anti", "anti", "pro", None]),
                rng.choice(["a", "b", "c", "d", None]),
            )
            for i in range(rng.randint(1, 9))
        ]
        columns = SampleColumns.from_samples(samples)
        try:
            pairs, unpaired = pair_samples(samples, lambda s: s.stereotype, ("pro", "anti"), unit="row")
        except DataError as error:
            outcomes["error"] += 1
            with pytest.raises(DataError, match=re.escape(str(error))):
                pair_columns(columns)
            continue
        paired = pair_columns(columns)
        assert columns.position_ids(paired.first) == [p["pro"].id for p in pairs], trial
        assert columns.position_ids(paired.second) == [p["anti"].id for p in pairs], trial
        assert columns.position_ids(paired.unpaired) == unpaired, trial
        outcomes["paired" if pairs else "none"] += 1
    assert min(outcomes.values()) > 30  # errors, pairs and sets without a pair all came up


def pair_columns(columns: SampleColumns):
    return pair_codes(columns.pair_code, columns.stereotype, roles=("pro", "anti"), unit="row",
                      pair_keys=columns.pair_keys, ids=columns.ids)  # fmt: skip


def test_categorical_groups_summarise_like_label_lists():
    values = np.array([[1.0], [0.0], [1.0], [1.0], [0.0]])
    labels = [2, "2", None, "b", "b"]  # 2 and "2" share the group "2", as str(label) does
    kwargs = {"count_measures": {"M"}, "bootstrap": 30, "seed": 1, "n_key": "n"}
    as_list = units_frame(values, ["M"], groups={"g": labels}, **kwargs).to_dict()
    as_codes = units_frame(values, ["M"], groups={"g": Categorical.from_values(labels)}, **kwargs).to_dict()
    assert as_codes == as_list
    assert list(as_codes["by_g"]) == ["2", "None", "b"] and as_codes["by_g"]["2"]["n"] == 2
