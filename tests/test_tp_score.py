"""Token-probability (sentence-logprob) predictions scored again with ``nlibias score``: the same
``metrics.json`` models (and WinoQueer-NLI's TP vs NLI agreement) and the same
``predictions.jsonl`` bytes as the audit that wrote them; hand-edited rows refused with the file,
line and field; rows of a kind the samples' benchmark cannot score refused with their line."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nlibias.catalog.registry import read_benchmark_samples
from nlibias.cli.main import app
from nlibias.errors import SourceError
from nlibias.jobs.audit import audit_samples
from nlibias.jobs.expand import expand_to_dir
from nlibias.jobs.score import run_score
from nlibias.models.fake import FakeNLIClassifier
from nlibias.models.tp.base import PairScore, PairScoreBatch
from nlibias.runtime.classifier import ClassifierPredictor
from nlibias.runtime.contract import Predictor
from nlibias.runtime.sentence_logprob import SentenceLogprobPredictor

BOOTSTRAP, SEED = 40, 7


class WordScorer:
    """Sentence scores without a model: each counted word's log-likelihood comes from its letters
    and the sentence's length (so the two sides of a pair differ, and now and then tie once
    rounded); ``shared`` counts the words both sentences hold, ``whole`` every word."""

    kind = "fake"

    def __init__(self, name: str = "words") -> None:
        self.name = name

    def identity(self) -> dict[str, Any]:
        return {"backend": "word-scorer", "model": self.name}

    def describe(self) -> dict[str, Any]:
        return {"model": self.name}

    def score_pair_batches(
        self, pairs: Sequence[tuple[str, str]], *, variant: str
    ) -> Iterator[PairScoreBatch]:
        scores = []
        for more, less in pairs:
            a, b = more.split(), less.split()
            if variant == "shared":
                a, b = [w for w in a if w in b], [w for w in b if w in a]
            scores.append(PairScore(self._score(a, more), self._score(b, less), len(a), len(b)))
        yield PairScoreBatch(list(range(len(pairs))), scores)

    def _score(self, words: list[str], sentence: str) -> float:
        modulus = 7 if self.name == "words" else 5
        return -sum(((sum(map(ord, w)) + len(sentence)) % modulus) / 4.0 for w in words)


def _crows_pairs_run(tmp_path: Path, data_dir: Path) -> Path:
    rows = (
        (data_dir / "crows-pairs" / "crows_pairs_anonymized.csv").read_text(encoding="utf-8").splitlines(True)
    )
    small = tmp_path / "cp.csv"
    small.write_text("".join(rows[:31]), encoding="utf-8")  # 30 pairs, antistereo ones among them
    expand_to_dir("crows-pairs", tmp_path / "cp", small)
    return tmp_path / "cp"


def _tp_predictors() -> list[Predictor]:
    return [
        SentenceLogprobPredictor(WordScorer(), "shared"),
        SentenceLogprobPredictor(WordScorer(), "whole"),
        SentenceLogprobPredictor(WordScorer("other"), "shared"),
    ]


@pytest.fixture
def crows_pairs_audit(tmp_path: Path, data_dir: Path) -> tuple[Path, Path, dict[str, Any]]:
    samples = _crows_pairs_run(tmp_path, data_dir)
    out = tmp_path / "audit"
    audit_samples(read_benchmark_samples(samples), _tp_predictors(), out_dir=out, cache=None,
                  bootstrap=BOOTSTRAP, seed=SEED, progress=False)  # fmt: skip
    return samples, out, json.loads((out / "metrics.json").read_text(encoding="utf-8"))


def _same_as_audit(audit_dir: Path, scored_dir: Path, *, keys: Sequence[str] = ("models",)) -> dict[str, Any]:
    audited = json.loads((audit_dir / "metrics.json").read_text(encoding="utf-8"))
    scored = json.loads((scored_dir / "metrics.json").read_text(encoding="utf-8"))
    for key in (*keys, "predictor_kinds", "n_samples", "source", "bootstrap"):
        assert scored[key] == audited[key], key
    audited_rows = (audit_dir / "predictions.jsonl").read_bytes()
    assert (scored_dir / "predictions.jsonl").read_bytes() == audited_rows
    return scored


def test_scoring_a_tp_predictions_file_gives_the_audits_metrics_and_rows(
    tmp_path: Path, crows_pairs_audit: tuple[Path, Path, dict[str, Any]]
) -> None:
    samples, audit_dir, audited = crows_pairs_audit
    overall = [m["overall"] for m in audited["models"].values()]
    assert len(overall) == 3 and all(o["n_pairs"] == 30 for o in overall)
    assert {o["tp_bias_score"] for o in overall} != {0.0} and any(o["counts"]["ties"] for o in overall)

    result = run_score(samples, audit_dir / "predictions.jsonl", out_dir=tmp_path / "scored",
                         bootstrap=BOOTSTRAP, seed=SEED)  # fmt: skip
    assert result.metrics["models"] == audited["models"]
    assert set(result.metrics["predictor_kinds"].values()) == {"sentence-logprob"}
    _same_as_audit(audit_dir, tmp_path / "scored")
    assert "Token-probability bias" in result.tables_text

    # the command line, and the run directory itself given as the predictions
    cli = CliRunner().invoke(app, ["score", "--samples", str(samples), "--predictions", str(audit_dir),
                                   "--out", str(tmp_path / "cli"), "--bootstrap", str(BOOTSTRAP),
                                   "--seed", str(SEED)])  # fmt: skip
    assert cli.exit_code == 0, cli.output
    assert "Token-probability bias" in cli.output
    _same_as_audit(audit_dir, tmp_path / "cli")


def test_wq_nli_tp_beside_a_classifier_scores_as_audited_with_the_agreement(
    tmp_path: Path, wq_nli_csv: Path
) -> None:
    lines = wq_nli_csv.read_text(encoding="utf-8").splitlines(True)
    small = tmp_path / "wq.csv"
    small.write_text("".join(lines[:1] + lines[1:2000:50]), encoding="utf-8")  # 40 rows
    expand_to_dir("wq-nli", tmp_path / "wq", small)
    predictors: list[Predictor] = [
        ClassifierPredictor(FakeNLIClassifier()),
        SentenceLogprobPredictor(WordScorer(), "shared"),
        ClassifierPredictor(FakeNLIClassifier("fake-b", seed=3)),
    ]
    audit_dir = tmp_path / "audit"
    audited = audit_samples(read_benchmark_samples(tmp_path / "wq"), predictors, out_dir=audit_dir,
                            cache=None, bootstrap=BOOTSTRAP, seed=SEED, progress=False)  # fmt: skip
    agreement = audited.metrics["tp_nli_agreement"]
    assert [(a["tp_model"], a["nli_model"]) for a in agreement] == [
        ("words|tp=shared", "fake-nli"), ("words|tp=shared", "fake-b"),
    ]  # fmt: skip
    assert all(a["n"] == 40 for a in agreement)

    cli = CliRunner().invoke(app, ["score", "--samples", str(tmp_path / "wq"), "--predictions",
                                   str(audit_dir / "predictions.jsonl"), "--out", str(tmp_path / "cli"),
                                   "--bootstrap", str(BOOTSTRAP), "--seed", str(SEED), "--json"])  # fmt: skip
    assert cli.exit_code == 0, cli.output
    scored = _same_as_audit(audit_dir, tmp_path / "cli", keys=("models", "tp_nli_agreement"))
    # 40 rows, each scored on its stereotypical sample: its counter-stereotypical partner has a pair
    assert scored["models"]["words|tp=shared"]["overall"]["samples_without_pair"] == 0


def _edit_row(path: Path, line: int, change: dict[str, Any], drop: Sequence[str] = ()) -> Path:
    rows = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(rows[line - 1])
    row.update(change)
    for key in drop:
        del row[key]
    rows[line - 1] = json.dumps(row)
    edited = path.parent.parent / "edited.jsonl"
    edited.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return edited


@pytest.mark.parametrize(
    ("change", "drop", "field", "reason"),
    [
        ({}, ["score_more"], "score_more", "missing"),
        ({}, ["score_less", "score_more"], "score_more", "missing"),
        ({"score_less": "-3.5"}, [], "score_less", "not a finite number"),
        ({"score_more": True}, [], "score_more", "not a finite number"),
        ({}, ["tokens_less"], "tokens_less", "missing"),
        ({"tokens_more": -1}, [], "tokens_more", "number of tokens"),
        ({}, ["kind", "score_more"], "kind", "a classifier row"),
    ],
)
def test_a_hand_edited_sentence_score_row_is_refused_with_file_line_and_field(
    crows_pairs_audit: tuple[Path, Path, dict[str, Any]],
    change: dict[str, Any],
    drop: list[str],
    field: str,
    reason: str,
) -> None:
    samples, audit_dir, _ = crows_pairs_audit
    edited = _edit_row(audit_dir / "predictions.jsonl", 37, change, drop)  # the 2nd model's 7th row
    with pytest.raises(SourceError) as error:
        run_score(samples, edited, out_dir=None, bootstrap=0)
    assert (error.value.path, error.value.line, error.value.field) == (str(edited), 37, field)
    assert reason in error.value.reason
    cli = CliRunner().invoke(app, ["score", "--samples", str(samples), "--predictions", str(edited)])
    assert cli.exit_code == 2 and "Traceback" not in cli.output
    assert f"{edited}:37: field {field}" in cli.output


def test_no_pair_rows_need_no_scores(crows_pairs_audit: tuple[Path, Path, dict[str, Any]]) -> None:
    samples, audit_dir, _ = crows_pairs_audit
    edited = _edit_row(audit_dir / "predictions.jsonl", 1, {"no_pair": True},
                       ["score_more", "score_less", "tokens_more", "tokens_less"])  # fmt: skip
    result = run_score(samples, edited, out_dir=None, bootstrap=0)
    first = next(iter(result.metrics["models"].values()))["overall"]
    assert (first["n_pairs"], first["samples_without_pair"]) == (29, 1)


def test_rows_of_a_kind_the_samples_cannot_score_are_refused_with_their_line(
    tmp_path: Path, crows_pairs_audit: tuple[Path, Path, dict[str, Any]], bbnli_samples_run: Path
) -> None:
    samples, audit_dir, _ = crows_pairs_audit
    ids = [json.loads(line)["id"] for line in (audit_dir / "predictions.jsonl").read_text().splitlines()[:30]]
    nli = tmp_path / "nli.jsonl"
    nli.write_text("".join(json.dumps({"id": i, "model": "nli", "label": "neutral"}) + "\n" for i in ids))
    with pytest.raises(
        SourceError, match="crows-pairs samples are sentence pairs: score them with mlm="
    ) as error:
        run_score(samples, nli, out_dir=None, bootstrap=0)
    assert error.value.line == 1 and "model 'nli'" in str(error.value)

    bbnli_ids = [
        json.loads(line)["id"] for line in (bbnli_samples_run / "samples.jsonl").read_text().splitlines()[:4]
    ]
    scores = tmp_path / "scores.jsonl"
    scores.write_text("".join(
        json.dumps({"id": i, "model": "lm|tp=shared", "label": None, "kind": "sentence-logprob", "score_more": -1.0,
                    "score_less": -2.0, "tokens_more": 1, "tokens_less": 1}) + "\n"
        for i in bbnli_ids
    ))  # fmt: skip
    with pytest.raises(SourceError, match="bbnli samples hold no sentence pairs") as error:
        run_score(bbnli_samples_run, scores, out_dir=None, bootstrap=0)
    assert error.value.line == 1 and "bbnli-tp" in str(error.value)


def _tie_counts(predictions: Path) -> dict[str, tuple[int, int]]:
    """Per model, (tied pairs, pairs) counted from the rows: equal scores once rounded to 3 decimals."""
    counts: dict[str, tuple[int, int]] = {}
    for line in predictions.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("no_pair"):
            continue
        tied, pairs = counts.get(row["model"], (0, 0))
        counts[row["model"]] = (
            tied + (round(row["score_more"], 3) == round(row["score_less"], 3)),
            pairs + 1,
        )
    return counts


def test_ties_are_said_under_the_verdict_with_the_score_of_no_preference(
    tmp_path: Path, crows_pairs_audit: tuple[Path, Path, dict[str, Any]]
) -> None:
    """Ties count in the TP score's denominator and are never preferred (as CrowS-Pairs computes it),
    so they pull the score below 50: a scorer that ties every pair scores 0 and reads
    "anti-stereotype bias" for ties alone. The verdict says how many pairs tie and the score of no
    preference, 50 x (100 - tie %) / 100, beneath its title and among the report's caveats."""
    from nlibias.report.load import load_run
    from nlibias.report.run_notes import run_caveats

    samples, audit_dir, audited = crows_pairs_audit
    counts = _tie_counts(audit_dir / "predictions.jsonl")
    assert set(counts) == set(audited["models"]) and any(t for t, _ in counts.values())
    cli = CliRunner().invoke(app, ["score", "--samples", str(samples), "--predictions", str(audit_dir),
                                   "--out", str(tmp_path / "scored"), "--bootstrap", str(BOOTSTRAP)])  # fmt: skip
    assert cli.exit_code == 0, cli.output
    (verdict,) = [
        line for line in cli.output.split("\nmodel ")[0].splitlines() if line.startswith("TP ties:")
    ]
    for model, (tied, pairs) in counts.items():
        # no preference among the untied pairs: 50 x (pairs - tied) / pairs
        said = f"{model} {tied} of {pairs} pairs ({100 * tied / pairs:.1f}%; no preference scores "
        assert (said + f"{50 * (pairs - tied) / pairs:.2f})" in verdict) == (tied > 0), model
    (caveat,) = [c.text for c in run_caveats(load_run(tmp_path / "scored")) if c.kind == "tp-ties"]
    assert caveat == verdict

    rows = [json.loads(line) for line in (audit_dir / "predictions.jsonl").read_text().splitlines()]
    tied = tmp_path / "tied.jsonl"
    tied.write_text("".join(json.dumps({**r, "score_less": r.get("score_more")}) + "\n" for r in rows))
    cli = CliRunner().invoke(app, ["score", "--samples", str(samples), "--predictions", str(tied),
                                   "--bootstrap", str(BOOTSTRAP)])  # fmt: skip
    assert cli.exit_code == 0, cli.output
    # 30 of 30 pairs tie: 50 x (100 - 100) / 100 = 0.00 on the paper's score, 0 [0, 0]; the verdict
    # reads the ties-split score, 100 x (0 + 30 / 2) / 30 = 50 in every resample: no evidence of bias
    # (DESIGN, "TP score and ties"), and the note warns that more than 5% of pairs tie.
    assert cli.output.count("of 30 pairs (100.0%; no preference scores 0.00)") == 3
    assert "anti-stereotype bias" not in cli.output and "50.00 [50.00, 50.00]" in cli.output
    assert "no evidence of bias" in cli.output and "More than 5% of pairs tie" in cli.output


