"""The report layer decides what to show from the measures a run holds, never from its ``source``:
a benchmark registered under another name (or a WinoQueer-NLI variant) gets the same tables,
TP/NLI item agreement and glossary; a document's ``source`` never gives its tables a title that
its measures contradict."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest

from nlibias.io.predictions import write_predictions
from nlibias.io.samples import write_samples
from nlibias.metrics.meta import ALL_MEASURES
from nlibias.report.html import render_report
from nlibias.report.load import Run, load_runs
from nlibias.report.paper_tables import paper_tables
from nlibias.report.tp_correlation import item_agreements
from nlibias.schema import Prediction, Sample
from nlibias.schema.measure_info import MeasureInfo
from nlibias.testing.report_runs import (
    bbnli_like_samples,
    occupation_metrics,
    wq_nli_metrics,
    write_metrics_run,
)

# --- paper tables ------------------------------------------------------------------------------


def test_tables_follow_the_measures_not_the_source() -> None:
    wq = wq_nli_metrics()["models"]
    occupations = occupation_metrics()["models"]
    tables = paper_tables([("news", "wq-nli-news", wq), ("occ", "occupations-v2", occupations)])
    titles = {t.key: t.title for t in tables}
    assert list(titles) == ["wq_table3", "wq-nli-news_measures_news", "occupations-v2_measures_occ"]
    assert titles["wq-nli-news_measures_news"] == "wq-nli-news measures M1–M8 (%) [news]"
    assert titles["occupations-v2_measures_occ"] == "occupations-v2 measures S, ΔP, B (%) [occ]"


def test_a_source_name_never_titles_other_measures() -> None:
    """Occupation measures under the source ``wq-nli`` are titled by what they are (the old
    titles came from the source: "WinoQueer-NLI measures M1–M8" over S, ΔP, B)."""
    (table,) = paper_tables([("r", "wq-nli", occupation_metrics()["models"])])
    assert table.key == "wq-nli_measures"
    assert table.title == "wq-nli measures S, ΔP, B (%)"
    assert "M1" not in table.title


def test_a_sentence_scorer_alone_gets_no_winoqueer_nli_table() -> None:
    """Table 3 is M1's: a run of sentence scorers (whatever its source) gets its measures table,
    with the units of the measures it shows."""
    models = {"lm": {"overall": {"tp_bias_score": 55.0, "ties": 1.0, "likelihood_diff": 0.8}}}
    (table,) = paper_tables([("r", "wq-nli", models)])
    assert table.key == "wq-nli_measures"
    assert table.title == "wq-nli measures tp_bias_score, ties, likelihood_diff (%; likelihood_diff in nats)"


def test_sentence_scorers_audited_apart_join_table_3_of_their_source() -> None:
    """A sentence scorer audited in a run directory of its own, over the samples of a run that
    reports M1 (the same source), gets its TP column in Table 3; one over other samples does not."""
    nli = wq_nli_metrics(m1=62.5)["models"]
    lm = {"lm|tp=shared": {"overall": {"tp_bias_score": 55.0}}}
    crows = {"lm2|tp=shared": {"overall": {"tp_bias_score": 70.0}}}
    tables = paper_tables([("nli", "wq-nli", nli), ("tp", "wq-nli", lm), ("cp", "crows-pairs", crows)])
    (table3,) = [t for t in tables if t.key == "wq_table3"]
    assert table3.headers == ("Model", "TP nli", "NLI nli", "TP tp", "NLI tp")
    rows = {row[0]: row[1:] for row in table3.rows}
    assert rows["lm|tp=shared"] == [None, None, 55.0, None]
    assert "lm2|tp=shared" not in rows


# --- item-level TP vs M1 agreement ---------------------------------------------------------------

# Four WinoQueer-NLI rows: (TP prefers the stereotypical sentence, M1 holds) per row.
ROWS = {"r1": (True, True), "r2": (True, False), "r3": (False, True), "r4": (False, False)}


def _wq_samples() -> list[Sample]:
    return [
        Sample(
            id=f"{row}:{role}",
            source="wq-nli",
            domain="LGBTQ",
            subtopic="t",
            premise=f"{'Gay' if role == 'pro' else 'Straight'} people in {row} are here.",
            hypothesis=f"They are bad at {row}.",
            gold="neutral",
            stereotype=role,
            pair_key=row,
        )
        for row in ROWS
        for role in ("pro", "anti")
    ]


def _classifier_rows(model: str) -> list[Prediction]:
    rows = []
    for row, (_, m1) in ROWS.items():
        high, low = (0.6, 0.3, 0.1), (0.2, 0.7, 0.1)
        for role, probs in (("pro", high if m1 else low), ("anti", low if m1 else high)):
            label = "entailment" if probs[0] > probs[1] else "neutral"
            rows.append(Prediction(f"{row}:{role}", model, label, probs, {"kind": "classifier"}))  # type: ignore[arg-type]
    return rows


def _scorer_rows(model: str) -> list[Prediction]:
    return [
        Prediction(
            f"{row}:pro",
            model,
            None,
            None,
            {"kind": "sentence-logprob", "score_more": -1.0 if tp else -3.0, "score_less": -2.0},
        )
        for row, (tp, _) in ROWS.items()
    ]


def _run(
    root: Path, name: str, source: str, overall: dict[str, Any], samples: Path, rows: list[Prediction]
) -> Path:
    model = rows[0].model
    out = write_metrics_run(
        root,
        name,
        {"source": source, "models": {model: {"overall": overall}}, "run": {"samples": str(samples)}},
    )
    write_predictions(out / "predictions.jsonl", rows)
    return out


def _load(paths: list[Path]) -> list[Run]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hand-written run directories have no manifest
        return load_runs(paths)


@pytest.fixture
def wq_root(tmp_path: Path) -> Path:
    write_samples(tmp_path / "wq", _wq_samples())
    return tmp_path


def test_classifier_and_scorer_in_two_runs_pair_by_content(wq_root: Path) -> None:
    """A classifier's run (M1) and a language model's run over the same samples, under a source
    that is not ``wq-nli`` (the old rule gave no rows), agree row by row as counted by hand."""
    samples = wq_root / "wq"
    nli = _run(wq_root, "nli", "wq-nli-news", {"n": 8, "M1": 50.0}, samples, _classifier_rows("roberta"))
    lm = _run(wq_root, "lm", "wq-nli-news", {"n": 4, "tp_bias_score": 50.0}, samples, _scorer_rows("gpt2"))
    (agreement,) = item_agreements(_load([nli, lm]))
    assert (agreement["tp_model"], agreement["nli_model"]) == ("lm · gpt2", "nli · roberta")
    counts = {k: agreement[k] for k in ("n", "both", "tp_only", "m1_only", "neither")}
    assert counts == {"n": 4, "both": 1, "tp_only": 1, "m1_only": 1, "neither": 1}
    assert agreement["agreement"] == 50.0


def test_runs_over_other_samples_add_nothing(wq_root: Path) -> None:
    """A sentence scorer over other samples (its ``tp_bias_score`` is not about these rows) and a
    BBNLI classifier run add no pair; without a run holding M1 there are no rows and no error."""
    samples = wq_root / "wq"
    nli = _run(wq_root, "nli", "wq-nli", {"n": 8, "M1": 50.0}, samples, _classifier_rows("roberta"))
    other = [
        Sample(s.id, "pairs", s.domain, s.subtopic, s.premise + " Again.", s.hypothesis, s.gold,
               s.stereotype, s.pair_key)
        for s in _wq_samples()
    ]  # fmt: skip
    write_samples(wq_root / "other", other)
    pairs = _run(wq_root, "pairs", "wq-nli", {"n": 4, "tp_bias_score": 50.0}, wq_root / "other",
                 _scorer_rows("gpt2"))  # fmt: skip
    write_samples(wq_root / "bbnli", bbnli_like_samples())
    ids = [s.id for s in bbnli_like_samples()]
    bbnli_rows = [Prediction(i, "roberta", "neutral", (0.1, 0.8, 0.1), {"kind": "classifier"}) for i in ids]
    bbnli = _run(wq_root, "bbnli", "wq-nli", {"n": len(ids), "accuracy": 100.0, "misprediction_rate": 0.0},
                 wq_root / "bbnli", bbnli_rows)  # fmt: skip
    runs = _load([nli, pairs, bbnli])
    assert item_agreements(runs) == []  # no sentence scorer over the M1 rows
    assert item_agreements(runs[1:]) == []  # no M1 at all
    lm = _run(wq_root, "lm", "x", {"n": 4, "tp_bias_score": 50.0}, samples, _scorer_rows("gpt2"))
    found = item_agreements(_load([nli, pairs, bbnli, lm]))
    assert [(a["tp_model"], a["nli_model"]) for a in found] == [("lm · gpt2", "nli · roberta")]
    # A classifier over the other samples pairs with their scorer only: the two sets of rows are
    # never mixed (the old rule read every wq-nli run's samples as one set, and refused the mix).
    variant = _run(wq_root, "variant", "wq-nli", {"n": 8, "M1": 50.0}, wq_root / "other",
                   _classifier_rows("roberta"))  # fmt: skip
    found = item_agreements(_load([nli, pairs, bbnli, lm, variant]))
    assert [(a["tp_model"], a["nli_model"], a["n"]) for a in found] == [
        ("pairs · gpt2", "variant · roberta", 4),
        ("lm · gpt2", "nli · roberta", 4),
    ]


# --- glossary ------------------------------------------------------------------------------------


def test_glossary_lists_every_declared_measure_present_with_its_unit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """WinoQueer-NLI, occupation and token-probability measures (and one a registered benchmark
    declares) are explained; the old glossary listed only BBNLI's, so these runs had none."""
    monkeypatch.setitem(
        ALL_MEASURES,
        "toy_gap",
        MeasureInfo("toy_gap", "A toy benchmark's gap.", "zero", (-1.0, 1.0), "toy", unit="fraction"),
    )
    wq = write_metrics_run(tmp_path, "wq", wq_nli_metrics())
    occ = write_metrics_run(tmp_path, "occ", occupation_metrics())
    tp = {
        "lm": {
            "overall": {"tp_bias_score": 55.0, "likelihood_diff": 0.8, "toy_gap": -0.25, "undeclared": 3.0}
        }
    }
    pairs = write_metrics_run(tmp_path, "pairs", {"source": "toy", "models": tp})
    report = render_report(_load([wq, occ, pairs]), plots=False)
    assert report.sections[-2:] == ["glossary", "provenance"]  # provenance last since #39
    glossary = report.html[
        report.html.index('<section id="glossary">') : report.html.index('<section id="provenance">')
    ]
    assert "<th>range</th>" in glossary and "range (%)" not in glossary
    # Each measure's name is the anchor its links in the report point to.
    assert '<dfn id="measure-M1">M1</dfn>' in glossary
    rows = {
        re.sub(r"<[^>]+>", "", cells[0]): cells[1:]
        for cells in (
            re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(<td>.*?)</tr>", glossary)
        )
    }
    m_keys = [f"M{i}" for i in range(1, 9)]
    assert list(rows) == [*m_keys, "S", "delta_p", "B", "tp_bias_score", "likelihood_diff", "toy_gap"]
    better_and_range = {name: tuple(cells[1:3]) for name, cells in rows.items()}
    assert better_and_range["M1"] == ("closer to 50", "0 to 100 %")
    assert better_and_range["M8"] == ("lower", "0 to 100 %")
    assert better_and_range["delta_p"] == ("lower", "0 to 100 %")
    assert better_and_range["likelihood_diff"] == ("neither", "0 or more nats")
    assert better_and_range["toy_gap"] == ("closer to 0", "-1 to 1 fraction")
    assert rows["toy_gap"][0] == "A toy benchmark&#x27;s gap." and rows["toy_gap"][3] == "toy"
