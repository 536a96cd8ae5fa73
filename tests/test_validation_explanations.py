"""The explanations round of ``nlibias validate``: a stratified, seeded queue of explained answers
(drawn from a hand-written ``explanations.jsonl``), answers stored append-only with the
explanations' fingerprint, human–human kappa and each judge's kappa, precision and recall against
the humans (hand-derived below), the app's API and the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app as cli
from nlibias.errors import ConfigError, SourceError
from nlibias.validation.agreement import judge_agreement, majority_label, precision_recall
from nlibias.validation.explanation_queue import (
    EXPLANATIONS_QUEUE,
    draw_explanation_queue,
    item_id,
    read_explanation_queue,
)
from nlibias.validation.resolve import parse_rule
from nlibias.validation.status import explanations_status, validation_status
from nlibias.validation.store import AnnotationStore

runner = CliRunner()
MODEL = "smollm2|prompt=true|generated"
LABELS = ("balanced", "biased", "invalid")


def row(
    sample: str, subtopic: str, label: str | None, judge: str = "j", lm: str | None = None
) -> dict[str, Any]:
    """One row of explanations.jsonl (the fields the queue reads)."""
    return {
        "id": sample,
        "model": MODEL,
        "prompt": "true",
        "premise": f"Premise of {sample}.",
        "hypothesis": f"Hypothesis of {sample}.",
        "answer": "yes",
        "explanation": "" if label is None else f"Because of {sample}.",
        "subtopic": subtopic,
        "domain": "gender",
        "stereotype": "pro",
        "label": label,
        "judge": judge,
        "lm_label": lm,
    }


def write_explanations(run_dir: Path, rows: list[dict[str, Any]], lm_judge: str | None = None) -> Path:
    out = run_dir / "explanations"
    out.mkdir(parents=True, exist_ok=True)
    (out / "explanations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (out / "explanations.json").write_text(json.dumps({"lm_judge": lm_judge, "models": {}}), encoding="utf-8")
    return run_dir


def grid_rows() -> list[dict[str, Any]]:
    """Explained answers over 3 labels x 3 subtopics, stratum (label i, subtopic k) holding
    1 + i + k of them; two NLI judges (k gives each answer the next label after j's), and one
    answer without an explanation (no label)."""
    rows = []
    for i, label in enumerate(LABELS):
        for k, subtopic in enumerate(("t1", "t2", "t3")):
            for n in range(1 + i + k):
                sample = f"{label}-{subtopic}-{n}"
                rows.append(row(sample, subtopic, label))
                rows.append(row(sample, subtopic, LABELS[(i + 1) % 3], judge="k"))
    rows.append(row("silent", "t1", None))
    return rows


def test_queue_is_stratified_by_label_and_subtopic_and_seeded(tmp_path: Path) -> None:
    rows = grid_rows()
    # strata sizes 1+i+k for i, k in 0..2: 1,2,3, 2,3,4, 3,4,5 -> 27 explained answers (j's rows)
    assert sum(1 for r in rows if r["judge"] == "j" and r["label"]) == 27
    run = write_explanations(tmp_path / "G", rows)
    queue = draw_explanation_queue(run, size=9, seed=3)
    # 9 strata, one item each: every label and every subtopic is there
    assert queue.available == 27 and len(queue.items) == 9 and queue.stratified_by == "j"
    assert set(queue.strata().values()) == {1} and len(queue.strata()) == 9
    assert {it.labels["j"] for it in queue.items} == set(LABELS)
    assert {it.subtopic for it in queue.items} == {"t1", "t2", "t3"}
    assert "silent" not in {it.id for it in queue.items}  # no explanation: nothing to judge
    # 12 = 9 + a second pass over the 8 strata with 2 or more items, the first 3 in sorted order:
    # balanced/t2, balanced/t3, biased/t1 (balanced/t1 has a single answer)
    strata = draw_explanation_queue(run, size=12, seed=3).strata()
    assert strata["balanced / t1"] == 1 and strata["balanced / t2"] == 2 and strata["balanced / t3"] == 2
    assert strata["biased / t1"] == 2 and strata["biased / t2"] == 1 and sum(strata.values()) == 12
    # seeded: the same seed draws the same answers; the file read back is the queue drawn
    again = [it.item_id for it in draw_explanation_queue(run, size=9, seed=3).items]
    assert again == [it.item_id for it in queue.items]
    other = [it.item_id for it in draw_explanation_queue(run, size=9, seed=4).items]
    assert other != again
    assert [it.item_id for it in read_explanation_queue(run).items] == other
    # stratified by the other judge, k's labels (each answer's label shifted by one) form the strata
    by_k = draw_explanation_queue(run, size=9, seed=3, judge="k")
    assert by_k.stratified_by == "k" and set(by_k.strata().values()) == {1}
    assert draw_explanation_queue(run, size=500).available == len(draw_explanation_queue(run, size=500).items)


def test_queue_refusals(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no explanations here"):
        draw_explanation_queue(tmp_path)
    run = write_explanations(tmp_path / "G", grid_rows())
    with pytest.raises(ConfigError, match="judge 'x' did not label") as caught:
        draw_explanation_queue(run, judge="x")
    assert caught.value.parameter == "judge"
    with pytest.raises(ConfigError, match="size must be an int of at least 1; got int 0"):
        draw_explanation_queue(run, size=0)
    silent = write_explanations(tmp_path / "S", [row("s", "t", None)])
    with pytest.raises(SourceError, match="no answer here has an explanation"):
        draw_explanation_queue(silent)


# Six explained answers: two annotators, one NLI judge j and an LM judge (derivations in the test).
ANA = ["balanced", "biased", "invalid", "biased", "balanced", "invalid"]
BEN = ["balanced", "biased", "invalid", "balanced", "balanced", "invalid"]
J = ["balanced", "biased", "balanced", "biased", "biased", "invalid"]
LM = ["balanced", "biased", "invalid", None, "balanced", "biased"]


@pytest.fixture
def judged(tmp_path: Path) -> tuple[Path, list[str]]:
    rows = [row(f"s{n}", "t1" if n < 3 else "t2", J[n], lm=LM[n]) for n in range(6)]
    run = write_explanations(tmp_path / "G", rows, lm_judge="lmj")
    queue = draw_explanation_queue(run, size=6, seed=0)
    ids = [item_id(MODEL, "true", f"s{n}") for n in range(6)]
    assert sorted(it.item_id for it in queue.items) == sorted(ids)
    store = AnnotationStore.for_run(run)
    for who, labels in (("ana", ANA), ("ben", BEN)):
        for hid, label in zip(ids, labels, strict=True):
            store.record_explanation(hid, who, label, fingerprint=queue.fingerprint)
    return run, ids


def test_store_keeps_history_and_the_latest_answer(judged: tuple[Path, list[str]]) -> None:
    run, ids = judged
    store = AnnotationStore.for_run(run)
    fingerprint = read_explanation_queue(run).fingerprint
    store.record_explanation(ids[0], "ana", "invalid", fingerprint=fingerprint)
    store.record_explanation(ids[0], "ana", "balanced", fingerprint=fingerprint)  # changed back
    assert [r.label for r in store.explanation_history(annotator="ana") if r.item_id == ids[0]] == [
        "balanced",
        "invalid",
        "balanced",
    ]
    assert store.current_explanations()[ids[0]]["ana"].label == "balanced"
    assert store.current_explanations(fingerprint="another") == {}
    with pytest.raises(ConfigError, match="unknown explanation label"):
        store.record_explanation(ids[0], "ana", "valid", fingerprint=fingerprint)
    with pytest.raises(ConfigError, match="annotator name"):
        store.record_explanation(ids[0], "<b>", "biased", fingerprint=fingerprint)
    # the hypotheses rounds are untouched by the explanations round
    assert store.current() == {} and store.history() == []


def test_precision_recall_and_judge_agreement_by_hand() -> None:
    # judge a a b against humans a b b: label a said twice, right once -> P 1/2; the humans' one a
    # found -> R 1; label b said once, right -> P 1; humans' two b, one found -> R 1/2
    pr = precision_recall(["a", "a", "b"], ["a", "b", "b"], ["a", "b", "c"])
    assert pr["a"] == {"precision": 0.5, "recall": 1.0, "predicted": 2, "support": 1}
    assert pr["b"] == {"precision": 1.0, "recall": 0.5, "predicted": 1, "support": 2}
    assert pr["c"] == {"precision": None, "recall": None, "predicted": 0, "support": 0}
    assert majority_label(["a", "b", "b"]) == "b" and majority_label(["a", "b"]) is None
    assert judge_agreement({"1": None}, {"1": "a"}, ["a"])["items"] == 0


def test_status_reports_human_and_judge_agreement(judged: tuple[Path, list[str]]) -> None:
    run, _ = judged
    report = explanations_status(run)
    assert report["queue"] == 6 and report["unjudged"] == 0 and not report["stale"]
    human = report["agreement"]
    # ana vs ben agree on 5 of 6 (not item 4). Marginals: ana balanced 2, biased 2, invalid 2;
    # ben 3, 1, 2. p_e = (2*3 + 2*1 + 2*2) / 36 = 1/3; kappa = (5/6 - 1/3) / (1 - 1/3) = 0.75
    assert human["kappa_kind"] == "cohen" and human["items"] == 6
    assert human["kappa"] == pytest.approx(0.75) and human["percent"] == pytest.approx(500 / 6)
    assert human["by_subtopic"]["t1"]["items"] == 3 and human["by_subtopic"]["t1"]["percent"] == 100.0
    # reference: the majority label; item 4 is a tie (biased / balanced) and is left out -> 5 items:
    # 1 balanced, 2 biased, 3 invalid, 5 balanced, 6 invalid
    assert report["reference"]["items"] == 5
    j = report["judges"]["j"]
    # j on them: balanced, biased, balanced, biased, invalid -> agrees on 1, 2, 6 = 3 of 5.
    # j's counts 2, 2, 1; the humans' 2, 1, 2: p_e = (4 + 2 + 2) / 25 = 8/25;
    # kappa = (15/25 - 8/25) / (17/25) = 7/17
    assert j["kind"] == "nli" and j["items"] == 5 and j["percent"] == pytest.approx(60.0)
    assert j["kappa"] == pytest.approx(7 / 17)
    # balanced: said on 1, 3, right on 1 -> P 1/2; humans' 1, 5 -> R 1/2. biased: said on 2, 5,
    # right on 2 -> P 1/2; humans' 2 -> R 1. invalid: said on 6 -> P 1; humans' 3, 6 -> R 1/2
    assert {k: (v["precision"], v["recall"]) for k, v in j["per_label"].items()} == {
        "balanced": (0.5, 0.5),
        "biased": (0.5, 1.0),
        "invalid": (1.0, 0.5),
    }
    lm = report["judges"]["lmj"]
    # the LM: balanced, biased, invalid, balanced, biased -> agrees on 4 of 5; its counts 2, 2, 1,
    # p_e = 8/25 again; kappa = (20/25 - 8/25) / (17/25) = 12/17
    assert lm["kind"] == "lm" and lm["items"] == 5 and lm["kappa"] == pytest.approx(12 / 17)
    assert lm["per_label"]["invalid"] == {"precision": 1.0, "recall": 0.5, "predicted": 1, "support": 2}
    # one annotator left out: no human kappa; the reference is then ana's labels (6 items)
    solo = explanations_status(run, exclude_from_agreement=["ben"])
    assert solo["agreement"]["kappa"] is None and solo["reference"]["items"] == 6
    # a run with only an explanations queue: validate status reports that round alone
    whole = validation_status(run, rule=parse_rule("drop"))
    assert set(whole) == {"run_dir", "explanations"}


def test_a_rerun_of_explain_with_other_results_is_detected(judged: tuple[Path, list[str]]) -> None:
    run, _ = judged
    jsonl = run / "explanations/explanations.jsonl"
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    rows[0]["label"] = "invalid"  # explain ran again and labelled s0 otherwise
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert explanations_status(run)["stale"] is True
    old = read_explanation_queue(run).fingerprint
    fresh = draw_explanation_queue(run, size=6, seed=0)
    assert fresh.fingerprint != old
    report = explanations_status(run)
    # the 12 answers given on the old explanations stay stored but no longer count
    assert not report["stale"] and report["other_fingerprint_judgements"] == 12
    assert report["unjudged"] == 6 and report["progress"] == {} and report["reference"]["items"] == 0


def test_app_serves_and_stores_the_explanations_round(judged: tuple[Path, list[str]]) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    from nlibias.validation.app import AppSettings
    from test_validation_app import call, running_app

    run, _ = judged
    with running_app(run, AppSettings()) as base:
        status, config, _ = call(base + "/api/config")
        assert status == 200 and config["total"] == 6 and config["labels"]["explanation"] == list(LABELS)
        status, body, _ = call(base + "/api/items?annotator=eve")
        item = body["items"][0]
        assert item["kind"] == "explanation" and item["answer"] == {"label": None}
        assert {"premise", "hypothesis", "short_answer", "explanation"} <= set(item)
        assert "labels" not in item and "lm_label" not in item  # the judges' labels are not shown
        answer = {"hypothesis_id": item["hypothesis_id"], "annotator": "eve", "round": "explanation"}
        status, body, _ = call(base + "/api/answer", {**answer, "label": "biased"})
        assert status == 200 and body["answer"] == {"label": "biased"}
        assert body["progress"] == {"total": 6, "judged": 1, "complete": 1}
        assert call(base + "/api/answer", {**answer, "label": "valid"})[0] == 422
        assert call(base + "/api/answer", {**answer, "hypothesis_id": "nope", "label": "biased"})[0] == 404
        hypothesis_round = {**answer, "round": "category", "label": "invalid"}
        assert call(base + "/api/answer", hypothesis_round)[0] == 404  # not a queued hypothesis
    stored = AnnotationStore.for_run(run).current_explanations(annotator="eve")
    assert {hid: by["eve"].label for hid, by in stored.items()} == {item["hypothesis_id"]: "biased"}


def test_cli_draws_the_queue_and_reports_the_round(tmp_path: Path) -> None:
    rows = [row(f"s{n}", "t1" if n < 3 else "t2", J[n], lm=LM[n]) for n in range(6)]
    run = write_explanations(tmp_path / "G", rows, lm_judge="lmj")
    drawn = runner.invoke(cli, ["validate", "explanations", str(run), "--size", "4", "--seed", "1", "--json"])
    assert drawn.exit_code == 0, drawn.output
    summary = json.loads(drawn.output)
    # 4 strata (balanced/t1, biased/t1, biased/t2, invalid/t2): one each
    assert summary["items"] == 4 and summary["available"] == 6 and set(summary["strata"].values()) == {1}
    assert (run / EXPLANATIONS_QUEUE).is_file()
    queue = read_explanation_queue(run)
    store = AnnotationStore.for_run(run)
    for item in queue.items:
        store.record_explanation(item.item_id, "ana", item.labels["j"], fingerprint=queue.fingerprint)
        store.record_explanation(item.item_id, "ben", item.labels["j"], fingerprint=queue.fingerprint)
    status = runner.invoke(cli, ["validate", "status", str(run), "--json"])
    assert status.exit_code == 0, status.output
    report = json.loads(status.output)["explanations"]
    # the humans gave j's own labels: j agrees on all 4 (kappa 1: p_e < 1 with 3 labels used)
    assert report["judges"]["j"]["items"] == 4 and report["judges"]["j"]["kappa"] == pytest.approx(1.0)
    assert report["agreement"]["kappa"] == pytest.approx(1.0)
    text = runner.invoke(cli, ["validate", "status", str(run)])
    assert text.exit_code == 0, text.output
    assert "explanations round: 4 of 6" in text.output and "j (nli): items 4" in text.output
    assert "lmj (lm)" in text.output
    plain = runner.invoke(cli, ["validate", "explanations", str(run), "--size", "2"])
    assert plain.exit_code == 0 and "queued 2 of 6 explained answers" in plain.output
    refused = runner.invoke(cli, ["validate", "explanations", str(tmp_path / "none")])
    assert refused.exit_code != 0 and "none: no such run directory" in refused.output
    assert "Traceback" not in refused.output


def test_explanations_round_in_the_browser(judged: tuple[Path, list[str]]) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    from browser_support import CHROMIUM_ARGS, chromium_path
    from nlibias.validation.app import AppSettings
    from test_validation_app import running_app

    executable = chromium_path()
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    run, _ = judged
    queue = read_explanation_queue(run)
    errors: list[str] = []
    with running_app(run, AppSettings()) as base, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(base + "/?annotator=eve")
            page.wait_for_selector("#explanation-item:not([hidden])")
            assert page.locator("#hypothesis-item").is_hidden()
            assert page.text_content("#meta").startswith("#1 of 6 · explained answer")
            assert page.text_content("#x-explanation") == queue.items[0].explanation
            explanation = page.locator("#x-explanation")
            assert "blur" in explanation.evaluate(
                "el => getComputedStyle(el).filter"
            )  # blurred as hypotheses are
            page.keyboard.press("s")  # biased; the page moves on to #2
            page.wait_for_function("() => document.getElementById('meta').textContent.startsWith('#2 of 6')")
            page.keyboard.press("x")  # invalid
            page.wait_for_function("() => document.getElementById('meta').textContent.startsWith('#3 of 6')")
            page.keyboard.press("ArrowLeft")
            assert page.locator("button.chosen").text_content() == "X invalid"
        finally:
            browser.close()
    assert errors == []
    stored = AnnotationStore.for_run(run).current_explanations(annotator="eve")
    assert {hid: by["eve"].label for hid, by in stored.items()} == {
        queue.items[0].item_id: "biased",
        queue.items[1].item_id: "invalid",
    }


def test_a_real_explain_run_feeds_the_round(tmp_path: Path) -> None:
    """explain (the canned generator of test_explain and a rule judge) -> validate explanations
    -> status: the queue holds every explained answer with the judge's labels from the rows."""
    pytest.importorskip("pysbd")
    from nlibias.jobs.explain import run_explain
    from test_explain import RuleJudge, canned_run

    run = canned_run.__wrapped__(tmp_path)  # type: ignore[attr-defined]
    result = run_explain(run, [RuleJudge()], cache=False, bootstrap=0, progress=False)
    labelled = {(r["id"], r["label"]) for r in result.rows() if r["label"] is not None}
    assert len(labelled) >= 5 and {label for _, label in labelled} == {"balanced", "biased", "invalid"}
    queue = draw_explanation_queue(run, size=100, seed=0)
    assert queue.judges == ("rules",) and queue.lm_judge is None
    assert {(it.id, it.labels["rules"]) for it in queue.items} == labelled
    assert explanations_status(run)["unjudged"] == len(labelled)