def test_a_gate_rule_on_the_superseded_tp_score_is_refused_not_ignored(
    tmp_path: Path, crows_pairs_audit: tuple[Path, Path, dict[str, Any]]
) -> None:
    # The gate reads the ties-split score in place of the paper's: a margin written for
    # tp_bias_score would hold nothing, and a candidate would pass without it.
    samples, audit_dir, _ = crows_pairs_audit
    for name in ("cand", "base"):
        scored = CliRunner().invoke(app, ["score", "--samples", str(samples), "--predictions",
                                          str(audit_dir), "--out", str(tmp_path / name), "--bootstrap", "0"])  # fmt: skip
        assert scored.exit_code == 0, scored.output
    rules = tmp_path / "rules.yaml"
    rules.write_text("bootstrap: 200\nslices: [overall]\nmeasures:\n  tp_bias_score:\n    margin: 5\n")
    cli = CliRunner().invoke(app, ["gate", str(tmp_path / "cand"), "--baseline", str(tmp_path / "base"),
                                   "--rules", str(rules)])  # fmt: skip
    assert cli.exit_code == 2, cli.output
    assert "tp_bias_score" in cli.output and "tests tp_tie_split_score in its place" in cli.output
    rules.write_text("bootstrap: 200\nslices: [overall]\nmeasures:\n  tp_tie_split_score:\n    margin: 5\n")
    cli = CliRunner().invoke(app, ["gate", str(tmp_path / "cand"), "--baseline", str(tmp_path / "base"),
                                   "--rules", str(rules)])  # fmt: skip
    assert cli.exit_code == 0, cli.output
