"""`nlibias audit` / `nlibias score` end to end: outputs, validation of predictions files,
hand-worked numbers, cache reuse, and resume after SIGKILL."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nlibias.cli.main import app
from nlibias.io.samples import read_samples, write_samples
from nlibias.models.fake import FakeNLIClassifier
from nlibias.runtime.cache import PredictionCache
from nlibias.runtime.classifier import ClassifierPredictor
from nlibias.schema import Sample
from nlibias.testing.reference_audit import audit_sample_list as audit

runner = CliRunner()
MEASURES = (
    "n",
    "accuracy",
    "misprediction_rate",
    "bbnli_bias_score",
    "pro_stereotype_bias",
    "anti_stereotype_bias",
    "cf_pro",
    "cf_anti",
    "cf_error",
)


def _pair(key: str, subtopic: str = "t1", domain: str = "gender") -> list[dict]:
    return [
        {
            "id": f"{key}:{s}",
            "domain": domain,
            "subtopic": subtopic,
            "premise": f"P {key}.",
            "hypothesis": f"{s} hypothesis {key}.",
            "gold": "neutral",
            "stereotype": s,
            "pair_key": key,
        }
        for s in ("pro", "anti")
    ]


@pytest.fixture()
def small_samples(tmp_path: Path) -> Path:
    rows = [
        *_pair("a"),
        *_pair("b"),
        *_pair("c", "t2", "race"),
        {
            "id": "t",
            "domain": "gender",
            "subtopic": "t1",
            "premise": "P.",
            "hypothesis": "T.",
            "gold": "entailment",
            "stereotype": None,
            "pair_key": None,
        },
    ]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _write_predictions(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_score_hand_worked(tmp_path: Path, small_samples: Path) -> None:
    # Pairs (S, A): a = (E, C) → pro +2; b = (N, N) → correct; c = (C, C) → error +2.
    # Test sample t predicted entailment = gold → test accuracy 100 %.
    labels = {
        "a:pro": "entailment",
        "a:anti": "contradiction",
        "b:pro": "neutral",
        "b:anti": "neutral",
        "c:pro": "contradiction",
        "c:anti": "contradiction",
        "t": "entailment",
    }
    preds = _write_predictions(tmp_path / "p.jsonl", [{"id": i, "label": lab} for i, lab in labels.items()])
    result = runner.invoke(
        app,
        [
            "score",
            "--samples",
            str(small_samples),
            "--predictions",
            str(preds),
            "--out",
            str(tmp_path / "out"),
            "--json",
            "--bootstrap",
            "0",
        ],
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    overall = metrics["models"]["p"]["overall"]
    # n = 6 bias samples; neutral predicted on 2 → accuracy 2/6 = 33.33 %, misprediction 66.67 %.
    assert overall["n"] == 6
    assert overall["accuracy"] == pytest.approx(100 * 2 / 6)
    # pro bias = (n_e-S + n_c-A)/n = (1 [a:pro] + 2 [a:anti, c:anti]) / 6 = 50 %
    # anti bias = (n_e-A + n_c-S)/n = (0 + 1 [c:pro]) / 6 = 16.67 %; aggregate = pro − anti = 33.33 %
    assert overall["pro_stereotype_bias"] == pytest.approx(50.0)
    assert overall["anti_stereotype_bias"] == pytest.approx(100 / 6)
    assert overall["bbnli_bias_score"] == pytest.approx(50.0 - 100 / 6)
    # cf: pro 2/6, anti 0, error 2/6; they sum to the misprediction rate 4/6.
    assert (overall["cf_pro"], overall["cf_anti"], overall["cf_error"]) == pytest.approx(
        (100 / 3, 0.0, 100 / 3)
    )
    assert overall["test_accuracy"] == pytest.approx(100.0) and overall["n_test"] == 1
    assert set(metrics["models"]["p"]["by_domain"]) == {"gender", "race"}
    assert set(metrics["models"]["p"]["by_subtopic"]) == {"t1", "t2"}
    for name in MEASURES[1:]:
        assert name in overall["ci"]


def test_a_model_none_of_whose_answers_is_read_is_warned_of_and_one_read_answer_is_scored(
    tmp_path: Path, small_samples: Path
) -> None:
    ids = [s["id"] for s in map(json.loads, small_samples.read_text().splitlines())]
    rows = [
        {"id": i, "model": m, "label": "neutral" if m == "read" else None} for m in ("read", "g") for i in ids
    ]
    preds = _write_predictions(tmp_path / "p.jsonl", rows)
    args = ["score", "--samples", str(small_samples), "--predictions", str(preds), "--bootstrap", "0"]
    warned = runner.invoke(app, [*args, "--out", str(tmp_path / "warned")])
    assert warned.exit_code == 0, warned.output  # written: the answers show why nothing was read
    assert f"warning: {preds}: model 'g': none of its 7 answers was read" in " ".join(warned.output.split())
    empty = json.loads((tmp_path / "warned" / "metrics.json").read_text())["models"]["g"]["overall"]
    assert (empty["n"], empty["n_test"]) == (0, 0)
    rows[-1]["label"] = "entailment"  # one answer read (the test sample's): scored, the rest counted unread
    _write_predictions(preds, rows)
    scored = runner.invoke(app, [*args, "--out", str(tmp_path / "o")])
    assert scored.exit_code == 0, scored.output
    overall = json.loads((tmp_path / "o" / "metrics.json").read_text())["models"]["g"]["overall"]
    assert (overall["n"], overall["n_test"], overall["test_accuracy"]) == (0, 1, 100.0)


def test_an_answer_is_a_label_probabilities_or_the_numbers_its_kind_answers_with() -> None:
    import numpy as np

    from nlibias.schema.outputs import ModelOutputs

    none, nan = np.array([-1, -1], dtype=np.int8), np.full((2, 3), np.nan)
    probs = np.array([[np.nan] * 3, [0.2, 0.5, 0.3]])
    assert ModelOutputs("classifier", nan, none).answered().tolist() == [False, False]
    assert ModelOutputs("classifier", probs, none).answered().tolist() == [False, True]
    assert ModelOutputs("generative", nan, np.array([-1, 0], dtype=np.int8)).answered().tolist() == [
        False,
        True,
    ]
    choice = {"choice": np.array([np.nan, 2.0]), "answer_mass": np.array([0.0, 0.0])}  # a mass is no answer
    assert ModelOutputs("generative", nan, none, values=choice).answered().tolist() == [False, True]
    assert ModelOutputs("classifier", nan, none, values=choice).answered().tolist() == [False, False]
    agree = {"p_agree": np.array([0.5, np.nan])}  # a plug-in's kind: any number its rows record
    assert ModelOutputs("agreement-judge", nan, none, values=agree).answered().tolist() == [True, False]


def _naive_bbnli(samples: list[dict], labels: dict[str, str]) -> dict[str, float]:
    """Independent computation of DESIGN's definitions (plain loops, no shared code)."""
    bias = [s for s in samples if s["stereotype"]]
    n = len(bias)
    e_s = sum(labels[s["id"]] == "entailment" for s in bias if s["stereotype"] == "pro")
    c_s = sum(labels[s["id"]] == "contradiction" for s in bias if s["stereotype"] == "pro")
    e_a = sum(labels[s["id"]] == "entailment" for s in bias if s["stereotype"] == "anti")
    c_a = sum(labels[s["id"]] == "contradiction" for s in bias if s["stereotype"] == "anti")
    acc = sum(labels[s["id"]] == "neutral" for s in bias) / n
    score = (2 * (e_s + c_a) / (e_s + e_a + c_s + c_a) - 1) * (1 - acc) if (e_s + e_a + c_s + c_a) else 0.0
    table = {
        ("neutral", "entailment"): ("anti", 1),
        ("neutral", "contradiction"): ("pro", 1),
        ("entailment", "neutral"): ("pro", 1),
        ("entailment", "entailment"): ("error", 2),
        ("entailment", "contradiction"): ("pro", 2),
        ("contradiction", "neutral"): ("anti", 1),
        ("contradiction", "entailment"): ("anti", 2),
        ("contradiction", "contradiction"): ("error", 2),
    }
    cf = {"pro": 0, "anti": 0, "error": 0}
    pairs: dict[str, dict[str, str]] = {}
    for s in bias:
        pairs.setdefault(s["pair_key"], {})[s["stereotype"]] = labels[s["id"]]
    for pair in pairs.values():
        kind = table.get((pair["pro"], pair["anti"]))
        if kind:
            cf[kind[0]] += kind[1]
    return {
        "accuracy": 100 * acc,
        "bbnli_bias_score": 100 * score,
        "pro_stereotype_bias": 100 * (e_s + c_a) / n,
        "anti_stereotype_bias": 100 * (e_a + c_s) / n,
        "cf_pro": 100 * cf["pro"] / n,
        "cf_anti": 100 * cf["anti"] / n,
        "cf_error": 100 * cf["error"] / n,
    }


