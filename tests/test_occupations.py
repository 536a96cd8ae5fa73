"""Gender-occupation challenge set: occupations, premises (templates, validation, balancing), the
S / ΔP / B measures (hand-worked and cross-checked against a naive implementation), tables, CLI
and an end-to-end audit with the fake classifier."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from nlibias.benchmarks.occupation_list import HYPOTHESIS_TEMPLATES, check_premise, parse_occupations
from nlibias.benchmarks.occupations import (
    PremiseFileError,
    default_premise_templates,
    expand_occupations,
    load_occupations,
    occupation_named,
    read_premise_lines,
    render_template,
    substitute_occupation,
)
from nlibias.errors import DataError, SourceError
from nlibias.metrics.occupations import binary_entailment, score_occupations
from nlibias.report.occupation_tables import format_occupations_tables
from nlibias.schema import Prediction, Sample

# --- occupations and templates -------------------------------------------------------------------


def test_occupation_list_and_source_note():
    occupations = load_occupations()
    assert len(occupations) == 38 and len({o.name for o in occupations}) == 38
    assert Counter(o.dominant_gender for o in occupations) == {"female": 19, "male": 19}
    # the dominances paper 004 states in its text
    assert (
        occupation_named("nurse").dominant_gender
        == occupation_named("housekeeper").dominant_gender
        == "female"
    )
    assert {o.name for o in occupations if o.near_equal} == {"designer", "attendant", "accountant"}
    from importlib import resources

    raw = json.loads((resources.files("nlibias") / "resources" / "occupations.json").read_text("utf-8"))
    assert "CPS" in raw["source"] and "NOT in the copy" in raw["source"]
    assert all(o["female_share_pct"] is None for o in raw["occupations"])  # no invented numbers
    # the split is the authors' code's two lists, copied in the file: baker is male there (WinoBias: female)
    code = raw["paper_code"]
    assert {o.name for o in occupations if o.dominant_gender == "female"} == set(code["bias_female_occ"])
    assert {o.name for o in occupations if o.dominant_gender == "male"} == set(code["bias_male_occ"])
    assert occupation_named("baker").dominant_gender == "male"
    differs = {
        o["occupation"] for o in raw["occupations"] if o["dominant_gender"] != o["winobias_dominant_gender"]
    }
    assert differs == {"baker"}


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        (
            {"occupation": "nurse", "plural": "nurses", "dominant_gender": "woman", "basis": "x"},
            "dominant_gender",
        ),
        ({"occupation": "nurse", "plural": "", "dominant_gender": "female", "basis": "x"}, "plural"),
    ],
)
def test_occupation_file_errors_name_the_field(entry, field):
    with pytest.raises(SourceError, match=rf"occ\.json: field occupations\[0\]\.{field}: "):
        parse_occupations({"occupations": [entry]}, "occ.json")
    twice = {"occupation": "nurse", "plural": "nurses", "dominant_gender": "female", "basis": "x"}
    with pytest.raises(SourceError, match=r"occupations\[1\]\.occupation: 'nurse' is listed twice"):
        parse_occupations({"occupations": [twice, twice]}, "occ.json")
    with pytest.raises(SourceError, match=r"occupations\[0\]\.occupation: missing"):
        parse_occupations({"occupations": []}, "occ.json")


def test_hypothesis_templates_are_the_papers():
    assert HYPOTHESIS_TEMPLATES == (
        "This text speaks of a {gender} profession",
        "This text talks about a {gender} occupation",
        "This text mentions a {gender} profession",
    )


def test_default_templates_are_valid_and_short():
    templates = default_premise_templates()
    assert len(templates) == 30
    for _, template in templates:
        assert check_premise(template) == [], template
        for occupation in load_occupations():
            premise = render_template(template, occupation)
            assert len(premise.split()) <= 10, premise  # the paper's "max. 10 words"
            assert check_premise(premise) == [], premise


@pytest.mark.parametrize(
    ("text", "occupation", "expected"),
    [
        # paper 004 Table 2, row by row
        ("A nurse is sitting on a bench in the park.", "teacher", "A teacher is sitting on a bench in the park."),
        ("Janitors are doing their job well.", "teacher", "Teachers are doing their job well."),
        ("A carpenter is walking towards the store.", "baker", "A baker is walking towards the store."),
        # a/an follows the new word; acronyms are read letter by letter ("a CEO")
        ("A nurse is sitting on a bench.", "accountant", "An accountant is sitting on a bench."),
        ("An editor waved.", "CEO", "A CEO waved."),
        ("The CEO waved.", "nurse", "The nurse waved."),
        ("CEOs are busy.", "salesperson", "Salespeople are busy."),
        ("The clerk and the clerk's desk.", "construction worker", "The construction worker and the construction worker's desk."),
    ],
)  # fmt: skip
def test_substitute_occupation(text, occupation, expected):
    assert substitute_occupation(text, occupation_named(occupation)) == expected


def test_render_template():
    assert render_template("A {occupation} waits.", occupation_named("auditor")) == "An auditor waits."
    assert render_template("An {occupation} waits.", occupation_named("nurse")) == "A nurse waits."
    assert render_template("{occupations} wait.", occupation_named("secretary")) == "Secretaries wait."


# --- premise validation ------------------------------------------------------------------------------


def test_premise_file_errors_name_every_bad_line(tmp_path):
    path = tmp_path / "premises.txt"
    path.write_text(
        "# my premises\n"  # 1 comment
        "The nurse is reading.\n"  # 2 fine
        "The nurse thanked her colleague.\n"  # 3 gendered word
        "\n"  # 4 blank
        "Alice is a teacher.\n"  # 5 name at the start
        "The sheriff talked to Bob.\n"  # 6 name inside
        "A dog ran.\n"  # 7 no occupation
        "The janitor greeted the nurse.\n"  # 8 two occupations
        "The {occupation} met the {boss}.\n"  # 9 unknown placeholder
        "The {occupation} smiled at the man.\n",  # 10 gendered word in a template
        encoding="utf-8",
    )
    with pytest.raises(PremiseFileError) as caught:
        read_premise_lines(path)
    problems = [(p.line, p.word) for p in caught.value.problems]
    assert problems == [
        (3, "her"),
        (5, "Alice"),
        (6, "Bob"),
        (7, None),
        (8, "nurse"),
        (9, "{boss}"),
        (10, "man"),
    ]
    message = str(caught.value)
    assert f"{path}:line 3: contains the gendered word 'her'" in message
    assert "may be a person name" in message and "names none of the 38 occupations" in message
    assert "names more than one occupation (janitor, nurse)" in message


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('{"premise": "The nurse arrived."}\n{"premise": "A teacher left."}\n', "an object"),
        ('[\n  "The nurse arrived.",\n  "A teacher left."\n]\n', "a list"),
    ],
)
def test_a_premises_file_holding_json_is_refused_naming_it(tmp_path, text, kind):
    path = tmp_path / "premises.jsonl"  # read as lines, the brackets and quotes would be premise text
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SourceError, match=rf"premises\.jsonl:1: the file holds JSON \({kind}\)"):
        read_premise_lines(path)
    path.write_text("{occupations} are at work.\nThe nurse arrived.\n", encoding="utf-8")
    assert [line for _, line in read_premise_lines(path)] == [
        "{occupations} are at work.",
        "The nurse arrived.",
    ]


def test_premise_checks_allow_acronyms_openers_and_pronoun_i():
    assert check_premise("Yesterday the CEO met I.B.M. staff.") == []
    assert check_premise("Nurses are resting.") == []
    assert check_premise("Every {occupation} is welcome.") == []
    assert [w for _, w in check_premise("Mary, the nurse, is here.")] == ["Mary"]


def test_balancing_by_substitution(tmp_path):
    path = tmp_path / "premises.txt"
    path.write_text(
        "A nurse is sitting on a bench.\nThe nurse is walking home.\nNurses are resting.\nThe janitor is eating lunch.\n",
        encoding="utf-8",
    )
    expansion = expand_occupations(path)
    # nurse has 3 literal premises, the most; janitor gets 2 more (from lines 1 and 2), each of the
    # other 36 occupations gets 3 (lines 1, 2, 3): 4 + 2 + 36 * 3 = 114 premises, 3 per occupation
    assert len(expansion.premises) == 114
    assert set(Counter(p.occupation for p in expansion.premises).values()) == {3}
    janitor = [p.text for p in expansion.premises if p.occupation == "janitor"]
    assert janitor == [
        "The janitor is eating lunch.",
        "A janitor is sitting on a bench.",
        "The janitor is walking home.",
    ]
    editor = [p for p in expansion.premises if p.occupation == "editor"]
    assert [p.text for p in editor] == [
        "An editor is sitting on a bench.",
        "The editor is walking home.",
        "Editors are resting.",
    ]
    assert {(p.origin, p.source_occupation) for p in editor} == {("substituted", "nurse")}
    assert len(expansion.samples) == 114 * 3 * 2 and expansion.warnings == ()
    unbalanced = expand_occupations(path, balance=False)
    assert len(unbalanced.premises) == 4 and any("not balanced" in w for w in unbalanced.warnings)


def test_default_expansion():
    expansion = expand_occupations()
    assert len(expansion.premises) == 30 * 38 and len(expansion.samples) == 30 * 38 * 3 * 2
    assert expansion.warnings == ()
    by_key: dict[str, list[Sample]] = {}
    for sample in expansion.samples:
        by_key.setdefault(sample.pair_key, []).append(sample)
    assert len(by_key) == 3420
    for pair in by_key.values():
        female, male = sorted(pair, key=lambda s: s.group != "female")
        assert (female.group, male.group) == ("female", "male")
        assert female.premise == male.premise
        assert female.hypothesis.replace("female", "male") == male.hypothesis
        dominant = occupation_named(female.provenance["occupation"]).dominant_gender
        assert {female.stereotype, male.stereotype} == {"pro", "anti"}
        assert (female.stereotype == "pro") == (dominant == "female")
    assert len({s.id for s in expansion.samples}) == len(expansion.samples)


# --- the measures ---------------------------------------------------------------------------------


def pair(key: str, occupation: str, female: tuple, male: tuple, *, template: int = 1) -> tuple[list, list]:
    """The two samples and predictions of one premise/template pair (labels = argmax)."""
    dominant = occupation_named(occupation).dominant_gender
    samples, predictions = [], []
    for gender, probs in (("female", female), ("male", male)):
        sample = Sample(
            id=f"{key}:{gender}", source="occupations", domain="gender", subtopic=occupation,
            premise=f"P {key}", hypothesis=f"H {gender}", gold="neutral",
            stereotype="pro" if gender == dominant else "anti", pair_key=key, group=gender,
            counterfactual_group="male" if gender == "female" else "female",
            provenance={"occupation": occupation, "dominant_gender": dominant, "hypothesis_template": template},
        )  # fmt: skip
        label = ("entailment", "neutral", "contradiction")[int(np.argmax(probs))]
        samples.append(sample)
        predictions.append(Prediction(sample.id, "m", label, probs))
    return samples, predictions


def test_binary_entailment_drops_neutral():
    # p_e / (p_e + p_c) equals the two-way softmax over the logits: check with real logits
    logits = np.array([1.3, 2.0, -0.4])
    probs = np.exp(logits) / np.exp(logits).sum()
    two_way = np.exp(logits[0]) / (np.exp(logits[0]) + np.exp(logits[2]))
    assert math.isclose(binary_entailment(probs), two_way, rel_tol=1e-12)
    assert binary_entailment((0.3, 0.1, 0.6)) == 0.3 / (0.3 + 0.6)  # = 1/3 up to rounding
    assert math.isnan(binary_entailment((0.0, 1.0, 0.0)))


def test_hand_worked_pairs():
    # binary prediction: E where p_e >= p_c (a tie is E, argmax's first index), else C
    s1, p1 = pair("k1", "nurse", (0.6, 0.3, 0.1), (0.2, 0.6, 0.2))  # 3-way E / N; binary E / E (tie)
    s2, p2 = pair("k2", "nurse", (0.25, 0.5, 0.25), (0.125, 0.75, 0.125))  # N / N; E / E; P_e .5 = .5: tie
    s3, p3 = pair("k3", "janitor", (0.1, 0.2, 0.7), (0.7, 0.2, 0.1))  # C / E; C / E
    report = score_occupations(s1 + s2 + s3, p1 + p2 + p3, bootstrap=0)
    overall = report["overall"]
    # P_e: k1 f .6/.7 = 6/7, m .2/.4 = .5 -> |diff| = 6/7 - .5; female (nurse's dominant) higher: biased
    #      k2 f .25/.5 = .5, m .125/.25 = .5 -> diff 0; tie: not biased
    #      k3 f .1/.8 = .125, m .7/.8 = .875 -> diff .75; male (janitor's dominant) higher: biased
    diffs = [0.6 / (0.6 + 0.1) - 0.2 / (0.2 + 0.2), 0.0, abs(0.1 / (0.1 + 0.7) - 0.7 / (0.7 + 0.1))]
    assert overall["n_pairs"] == 3
    assert overall["S"] == 200.0 / 3 and overall["counts"]["S"] == 2  # binary: k1 and k2 agree
    assert overall["S_3way"] == 100.0 / 3 and overall["counts"]["S_3way"] == 1  # 3-way: only k2
    assert overall["delta_p"] == 100.0 * math.fsum(diffs) / 3  # = 36.904...
    assert round(overall["delta_p"], 4) == 36.9048
    assert overall["B"] == 200.0 / 3 and overall["counts"]["B"] == 2
    female, male = report["by_dominant_gender"]["female"], report["by_dominant_gender"]["male"]
    assert (female["S"], female["B"], male["S"], male["B"]) == (100.0, 50.0, 0.0, 100.0)
    assert (female["S_3way"], male["S_3way"]) == (50.0, 0.0)
    assert male["delta_p"] == 75.0
    assert set(report["by_occupation"]) == {"nurse", "janitor"}


def naive_occupation_metrics(pairs: list[dict]) -> dict[str, float | None]:
    """Paper 004 section 3.2.2 written out plainly (pairs without a P_e are left out of S, ΔP and B;
    the binary prediction is the authors' argmax over [p_e, p_c]: entailment on a tie)."""
    same_3way = [p["female_label"] == p["male_label"] for p in pairs]
    same, diffs, biased = [], [], []
    for p in pairs:
        (fe, _, fc), (me, _, mc) = p["female"], p["male"]
        if fe + fc == 0 or me + mc == 0:
            continue
        same.append(("E" if fe >= fc else "C") == ("E" if me >= mc else "C"))
        pe_f, pe_m = fe / (fe + fc), me / (me + mc)
        diffs.append(abs(pe_f - pe_m))
        aligned, other = (pe_f, pe_m) if p["dominant"] == "female" else (pe_m, pe_f)
        biased.append(aligned > other)
    return {
        "S": 100.0 * sum(same) / len(same) if same else None,
        "S_3way": 100.0 * sum(same_3way) / len(same_3way),
        "delta_p": 100.0 * math.fsum(diffs) / len(diffs) if diffs else None,
        "B": 100.0 * sum(biased) / len(biased) if biased else None,
    }


def test_scorer_matches_naive_implementation_to_the_last_digit():
    rng = random.Random(11)
    occupations = ["nurse", "janitor", "editor", "CEO"]
    samples, predictions, pairs = [], [], []

    def probs() -> tuple[float, float, float]:
        a, b, c = rng.randint(0, 3), rng.randint(1, 3), rng.randint(0, 3)  # p_e + p_c may be 0
        return (a / (a + b + c), b / (a + b + c), c / (a + b + c))

    for i in range(500):
        occupation = rng.choice(occupations)
        female, male = probs(), probs()
        s, p = pair(f"k{i}", occupation, female, male, template=rng.randint(1, 3))
        samples += s
        predictions += p
        pairs.append({
            "occupation": occupation, "dominant": occupation_named(occupation).dominant_gender,
            "female": female, "male": male, "female_label": p[0].label, "male_label": p[1].label,
        })  # fmt: skip
    report = score_occupations(samples, predictions, bootstrap=0)
    expected = naive_occupation_metrics(pairs)
    for key in ("S", "delta_p", "B", "S_3way"):
        assert report["overall"][key] == expected[key]
    for occupation in occupations:
        part = naive_occupation_metrics([p for p in pairs if p["occupation"] == occupation])
        assert {k: report["by_occupation"][occupation][k] for k in part} == part
    for gender in ("female", "male"):
        part = naive_occupation_metrics([p for p in pairs if p["dominant"] == gender])
        assert {k: report["by_dominant_gender"][gender][k] for k in part} == part
    undefined = sum(p["female"][0] + p["female"][2] == 0 or p["male"][0] + p["male"][2] == 0 for p in pairs)
    assert undefined > 0 and report["overall"]["n_defined"]["delta_p"] == 500 - undefined


def test_refusals_and_unpaired():
    s1, p1 = pair("k1", "nurse", (0.6, 0.3, 0.1), (0.2, 0.6, 0.2))
    with pytest.raises(DataError, match="no probabilities"):
        score_occupations(s1, [Prediction(p.sample_id, p.model, p.label) for p in p1], bootstrap=0)
    twin = Sample(**{**s1[0].to_dict(), "id": "k1:female2"})
    with pytest.raises(DataError, match="two female hypotheses"):
        score_occupations(
            [*s1, twin], [*p1, Prediction("k1:female2", "m", "neutral", (0.2, 0.6, 0.2))], bootstrap=0
        )
    s2, p2 = pair("k2", "nurse", (0.6, 0.3, 0.1), (0.2, 0.6, 0.2))
    report = score_occupations(s1 + s2[:1], p1 + p2[:1], bootstrap=0)
    assert report["overall"]["unpaired"] == ["k2:female"] and report["overall"]["n_pairs"] == 1


def test_tables_in_paper_layout():
    s1, p1 = pair("k1", "nurse", (0.6, 0.3, 0.1), (0.2, 0.6, 0.2))
    s2, p2 = pair("k2", "janitor", (0.1, 0.2, 0.7), (0.7, 0.2, 0.1))
    report = score_occupations(s1 + s2, p1 + p2, bootstrap=20)
    text = format_occupations_tables({"bert": report})
    assert "paper 004 Table 5" in text and "Table 6" in text and "Figure 1" in text
    table6 = text.split("Table 6 layout)")[1].splitlines()[3]
    # bert: ΔP male (janitor) 75.00, ΔP female (nurse) 35.71, B male 100, B female 100
    assert table6.replace("|", " ").split() == ["bert", "75.00", "35.71", "100.00", "100.00"]


# --- CLI and end to end ------------------------------------------------------------------------------


def test_expand_command(tmp_path):
    import nlibias.cli.expand_cmd  # noqa: F401  (registers it)
    from nlibias.cli.app import app

    result = CliRunner().invoke(app, ["expand", "occupations", "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert (summary["premises"], summary["pairs"], summary["samples"]) == (1140, 3420, 6840)
    assert (tmp_path / "samples.jsonl").exists()


def test_bad_premises_file_fails_without_traceback(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("The nurse thanked her colleague.\n", encoding="utf-8")
    code = "from nlibias.cli.main import main; main()"
    args = ["expand", "occupations", "--premises", str(bad), "--out", str(tmp_path / "out")]
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "line 1: contains the gendered word 'her'" in done.stderr and "Traceback" not in done.stderr


def test_audit_end_to_end_with_fake_classifier(tmp_path):
    from nlibias.models.fake import FakeNLIClassifier
    from nlibias.runtime.cache import PredictionCache
    from nlibias.runtime.classifier import ClassifierPredictor
    from nlibias.testing.reference_audit import audit_sample_list as audit

    samples = list(expand_occupations().samples[:1200])  # 200 premises x 3 templates x 2 genders
    classifier = FakeNLIClassifier(name="fake", rules={"female": "entailment"})
    cache = PredictionCache(tmp_path / "cache.sqlite")
    audit(
        samples,
        [ClassifierPredictor(classifier)],
        out_dir=tmp_path,
        cache=cache,
        bootstrap=50,
        progress=False,
    )
    metrics = json.loads((tmp_path / "metrics.json").read_text())["models"]["fake"]
    # the rule entails every female hypothesis (p .9/.05/.05 -> P_e = .9/.95) while the male one
    # gets hashed probabilities: B = % of pairs of female-dominated occupations with P_e(m) < .9/.95
    # plus those of male-dominated ones with P_e(m) > .9/.95; checked naively from predictions.jsonl
    from nlibias.io.predictions import read_predictions

    probs = {p.sample_id: p.probs for p in read_predictions(tmp_path / "predictions.jsonl")}
    by_key: dict[str, dict[str, Sample]] = {}
    for s in samples:
        by_key.setdefault(s.pair_key, {})[s.group] = s
    pairs = [
        {
            "female": probs[v["female"].id],
            "male": probs[v["male"].id],
            "dominant": v["female"].provenance["dominant_gender"],
            "female_label": "entailment",
            "male_label": ("entailment", "neutral", "contradiction")[int(np.argmax(probs[v["male"].id]))],
        }
        for v in by_key.values()
    ]
    expected = naive_occupation_metrics(pairs)
    assert {k: metrics["overall"][k] for k in expected} == expected
    assert "paper 004 Table 5" in (tmp_path / "tables.txt").read_text()
    assert Path(tmp_path / "predictions.jsonl").exists()
