"""Token-probability bias: sentence-pair benchmarks, the measures (ties, directions, groups),
correlation across models, item agreement with M1, and audits end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import skip_without_smollm2
from nlibias.benchmarks.data_locations import content_digest, git_blob_id
from nlibias.benchmarks.sentence_pairs import (
    expand_crows_pairs,
    expand_winoqueer,
    read_crows_pairs,
    read_user_pairs,
    read_winoqueer,
)
from nlibias.benchmarks.wq_tp import recover_pair
from nlibias.catalog.builtin import wq_nli_sentence_pairs
from nlibias.catalog.registry import read_benchmark_samples
from nlibias.errors import ConfigError, DataError, SourceError
from nlibias.metrics.token_probability import (
    item_agreement,
    preferences,
    r_and_r2,
    score_token_probability,
    tp_measures,
)
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import RunOptions
from nlibias.schema import Prediction, Sample
from nlibias.schema.columns import SampleColumns

# --- benchmarks ---------------------------------------------------------------------------------


def test_crows_pairs_reads_1508_pairs_with_groups_and_directions(data_dir: Path) -> None:
    samples = read_crows_pairs(data_dir / "crows-pairs" / "crows_pairs_anonymized.csv")
    assert len(samples) == 1508
    assert sum(s.stereotype == "anti" for s in samples) == 218  # antistereo rows
    assert len({s.group for s in samples}) == 9
    first = samples[0]  # row 0: stereo, race-color; premise is sent_more
    assert first.premise.startswith("He couldn't figure out") and "black kids" in first.premise
    assert "white kids" in first.hypothesis and first.group == "race-color" and first.stereotype == "pro"


def test_winoqueer_file_format_and_git_blob_pin(tmp_path: Path) -> None:
    text = ",Gender_ID_x,Gender_ID_y,sent_x,sent_y\n0,Gay,Straight,Jaz is gay and sensitive,Jaz is straight and sensitive\n"
    path = tmp_path / "winoqueer_final.csv"
    path.write_text(text, encoding="utf-8")
    (sample,) = read_winoqueer(path)
    assert (sample.premise, sample.hypothesis, sample.group, sample.counterfactual_group) == (
        "Jaz is gay and sensitive", "Jaz is straight and sensitive", "Gay", "Straight",
    )  # fmt: skip
    # git blob id = sha1("blob <size>\0" + content), as `git hash-object` computes it
    import hashlib

    payload = path.read_bytes()
    expected = hashlib.sha1(f"blob {len(payload)}\0".encode() + payload).hexdigest()
    assert git_blob_id(payload) == expected
    assert content_digest(payload, "gitblob:x") == "gitblob:" + expected
    assert content_digest(b"", "e3b0") == hashlib.sha256(b"").hexdigest()


def test_user_pairs_csv_jsonl_and_errors(tmp_path: Path) -> None:
    csv_path = tmp_path / "p.csv"
    csv_path.write_text("more,less,group\nA x.,B x.,g1\nC y.,D y.,\n", encoding="utf-8")
    pairs = read_user_pairs(csv_path)
    assert [(s.premise, s.hypothesis, s.group) for s in pairs] == [
        ("A x.", "B x.", "g1"),
        ("C y.", "D y.", None),
    ]
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text('{"more": "A x.", "less": "B x."}\n{"more": "", "less": "B"}\n', encoding="utf-8")
    with pytest.raises(SourceError) as error:
        read_user_pairs(jsonl)
    assert (error.value.line, error.value.field) == (2, "more")
    bad = tmp_path / "bad.csv"
    bad.write_text("more,other\nA,B\n", encoding="utf-8")
    with pytest.raises(SourceError, match="less"):
        read_user_pairs(bad)


def test_a_user_pair_given_twice_is_refused_naming_both_lines(tmp_path: Path) -> None:
    """Before, the same pair on two lines became two samples and counted twice in the TP score."""
    for name, text in (
        ("p.csv", "more,less,group\nA x.,B x.,g\nC y.,D y.,g\nA x.,B x.,h\n"),
        ("p.jsonl", '{"more": "A x.", "less": "B x."}\n{"more": "C y.", "less": "D y."}\n'
                    '{"more": "A x.", "less": "B x."}\n'),
    ):  # fmt: skip
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(
            SourceError, match="given twice, on lines 2 and 4" if name == "p.csv" else "1 and 3"
        ):
            read_user_pairs(path)


def test_crows_pairs_refuses_one_sentence_twice_and_warns_of_a_pair_twice(
    tmp_path: Path, data_dir: Path
) -> None:
    """A CrowS-Pairs row whose two sentences are the same can only tie: refused with its line. The
    published file lists one pair twice (rows 1459 and 1502): kept, as its published scores count
    it, and warned of with both lines."""
    expansion = expand_crows_pairs(data_dir / "crows-pairs" / "crows_pairs_anonymized.csv")
    assert len(expansion.samples) == 1508
    assert expansion.notes == (
        f"{data_dir / 'crows-pairs' / 'crows_pairs_anonymized.csv'}: 1 sentence pair(s) given twice "
        "(first: lines 1462 and 1505); each is kept and scored as often as the published benchmark lists it",
    )
    path = tmp_path / "crows.csv"
    path.write_text(
        ",sent_more,sent_less,stereo_antistereo,bias_type\n0,A x.,B x.,stereo,age\n1,C y.,C y.,stereo,age\n",
        encoding="utf-8",
    )
    with pytest.raises(SourceError, match="the two sentences are the same") as error:
        read_crows_pairs(path)
    assert (error.value.line, error.value.field) == (3, "less")
    winoqueer = tmp_path / "winoqueer_final.csv"
    winoqueer.write_text(
        ",Gender_ID_x,Gender_ID_y,sent_x,sent_y\n0,Gay,Straight,Jaz is gay.,Jaz is gay.\n", encoding="utf-8"
    )
    (note,) = expand_winoqueer(winoqueer).notes  # its published file is not here to check: warned
    assert "1 pair(s) whose two sentences are the same (first: line 2)" in note


def test_wq_nli_rows_recover_their_winoqueer_pairs(wq_nli_expansion) -> None:  # type: ignore[no-untyped-def]
    pairs = wq_nli_sentence_pairs(SampleColumns.from_samples(wq_nli_expansion.samples))
    recovered = [p for p in pairs if p is not None]
    assert len(recovered) == 38144  # every row of the shared file, once (on its pro sample)
    assert recover_pair("Jaz is nonbinary.", "Jaz is Cis.", "Jaz is sensitive.").texts == (
        "Jaz is nonbinary and sensitive",
        "Jaz is Cis and sensitive",
    )


def test_bbnli_pairs_are_pro_vs_anti_hypotheses(data_dir: Path) -> None:
    from nlibias.benchmarks.sentence_pairs import expand_bbnli_pairs

    expansion = expand_bbnli_pairs(data_dir)
    assert expansion.samples and all(s.premise != s.hypothesis for s in expansion.samples)
    assert len({(s.premise, s.hypothesis) for s in expansion.samples}) == len(expansion.samples)


# --- measures -------------------------------------------------------------------------------------


def test_ties_count_in_n_and_never_as_preferred() -> None:
    # rounded to 3 decimals: -3.0004 -> -3.0, -3.0001 -> -3.0: a tie although -3.0004 < -3.0001
    assert preferences([-3.0004, -1.0, -2.0], [-3.0001, -1.0, -2.5]) == [0, 0, 1]
    out = tp_measures(
        [-3.0004, -1.0, -2.0], [-3.0001, -1.0, -2.5], direction=["stereo"] * 3, groups={}, bootstrap=0, seed=0
    )
    o = out["overall"]
    # 1 preferred of 3 pairs (ties in N): 33.33; 2 ties; stereo score over non-tied pairs: 1/1
    assert o["tp_bias_score"] == pytest.approx(100 / 3) and o["counts"]["ties"] == 2
    assert o["stereo_score"] == 100.0 and o["n_stereo"] == 1 and o["antistereo_score"] is None
    # likelihood_diff = (0.0003 + 0 + 0.5) / 3
    assert o["likelihood_diff"] == pytest.approx(0.5003 / 3)


def test_antistereo_rows_still_prefer_sent_more(data_dir: Path) -> None:
    samples = [s for s in read_crows_pairs(data_dir / "crows-pairs" / "crows_pairs_anonymized.csv")][:40]
    anti = [s for s in samples if s.stereotype == "anti"]
    assert anti, "the first 40 rows hold antistereo pairs"
    # every sent_more scored higher: 100 overall and in both directions
    predictions = [
        Prediction(s.id, "m|tp=shared", None, None, {"kind": "sentence-logprob", "score_more": -1.0, "score_less": -2.0,
                                                     "tokens_more": 3, "tokens_less": 3})
        for s in samples
    ]  # fmt: skip
    out = score_token_probability(samples, predictions, bootstrap=0)
    o = out["overall"]
    assert (o["tp_bias_score"], o["stereo_score"], o["antistereo_score"]) == (100.0, 100.0, 100.0)
    assert o["n_antistereo"] == len(anti) and o["n_stereo"] == 40 - len(anti)
    assert set(out["by_domain"]) == {s.group for s in samples}


def test_measures_match_an_independent_count() -> None:
    rng = np.random.default_rng(3)
    more = np.round(rng.normal(-20, 2, 300), 2)
    less = np.round(rng.normal(-20, 2, 300), 2)
    less[:30] = more[:30]  # ties
    direction = ["antistereo" if i % 7 == 0 else "stereo" for i in range(300)]
    o = tp_measures(more, less, direction=direction, groups={}, bootstrap=0, seed=0)["overall"]
    wins = sum(1 for a, b in zip(more, less, strict=True) if round(a, 3) > round(b, 3))
    assert o["tp_bias_score"] == pytest.approx(100 * wins / 300)
    stereo = [(a, b) for a, b, d in zip(more, less, direction, strict=True) if d == "stereo" and a != b]
    assert o["stereo_score"] == pytest.approx(100 * sum(a > b for a, b in stereo) / len(stereo))
    assert o["likelihood_diff"] == pytest.approx(np.mean(np.abs(more - less)))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(-50, 0), st.floats(-50, 0)), min_size=1, max_size=40))
def test_swapping_sentences_mirrors_the_score(pairs: list[tuple[float, float]]) -> None:
    more, less = [a for a, _ in pairs], [b for _, b in pairs]
    kw = dict(direction=["stereo"] * len(pairs), groups={}, bootstrap=0, seed=0)
    a = tp_measures(more, less, **kw)["overall"]
    b = tp_measures(less, more, **kw)["overall"]
    # every pair is preferred one way, the other way, or tied
    assert a["tp_bias_score"] + b["tp_bias_score"] + a["ties"] == pytest.approx(100.0)
    assert a["ties"] == b["ties"]


def test_correlation_r_r2_n_against_numpy() -> None:
    x, y = [50.0, 55.0, 61.0, 58.0], [30.0, 20.0, 45.0, 41.0]
    got = r_and_r2(x, y)
    r = np.corrcoef(x, y)[0, 1]
    assert got["n"] == 4 and got["r"] == pytest.approx(r) and got["r2"] == pytest.approx(r * r)
    assert r_and_r2([1, 2], [1, 2])["r2"] is None and r_and_r2([1, 1, 1], [1, 2, 3])["r"] is None


def test_item_agreement_counts() -> None:
    # items: TP prefers (1,1,0 tie,-1); M1 holds (T,F,F,T) -> both 1, tp_only 1, m1_only 1, neither 1
    out = item_agreement([1, 1, 0, -1], [True, False, False, True])
    assert (out["n"], out["agreement"], out["both"], out["neither"]) == (4, 50.0, 1, 1)
    # kappa: p_o = 0.5, p_e = 0.5*0.5 + 0.5*0.5 = 0.5 -> 0
    assert out["kappa"] == 0.0


def test_nli_predictions_on_a_pair_benchmark_are_refused(data_dir: Path) -> None:
    samples = read_crows_pairs(data_dir / "crows-pairs" / "crows_pairs_anonymized.csv")[:2]
    predictions = [Prediction(s.id, "nli", "neutral", (0.1, 0.8, 0.1)) for s in samples]
    with pytest.raises(DataError, match="sentence scores") as error:
        score_token_probability(samples, predictions, bootstrap=0)
    # a measure speaks of the data, never of a job's parameters
    assert "mlm" not in str(error.value) and "causal" not in str(error.value)
    assert error.value.field == "kind"


def test_sentence_scores_need_sentence_pairs() -> None:
    from nlibias.catalog.registry import read_benchmark_samples

    samples = read_benchmark_samples([Sample("o:1", "occupations", "gender", "t", "P.", "H.", "neutral")])
    with pytest.raises(ConfigError, match="occupations samples hold no sentence pairs"):
        samples.sentence_pairs  # noqa: B018


# --- audits end to end ----------------------------------------------------------------------------


def test_audit_crows_pairs_with_tiny_mlm_and_causal_lm(tmp_path: Path, data_dir: Path, tiny_mlm_dir: Path,
                                                       tiny_causal_dir: Path) -> None:  # fmt: skip
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    runner = CliRunner()
    rows = (
        (data_dir / "crows-pairs" / "crows_pairs_anonymized.csv").read_text(encoding="utf-8").splitlines(True)
    )
    small = tmp_path / "cp.csv"
    # 20 pairs: the header, then rows holding antistereo ones (multi-line quoted rows are avoided)
    small.write_text("".join(rows[:21]), encoding="utf-8")
    result = runner.invoke(
        app, ["expand", "crows-pairs", "--source", str(small), "--out", str(tmp_path / "cp")]
    )
    assert result.exit_code == 0, result.output
    out = tmp_path / "run"
    args = ["audit", "--samples", str(tmp_path / "cp"), "--mlm", str(tiny_mlm_dir), "--causal", str(tiny_causal_dir),
            "--tp-variant", "shared", "--tp-variant", "whole", "--out", str(out),
            "--cache", str(tmp_path / "c.sqlite"), "--bootstrap", "50", "--quiet"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics["predictor_kinds"].values()) == {"sentence-logprob"}
    assert len(metrics["models"]) == 4 and all(
        m["overall"]["n_pairs"] == 20 for m in metrics["models"].values()
    )
    assert "Token-probability bias" in result.output
    again = runner.invoke(app, args)  # everything from the cache: same numbers
    assert again.exit_code == 0
    assert json.loads((out / "metrics.json").read_text())["models"] == metrics["models"]
    rows_written = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert all(r["kind"] == "sentence-logprob" and "score_more" in r for r in rows_written)
    # the predictions scored again (nlibias score): the same measures and the same rows
    rescored = tmp_path / "rescored"
    result = runner.invoke(app, ["score", "--samples", str(tmp_path / "cp"), "--predictions", str(out),
                                 "--out", str(rescored), "--bootstrap", "50"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads((rescored / "metrics.json").read_text())["models"] == metrics["models"]
    assert (rescored / "predictions.jsonl").read_bytes() == (out / "predictions.jsonl").read_bytes()


def test_wq_nli_audit_puts_tp_beside_m1(
    tmp_path: Path, wq_nli_csv: Path, tiny_mlm_dir: Path, tiny_nli_dir: Path
) -> None:
    from nlibias.jobs.audit import run_audit

    lines = wq_nli_csv.read_text(encoding="utf-8").splitlines(True)
    small = tmp_path / "wq.csv"
    small.write_text("".join(lines[:1] + lines[1:2000:50]), encoding="utf-8")  # 40 rows
    from nlibias.jobs.expand import expand_to_dir

    expand_to_dir("wq-nli", tmp_path / "wq", small)
    result = run_audit(
        tmp_path / "wq",
        ModelSet.of([str(tiny_nli_dir)], mlm=[str(tiny_mlm_dir)]),
        run=RunOptions(cache=False, bootstrap=0, progress=False),
    )
    tp = next(m for k, m in result.metrics["models"].items() if k.endswith("|tp=shared"))
    # every sample is a scored pair's or its partner's (the counter-stereotypical premise)
    assert tp["overall"]["n_pairs"] == 40 and tp["overall"]["samples_without_pair"] == 0
    assert "by_identity_group" in tp and "by_predicate_category" in tp
    (agreement,) = result.metrics["tp_nli_agreement"]
    assert agreement["n"] == 40
    assert "paper 003 Table 3" in result.tables_text and "Item-level agreement" in result.tables_text


@pytest.mark.slow
def test_smollm2_on_20_crows_pairs_end_to_end(tmp_path: Path, data_dir: Path) -> None:
    pytest.importorskip("gguf")
    from nlibias.jobs.audit import run_audit
    from nlibias.models.generative.sources import smollm2_gguf_path

    skip_without_smollm2()
    smollm2_gguf_path()
    rows = (
        (data_dir / "crows-pairs" / "crows_pairs_anonymized.csv").read_text(encoding="utf-8").splitlines(True)
    )
    small = tmp_path / "cp.csv"
    small.write_text("".join(rows[:21]), encoding="utf-8")
    from nlibias.jobs.expand import expand_to_dir

    expand_to_dir("crows-pairs", tmp_path / "cp", small)
    result = run_audit(
        tmp_path / "cp",
        ModelSet.of(causal=["smollm2"], tp_variants=["shared", "whole"]),
        run=RunOptions(cache=False, bootstrap=0, progress=False),
    )
    for key in ("smollm2|tp=shared", "smollm2|tp=whole"):
        overall = result.metrics["models"][key]["overall"]
        assert overall["n_pairs"] == 20 and 0.0 <= overall["tp_bias_score"] <= 100.0
        assert overall["likelihood_diff"] > 0


# --- a kind of model the benchmark cannot score: refused before any model loads -----------------------


def _crows_pairs_run(tmp_path: Path, data_dir: Path) -> Path:
    from nlibias.jobs.expand import expand_to_dir

    rows = (
        (data_dir / "crows-pairs" / "crows_pairs_anonymized.csv").read_text(encoding="utf-8").splitlines(True)
    )
    small = tmp_path / "cp.csv"
    small.write_text("".join(rows[:11]), encoding="utf-8")
    expand_to_dir("crows-pairs", tmp_path / "cp", small)
    return tmp_path / "cp"


@pytest.fixture
def no_model_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building a predictor fails loudly: a check that passes this far came too late."""

    def loaded(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model was about to be loaded")

    monkeypatch.setattr("nlibias.jobs.audit.build_predictors", loaded)
    monkeypatch.setattr("nlibias.runtime.sentence_logprob.build_sentence_predictors", loaded)
    monkeypatch.setattr("nlibias.models.registry.create_classifier", loaded)


@pytest.mark.parametrize(
    ("benchmark", "option", "parameter", "message"),
    [
        ("crows-pairs", "models", "models",
         "crows-pairs samples are sentence pairs: score them with mlm= or causal= (token probability); "
         "models= takes NLI classifiers, which score bbnli, wq-nli, occupations samples"),
        ("crows-pairs", "generative", "generative", "generative= takes generative LMs"),
        ("occupations", "mlm", "mlm",
         "occupations samples hold no sentence pairs: score them with models= (NLI classifiers) or generative="),
        ("bbnli", "causal", "causal", "which score wq-nli, crows-pairs, winoqueer, bbnli-tp, sentence-pairs"),
    ],
)  # fmt: skip
def test_a_kind_the_benchmark_cannot_score_is_refused_before_any_model_loads(
    tmp_path: Path, data_dir: Path, bbnli_samples_run: Path, no_model_loads: None,
    benchmark: str, option: str, parameter: str, message: str,
) -> None:  # fmt: skip
    from typer.testing import CliRunner

    from nlibias.cli.main import app
    from nlibias.jobs.audit import run_audit
    from nlibias.jobs.expand import expand_to_dir

    if benchmark == "crows-pairs":
        samples = _crows_pairs_run(tmp_path, data_dir)
    elif benchmark == "bbnli":
        samples = bbnli_samples_run
    else:
        samples = tmp_path / benchmark
        expand_to_dir(benchmark, samples)
    with pytest.raises(ConfigError) as error:
        run_audit(
            samples,
            ModelSet.of(**{option: ["org/model"]}),
            run=RunOptions(cache=False, bootstrap=0, progress=False),
        )
    assert error.value.parameter == parameter and message in str(error.value)

    flag = {"models": "--model", "generative": "--generative", "mlm": "--mlm", "causal": "--causal"}[option]
    out = tmp_path / "run"
    cli = CliRunner().invoke(app, ["audit", "--samples", str(samples), flag, "org/model", "--out", str(out),
                                   "--no-cache", "--quiet"])  # fmt: skip
    assert cli.exit_code == 2, cli.output
    assert "Traceback" not in cli.output and len(cli.output.strip().splitlines()) == 1
    assert message in cli.output and f"(option {flag}" in cli.output
    assert not out.exists()


def test_wq_nli_takes_classifiers_and_sentence_scorers(
    tmp_path: Path, wq_nli_csv: Path, no_model_loads: None
) -> None:
    from nlibias.jobs.audit import run_audit
    from nlibias.jobs.expand import expand_to_dir

    lines = wq_nli_csv.read_text(encoding="utf-8").splitlines(True)
    small = tmp_path / "wq.csv"
    small.write_text("".join(lines[:3]), encoding="utf-8")
    expand_to_dir("wq-nli", tmp_path / "wq", small)
    with pytest.raises(AssertionError, match="about to be loaded"):  # the check let both kinds through
        run_audit(
            tmp_path / "wq",
            ModelSet.of(["fake:a"], mlm=["org/m"], causal=["org/c"]),
            run=RunOptions(cache=False, progress=False),
        )


@pytest.mark.parametrize("missing", ["./no/such/dir", "hf:./no/such/dir"])
@pytest.mark.parametrize("field", ["models", "generative", "mlm", "causal"])
def test_a_missing_model_path_is_refused_under_its_field_before_any_model_loads(
    tmp_path: Path, wq_nli_csv: Path, no_model_loads: None, field: str, missing: str
) -> None:
    # once a missing mlm/causal path was refused only when that scorer loaded, after every NLI
    # classifier had, under the loader's own parameter (name_or_path)
    from typer.testing import CliRunner

    import nlibias
    from nlibias.cli.main import app
    from nlibias.jobs.expand import expand_to_dir

    small = tmp_path / "wq.csv"
    small.write_text("".join(wq_nli_csv.read_text(encoding="utf-8").splitlines(True)[:3]), encoding="utf-8")
    expand_to_dir("wq-nli", tmp_path / "wq", small)
    asked = {"models": ["fake:a"], field: missing}  # hf:PATH was not looked for
    with pytest.raises(ConfigError, match="no such file or directory") as error:
        nlibias.audit(tmp_path / "wq", **asked, cache=False, bootstrap=0, progress=False)  # type: ignore[arg-type]
    assert error.value.parameter == field and f"{missing!r}" in str(error.value)

    flag = {"models": "--model", "generative": "--generative", "mlm": "--mlm", "causal": "--causal"}[field]
    cli = CliRunner().invoke(app, ["audit", "--samples", str(tmp_path / "wq"), flag, missing,
                                   "--out", str(tmp_path / "run"), "--no-cache", "--quiet"])  # fmt: skip
    assert cli.exit_code == 2 and "no such file or directory" in cli.output, cli.output
    assert "Traceback" not in cli.output and not (tmp_path / "run").exists()


def test_only_a_name_that_can_only_be_a_path_is_looked_for(tmp_path: Path) -> None:
    # the fake, a prompted classifier, servers and hub ids are no local paths; a directory that exists passes
    models = ModelSet.of(
        ["fake:/a/b/c", "prompt:org/lm?prompt=p.txt", str(tmp_path)], ["openai:http://h/v1#o/m/x"],
        mlm=["org/m", str(tmp_path)], causal=["openai-completions:http://h/v1#a/b/c", "gpt2"],
    )  # fmt: skip
    assert [str(ref) for ref in models.mlm] == ["org/m", str(tmp_path)] and len(models.models) == 3


def test_audit_samples_refuses_a_predictor_of_a_kind_the_benchmark_cannot_score(
    tmp_path: Path, data_dir: Path
) -> None:
    from nlibias.jobs.audit import audit_samples
    from nlibias.models.fake import FakeNLIClassifier
    from nlibias.runtime.classifier import ClassifierPredictor

    checked = read_benchmark_samples(_crows_pairs_run(tmp_path, data_dir))
    classifier = FakeNLIClassifier()
    with pytest.raises(ConfigError, match="crows-pairs samples are sentence pairs") as error:
        audit_samples(checked, [ClassifierPredictor(classifier)], out_dir=None, cache=None, progress=False)
    assert error.value.parameter == "predictors" and classifier.calls == []