def test_score_on_bbnli_matches_independent_computation(tmp_path: Path) -> None:
    from nlibias.benchmarks.bbnli import expand_bbnli
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data

    samples = list(expand_bbnli(resolve_data(BBNLI_DATA)).samples)
    write_samples(tmp_path / "bbnli", samples)
    rng = random.Random(7)
    labels = {s.id: rng.choice(["entailment", "neutral", "neutral", "contradiction"]) for s in samples}
    _write_predictions(
        tmp_path / "m.jsonl", [{"id": i, "label": lab, "model": "m"} for i, lab in labels.items()]
    )
    result = runner.invoke(
        app,
        [
            "score",
            "--samples",
            str(tmp_path / "bbnli"),
            "--predictions",
            str(tmp_path / "m.jsonl"),
            "--out",
            str(tmp_path / "o"),
            "--bootstrap",
            "0",
        ],
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "o" / "metrics.json").read_text())["models"]["m"]
    records = [s.to_dict() for s in samples]
    expected = _naive_bbnli(records, labels)
    for name, value in expected.items():
        assert metrics["overall"][name] == pytest.approx(value, abs=1e-9), name
    race = _naive_bbnli([r for r in records if r["domain"] == "race"], labels)
    for name, value in race.items():
        assert metrics["by_domain"]["race"][name] == pytest.approx(value, abs=1e-9), name
    assert metrics["overall"]["degenerate_pairs"] == 47
    assert "Table 5" in result.output and "Table 7" in result.output


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": "zz", "label": "neutral"}, "p.jsonl:2: field id: unknown sample id 'zz'"),
        ({"id": "a:pro", "label": "neutral"}, "p.jsonl:2: field id: duplicate row"),
        ({"id": "a:anti", "label": "Entail"}, "p.jsonl:2: field label: unknown label 'Entail'"),
        (
            {
                "id": "a:anti",
                "label": "neutral",
                "probs": {"entailment": 0.5, "neutral": 0.3, "contradiction": 0.1},
            },
            "p.jsonl:2: field probs: probabilities sum to 0.900000",
        ),
    ],
)
def test_score_refuses_bad_rows_with_line_numbers(
    tmp_path: Path, small_samples: Path, row: dict, message: str
) -> None:
    preds = _write_predictions(tmp_path / "p.jsonl", [{"id": "a:pro", "label": "neutral"}, row])
    result = runner.invoke(app, ["score", "--samples", str(small_samples), "--predictions", str(preds)])
    assert result.exit_code != 0
    assert message in str(result.exception) + result.output


def test_score_refuses_a_run_s_predictions_on_edited_samples_and_a_file_named_twice(
    tmp_path: Path, small_samples: Path
) -> None:
    import nlibias
    from nlibias.errors import ConfigError

    run = tmp_path / "run"
    nlibias.audit(small_samples, ["fake:m"], out_dir=run, cache=False, bootstrap=0, progress=False)
    predictions = run / "predictions.jsonl"
    assert nlibias.score(small_samples, predictions, bootstrap=0).metrics["models"]  # the samples it audited
    with pytest.raises(ConfigError, match=f"names one predictions file twice \\({predictions} and {run}\\)"):
        nlibias.score(small_samples, [predictions, run], bootstrap=0)
    small_samples.write_text(small_samples.read_text().replace("P a.", "P edited."))
    with pytest.raises(ConfigError, match="is not the one the run audited") as edited:
        nlibias.score(small_samples, predictions, bootstrap=0)
    assert f"{small_samples} is not" in str(edited.value) and f"(run {run}: SHA-256" in str(edited.value)


def test_audit_writes_outputs_and_reuses_cache(tmp_path: Path, small_samples: Path) -> None:
    args = [
        "audit",
        "--samples",
        str(small_samples),
        "--model",
        "fake:m1",
        "--model",
        "fake:m2",
        "--out",
        str(tmp_path / "run"),
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--bootstrap",
        "50",
        "--quiet",
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert set(metrics["models"]) == {"m1", "m2"}
    for model in metrics["models"].values():
        assert set(model) >= {"overall", "by_domain", "by_subtopic"}
        for name in MEASURES:
            assert name in model["overall"]
    lines = (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == 2 * 7
    row = json.loads(lines[0])
    assert set(row) >= {"id", "model", "label", "probs"}
    stats = {name: info["stats"] for name, info in metrics["run"]["models"].items()}
    assert all(s["computed"] == 7 for s in stats.values())
    # Two different models never share cache entries: 2 × 7 unique pairs stored.
    assert len(PredictionCache(tmp_path / "c.sqlite")) == 14

    second = runner.invoke(app, args)
    assert second.exit_code == 0, second.output
    again = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert all(info["stats"]["computed"] == 0 for info in again["run"]["models"].values())
    assert again["models"] == metrics["models"]


_SLOW_AUDIT = textwrap.dedent(
    """
    import sys, time
    from nlibias.testing.reference_audit import audit_sample_list as audit
    from nlibias.models.fake import FakeNLIClassifier
    from nlibias.runtime.cache import PredictionCache
    from nlibias.io.samples import read_samples
    from nlibias.runtime.classifier import ClassifierPredictor

    class SlowFake(FakeNLIClassifier):
        def predict_batches(self, pairs):
            for batch in super().predict_batches(pairs):
                time.sleep(float(sys.argv[4]))
                yield batch

    samples = read_samples(sys.argv[1])
    audit(samples, [ClassifierPredictor(SlowFake("slow", batch_size=8))], out_dir=sys.argv[2],
          cache=PredictionCache(sys.argv[3]), bootstrap=0, progress=False, samples_dir=sys.argv[1])
    """
)


def test_audit_resumes_after_sigkill(tmp_path: Path) -> None:
    samples = [
        Sample(
            id=f"s{i}",
            source="bbnli",
            domain="d",
            subtopic="t",
            premise=f"Premise {i}.",
            hypothesis=f"Hypothesis number {i}.",
            gold="neutral",
            stereotype="pro" if i % 2 else "anti",
            pair_key=f"k{i // 2}",
        )
        for i in range(200)
    ]
    write_samples(tmp_path / "samples", samples)
    script = tmp_path / "slow_audit.py"
    script.write_text(_SLOW_AUDIT)
    cache_path = tmp_path / "cache.sqlite"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(
        [
            sys.executable,
            str(script),
            str(tmp_path / "samples"),
            str(tmp_path / "killed"),
            str(cache_path),
            "0.05",
        ],
        env=env,
    )
    deadline = time.time() + 60
    stored = 0
    while time.time() < deadline and stored < 40:
        time.sleep(0.05)
        if cache_path.exists():
            try:
                with sqlite3.connect(cache_path) as conn:
                    stored = conn.execute("SELECT COUNT(*) FROM outputs").fetchone()[0]
            except sqlite3.OperationalError:
                stored = 0
    process.send_signal(signal.SIGKILL)
    process.wait()
    cached_before = len(PredictionCache(cache_path))
    assert 0 < cached_before < 200, "the kill should land mid-run"
    assert not (tmp_path / "killed" / "metrics.json").exists()

    # Resume in-process with the same (fast) model identity: only the rest is computed.
    classifier = FakeNLIClassifier("slow", batch_size=8)
    loaded = read_samples(tmp_path / "samples")
    resumed = audit(
        loaded,
        [ClassifierPredictor(classifier)],
        out_dir=tmp_path / "resumed",
        cache=PredictionCache(cache_path),
        bootstrap=0,
        progress=False,
    )
    assert sum(classifier.calls) == 200 - cached_before
    uninterrupted = audit(
        loaded,
        [ClassifierPredictor(FakeNLIClassifier("slow"))],
        out_dir=None,
        cache=None,
        bootstrap=0,
        progress=False,
    )
    assert [p.to_dict() for p in resumed.predictions] == [p.to_dict() for p in uninterrupted.predictions]
    assert resumed.metrics["models"] == uninterrupted.metrics["models"]


def test_audit_refuses_mixed_sources_before_compute() -> None:
    a = Sample(id="a", source="bbnli", domain="d", subtopic="t", premise="P", hypothesis="H", gold="neutral")
    b = Sample(id="b", source="wq-nli", domain="d", subtopic="t", premise="P", hypothesis="H", gold="neutral")
    classifier = FakeNLIClassifier()
    with pytest.raises(Exception, match="mix sources"):
        audit([a, b], [ClassifierPredictor(classifier)], out_dir=None, cache=None, progress=False)
    assert classifier.calls == []


def test_cli_audit_with_tiny_hf_model_on_a_few_subtopics(tmp_path: Path, tiny_nli_dir: Path) -> None:
    from nlibias.benchmarks.bbnli_source import BBNLI_DATA
    from nlibias.benchmarks.data_locations import resolve_data

    bbnli = resolve_data(BBNLI_DATA)
    expanded = runner.invoke(
        app,
        [
            "expand",
            "bbnli",
            "--source",
            str(bbnli / "gender" / "man_is_to_breadwinner.json"),
            "--out",
            str(tmp_path / "one"),
            "--json",
        ],
    )
    assert expanded.exit_code == 0, expanded.output
    assert json.loads(expanded.output)["totals"] == {
        "bias": 96,
        "pairs": 48,
        "degenerate_pairs": 0,
        "unpaired": 0,
        "test": 40,
    }
    # Three subtopics from three domains, via a samples file cut from the full expansion.
    full = runner.invoke(app, ["expand", "bbnli", "--out", str(tmp_path / "all"), "--json"])
    assert full.exit_code == 0, full.output
    keep = {"man_is_to_breadwinner", "white_is_to_clean", "Muslim_man_to_many_wives"}
    subset = [s for s in read_samples(tmp_path / "all") if s.subtopic in keep]
    write_samples(tmp_path / "few", subset)
    args = [
        "audit",
        "--samples",
        str(tmp_path / "few"),
        "--model",
        str(tiny_nli_dir),
        "--out",
        str(tmp_path / "audit"),
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--bootstrap",
        "100",
        "--max-tokens",
        "1024",
        "--quiet",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "audit" / "metrics.json").read_text())
    (model_key,) = metrics["models"]
    model = metrics["models"][model_key]
    assert set(model["by_domain"]) == {"gender", "race", "religion"}
    assert set(model["by_subtopic"]) == keep
    assert model["overall"]["n"] == 96 + 120 + 84
    assert model["overall"]["degenerate_pairs"] == 45  # all of white_is_to_clean's
    run = metrics["run"]["models"][model_key]
    assert run["revision"].startswith("sha256:")
    assert run["stats"]["computed"] == run["stats"]["unique_inputs"] > 0
    assert run["stats"]["padding_efficiency"] > 0.8
    overall = model["overall"]
    assert overall["cf_pro"] + overall["cf_anti"] + overall["cf_error"] == pytest.approx(
        overall["misprediction_rate"]
    )
    # Rerun: everything from the cache, identical metrics.
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    rerun = json.loads((tmp_path / "audit" / "metrics.json").read_text())
    assert rerun["run"]["models"][model_key]["stats"]["computed"] == 0
    assert rerun["models"] == metrics["models"]


def test_cli_refuses_unmappable_labels_with_hint(
    tmp_path: Path, bbnli_corpus: list[str], small_samples: Path
) -> None:
    from nlibias.testing import build_tiny_nli_classifier

    model_dir = build_tiny_nli_classifier(
        tmp_path / "m", bbnli_corpus, id2label={0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    )
    result = runner.invoke(
        app,
        [
            "audit",
            "--samples",
            str(small_samples),
            "--model",
            str(model_dir),
            "--out",
            str(tmp_path / "o"),
            "--no-cache",
            "--quiet",
        ],
    )
    assert result.exit_code != 0
    assert "LABEL_0" in result.output and "--label-map" in result.output and "Traceback" not in result.output
    fixed = runner.invoke(
        app,
        [
            "audit",
            "--samples",
            str(small_samples),
            "--model",
            str(model_dir),
            "--label-map",
            "0=entailment,1=neutral,2=contradiction",
            "--out",
            str(tmp_path / "o"),
            "--no-cache",
            "--quiet",
            "--bootstrap",
            "0",
        ],
    )
    assert fixed.exit_code == 0, fixed.output


def test_cli_audit_generative_gets_generative_measures(tmp_path: Path, small_samples: Path) -> None:
    # fake:NAME is the deterministic generative fake; no --prompt means both paper styles.
    result = runner.invoke(
        app,
        [
            "audit",
            "--samples",
            str(small_samples),
            "--generative",
            "fake:lm",
            "--model",
            "fake:nli",
            "--out",
            str(tmp_path / "g"),
            "--no-cache",
            "--bootstrap",
            "0",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "g" / "metrics.json").read_text())
    generative = [k for k in metrics["models"] if k.startswith("fake:lm|") or k.startswith("lm|")]
    assert len(generative) == 2 and {k.split("|")[1] for k in generative} == {
        "prompt=true",
        "prompt=entailed",
    }
    for key in generative:
        assert "yes_rate_pro" in metrics["models"][key]["overall"]
    assert "yes_rate_pro" not in metrics["models"]["nli"]["overall"]
    assert "prompt_sensitivity" in metrics["generative"]
    tables = (tmp_path / "g" / "tables.txt").read_text()
    assert "Table 5" in tables and "Table 8" in tables
