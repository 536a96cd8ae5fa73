"""What makes a gate's decision impossible or meaningless is refused before anything is decided
(issue 48's gate routes: the command line, the rules file and ``nlibias.gate``), ties read as ties,
and a model with too few answers read is not testable."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

import nlibias
from nlibias.cli.main import app
from nlibias.errors import ConfigError, DataError, SourceError
from nlibias.jobs.gate_rules import GateRules, load_rules, parse_rules

runner = CliRunner()


@pytest.mark.parametrize(
    ("text", "field", "said"),
    [
        ("margin: .inf\n", "margin", "finite"),
        ("margin: 1.0e+309\n", "margin", "finite"),
        ("margin: true\n", "margin", "valid number"),
        ("bootstrap: true\n", "bootstrap", "valid integer"),
        ("seed: -1\n", "seed", "greater than or equal to 0"),
        ("confidence: 1.0\n", "confidence", "less than 1"),
        ("confidence: 0\n", "confidence", "greater than 0"),
        (
            "measures:\n  bbnli_bias_score:\n    max_abs: .inf\n",
            "measures.bbnli_bias_score.max_abs",
            "finite",
        ),
        ("max_detectable: -2\n", "max_detectable", "greater than or equal to 0"),
        ("max_detectable: 0\n", "max_detectable", "no audit can detect a change of 0"),  # none could meet it
    ],
)
def test_rules_that_make_a_decision_impossible_are_refused_with_the_line(
    text: str, field: str, said: str
) -> None:
    with pytest.raises(SourceError) as caught:
        parse_rules(text, "gate.yaml")
    message = str(caught.value)
    assert field in message and said in message and f"gate.yaml:{text.count(chr(10))}" in message


def test_a_rules_folder_is_refused_as_a_folder(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="rules names a folder, not a rules file") as caught:
        load_rules(tmp_path)
    assert caught.value.parameter == "rules"


def test_a_slicing_listed_twice_is_tested_once() -> None:
    rules = parse_rules("slices: [overall, domain, domains, overall]\n", "gate.yaml")
    assert rules.slices == ["overall", "domain"]
    assert GateRules(measures={"S": {"slices": ["overall", "overall"]}}).slices_of("S") == ["overall"]


@pytest.mark.parametrize("margin", ["inf", "1e309", "-1"])
def test_an_infinite_or_negative_margin_on_the_command_line_is_refused(
    runs: dict[str, Path], margin: str
) -> None:
    result = runner.invoke(
        app, ["gate", str(runs["cand"]), "--baseline", str(runs["base"]), "--margin", margin]
    )
    assert result.exit_code == 2, result.output
    assert "--margin" in result.output and "finite number of 0 or more" in result.output


def test_python_routes_refuse_what_the_file_refuses(runs: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match="margin must be a finite"):
        nlibias.gate(runs["cand"], runs["base"], margin=float("inf"))
    with pytest.raises(ConfigError, match="margin"):
        nlibias.gate(runs["cand"], runs["base"], margin=True)
    with pytest.raises(ConfigError, match="margin is inf; pass a finite"):  # ours, not pydantic's
        GateRules(margin=float("inf"))


def test_a_test_that_cannot_decide_is_refused_with_the_resamples_that_could(runs: dict[str, Path]) -> None:
    # 4 slices (overall, 3 domains): Holm's smallest threshold .05 / 4 = .0125; 1 / (B + 1) < .0125
    # needs B + 1 > 80, B = 80. With 10 resamples the smallest p is 1/11 = .0909.
    with pytest.raises(ConfigError, match=r"1/11 = 0\.0909.*use bootstrap 80 or more"):
        nlibias.gate(runs["cand"], runs["base"], rules=GateRules(bootstrap=10))
    # confidence .999999 with 1,000 resamples: one slice needs 1 / (B + 1) < 1e-6, B = 1,000,000.
    with pytest.raises(ConfigError, match="use bootstrap 1000000 or more"):
        nlibias.gate(runs["cand"], runs["base"], rules=GateRules(confidence=0.999999, slices=["overall"]))


def test_a_slice_the_runs_lack_is_refused_in_rules_given_as_an_object(runs: dict[str, Path]) -> None:
    """The same rule as a rules file's (there with its line): the runs' groupings and the closest one."""
    with pytest.raises(
        ConfigError, match=r"rules slices: 'domian' is not a grouping of these runs; did you mean"
    ) as error:
        nlibias.gate(runs["cand"], runs["base"], rules=GateRules(slices=["overall", "domian"]))
    assert error.value.parameter == "rules"
    # the rule checks what the rules name: the default's slicings pass on runs that have them
    assert {c.comparison.slicing for c in nlibias.gate(runs["cand"], runs["base"]).checks} == {
        "overall",
        "domain",
    }


def test_the_same_run_twice_is_refused_however_it_is_spelled(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(runs["root"])
    result = runner.invoke(app, ["gate", "./base", "--baseline", "base/"])
    assert result.exit_code == 2 and "the same run" in result.output, result.output
    (runs["root"] / "link").symlink_to(runs["base"], target_is_directory=True)
    for baseline in ("base/metrics.json", "link", "link/metrics.json"):  # a run's file or a link
        result = runner.invoke(app, ["gate", "base", "--baseline", baseline])
        assert result.exit_code == 2 and "the same run" in result.output, (baseline, result.output)


def test_a_candidate_model_paired_twice_is_refused(runs: dict[str, Path]) -> None:
    args = ["gate", str(runs["cand"]), "--baseline", str(runs["base"]), "--pair", "m=m", "--pair", "m=n"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "paired twice" in result.output, result.output


def _score(samples: Path, predictions: Path, out: Path) -> Path:
    args = ["score", "--samples", str(samples), "--predictions", str(predictions), "--out", str(out)]
    scored = runner.invoke(app, [*args, "--bootstrap", "0"])
    assert scored.exit_code == 0, scored.output
    return out


def _shuffled_samples(runs: dict[str, Path], tmp_path: Path, *, seed: int) -> Path:
    """The gate's samples file with its lines in a seeded random order."""
    lines = (runs["root"] / "bb" / "samples.jsonl").read_text().splitlines(True)
    shuffled = tmp_path / "shuffled" / "samples.jsonl"
    shuffled.parent.mkdir()
    shuffled.write_text("".join(random.Random(seed).sample(lines, len(lines))))
    return shuffled


def test_samples_edited_since_the_audit_are_refused_and_the_same_samples_reordered_are_accepted(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    shuffled = _shuffled_samples(runs, tmp_path, seed=0)
    reordered = _score(shuffled, runs["base"] / "predictions.jsonl", tmp_path / "reordered")
    result = nlibias.gate(reordered, runs["base"], rules=runs["rules"])
    assert result.passed and {c.comparison.p for c in result.checks} == {1.0}  # the same answers
    edited = json.loads(shuffled.read_text().splitlines()[0])
    edited["hypothesis"] += " Really."
    shuffled.write_text(json.dumps(edited) + "\n" + "".join(shuffled.read_text().splitlines(True)[1:]))
    with pytest.raises(ConfigError, match="not the one the run audited"):
        nlibias.gate(reordered, runs["base"], rules=runs["rules"])


@pytest.fixture(scope="module")
def generative(runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A fake generative LM's run over the gate's samples, and the same rows with no answer read."""
    root = tmp_path_factory.mktemp("generative")
    samples = runs["root"] / "bb" / "samples.jsonl"
    args = ["audit", "--samples", str(samples), "--generative", "fake:lm", "--prompt", "true"]
    audited = runner.invoke(
        app, [*args, "--mode", "generated", "--out", str(root / "gen"), "--no-cache", "--quiet"]
    )
    assert audited.exit_code == 0, audited.output
    rows = [json.loads(line) for line in (root / "gen" / "predictions.jsonl").read_text().splitlines()]
    unread = root / "unread.jsonl"
    hedge = {"label": None, "answer": None, "answer_rule": "hedge", "text": "I cannot determine that."}
    unread.write_text("".join(json.dumps({**row, **hedge}) + "\n" for row in rows))
    return {"gen": root / "gen", "unread": _score(samples, unread, root / "unread")}


def test_a_classifier_and_a_generative_model_are_not_compared_either_way(
    runs: dict[str, Path], generative: dict[str, Path]
) -> None:
    for cand, base, kinds in (
        (runs["base"], generative["gen"], "classifier"),
        (generative["gen"], runs["base"], "generative"),
    ):
        with pytest.raises(DataError, match=f"is a {kinds} model and baseline model"):
            nlibias.gate(cand, base)


def test_a_candidate_with_no_answer_read_is_not_testable_and_not_passed(
    generative: dict[str, Path],
) -> None:
    result = runner.invoke(app, ["gate", str(generative["unread"]), "--baseline", str(generative["gen"])])
    assert result.exit_code == 2, result.output
    assert "is not testable: 0 of" in result.output and "fewer than 10" in result.output
    # the verdict says how few answers were read (all 3,134 samples' answers unread)
    scored = json.loads((generative["unread"] / "metrics.json").read_text())
    from nlibias.report.verdict_block import verdict_block

    assert "0 of 3,134 answers read (0.0%)" in verdict_block(scored)


def test_a_gate_on_every_pair_tied_tp_runs_says_no_evidence_of_bias(tmp_path: Path, data_dir: Path) -> None:
    # 30 CrowS-Pairs pairs whose two sentences score alike: the ties-split score is
    # 100 x (0 + 30 / 2) / 30 = 50 in every resample for both runs, so Δ = 0 and no check fails.
    from nlibias.jobs.expand import expand_to_dir

    rows = (
        (data_dir / "crows-pairs" / "crows_pairs_anonymized.csv").read_text(encoding="utf-8").splitlines(True)
    )
    (tmp_path / "cp.csv").write_text("".join(rows[:31]), encoding="utf-8")
    expand_to_dir("crows-pairs", tmp_path / "cp", tmp_path / "cp.csv")
    samples = tmp_path / "cp" / "samples.jsonl"
    tied = tmp_path / "tied.jsonl"
    ids = [json.loads(line)["id"] for line in samples.read_text().splitlines()]
    tied.write_text(
        "".join(
            json.dumps(
                {
                    "id": i,
                    "model": "lm|tp=whole",
                    "kind": "sentence-logprob",
                    "label": None,
                    "score_more": -9.0,
                    "score_less": -9.0,
                    "tokens_more": 5,
                    "tokens_less": 5,
                }
            )
            + "\n"
            for i in ids
        )
    )
    base, cand = _score(samples, tied, tmp_path / "base"), _score(samples, tied, tmp_path / "cand")
    result = nlibias.gate(cand, base, rules=GateRules(slices=["overall"]))
    (check,) = result.checks
    assert result.passed and check.measure == "tp_tie_split_score"
    assert (check.comparison.candidate, check.comparison.delta, check.comparison.p) == (50.0, 0.0, 1.0)


def _valid(xml: Path) -> None:
    """``xml`` is valid under Jenkins xUnit's junit-10 schema and the Ant JUnit schema."""
    etree = pytest.importorskip("lxml.etree")
    document = etree.parse(str(xml))
    for name in ("jenkins-junit-10.xsd", "ant-junit.xsd"):
        schema = etree.XMLSchema(etree.parse(str(Path(__file__).parent / "fixtures" / "junit" / name)))
        assert schema.validate(document), (name, schema.error_log)


def test_the_ci_files_are_valid_and_say_what_the_gate_could_see(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    from nlibias.metrics.bootstrap import detectable_change

    xml, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    args = ["gate", str(runs["cand"]), "--baseline", str(runs["base"]), "--rules", str(runs["rules"])]
    result = runner.invoke(app, [*args, "--junit", str(xml), "--markdown", str(md)])
    assert result.exit_code == 1, result.output
    _valid(xml)
    text = md.read_text()
    assert text.startswith("### Bias gate: ❌ FAIL") and "| Verdict | Model |" in text
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    verdicts = [row.split("|")[1].strip() for row in rows if not row.startswith("| Verdict")]
    assert verdicts == sorted(verdicts, key=lambda v: v != "**FAIL**")  # failures first
    passed = sum(v == "pass" for v in verdicts)
    assert passed == 0 or f"✅ {passed} check" in text
    decided = json.loads(runner.invoke(app, [*args, "--json"]).output)
    overall = next(c for c in decided["checks"] if c["slice"] == "overall")
    assert overall["p"] == max(overall["p_delta"], overall["p_sum"]) and overall["detectable"] > 0
    assert f"{overall['detectable']:.2f}" in text  # the Markdown's Detects column
    from lxml import etree

    names = {p.get("name"): p.get("value") for p in etree.parse(str(xml)).iter("property")}
    assert float(names["bbnli_bias_score paired overall: detectable"]) == pytest.approx(
        overall["detectable"], rel=1e-5
    )
    # the detectable change grows with the Holm family: the overall check alone sees less far
    assert detectable_change({"delta": 1.0}, 0.0, 0.05 / 4) > detectable_change({"delta": 1.0}, 0.0, 0.05)


def test_a_gate_blind_to_the_change_asked_for_is_refused_and_says_so_in_both_files(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    rules = tmp_path / "blind.yaml"
    rules.write_text("bootstrap: 300\nmax_detectable: 0.01\n")
    xml, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    args = ["gate", str(runs["copy"]), "--baseline", str(runs["base"]), "--rules", str(rules)]
    result = runner.invoke(app, [*args, "--junit", str(xml), "--markdown", str(md)])
    assert result.exit_code == 2, result.output
    assert "this gate cannot see a change of 0.01 points; audit more samples" in result.output
    _valid(xml)
    from lxml import etree

    (error,) = etree.parse(str(xml)).iter("error")
    assert "cannot see a change of 0.01 points" in (error.get("message") or "")
    assert "NOT DECIDED" in md.read_text() and "cannot see a change of 0.01 points" in md.read_text()


def test_a_candidate_whose_headline_is_undefined_is_not_passed(
    runs: dict[str, Path], generative: dict[str, Path], tmp_path: Path
) -> None:
    # Every answer to an anti-stereotype hypothesis unread, every pro one read: half the answers
    # are read (every pair holds one), yet pro - anti is undefined over all samples. The gate
    # used to show "candidate n/a, p = 1" and pass; now nothing was tested, so it decides nothing.
    samples = runs["root"] / "bb" / "samples.jsonl"
    anti = {
        s["id"] for s in map(json.loads, samples.read_text().splitlines()) if s.get("stereotype") == "anti"
    }
    hedge = {"label": None, "answer": None, "answer_rule": "hedge", "text": "I cannot determine that."}
    rows = [json.loads(line) for line in (generative["gen"] / "predictions.jsonl").read_text().splitlines()]
    half = tmp_path / "half.jsonl"
    half.write_text("".join(json.dumps({**r, **hedge} if r["id"] in anti else r) + "\n" for r in rows))
    scored = _score(samples, half, tmp_path / "half")
    result = runner.invoke(app, ["gate", str(scored), "--baseline", str(generative["gen"])])
    assert result.exit_code == 2, result.output
    assert "is not testable on" in result.output and "undefined over all samples" in result.output


def test_rules_changed_past_their_declaration_are_refused(runs: dict[str, Path]) -> None:
    # model_copy(update=...) skips pydantic's validation: an infinite margin would pass anything,
    # and a confidence above 1 left the resample count that could decide searched for forever
    for update in ({"margin": float("inf")}, {"confidence": 1.5}, {"seed": -1}):
        with pytest.raises(ConfigError):
            nlibias.gate(runs["cand"], runs["base"], rules=GateRules().model_copy(update=update))


def test_the_same_answers_over_a_reordered_samples_file_give_the_same_p_values(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    # The draws follow the units' order: the candidate's samples file in another order gave other
    # p-values for the same answers (an independent check: adjusted p 0.129 against 0.096).
    shuffled = _shuffled_samples(runs, tmp_path, seed=1)
    reordered = _score(shuffled, runs["cand"] / "predictions.jsonl", tmp_path / "reordered")
    as_audited = nlibias.gate(runs["cand"], runs["base"], rules=runs["rules"])
    as_shuffled = nlibias.gate(reordered, runs["base"], rules=runs["rules"])
    assert [c.comparison.p for c in as_shuffled.checks] == [c.comparison.p for c in as_audited.checks]
    assert len({c.comparison.p for c in as_audited.checks}) > 1  # p-values that could differ


def test_a_command_line_typer_refuses_still_writes_both_ci_files(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    xml, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    args = ["gate", str(runs["cand"]), "--baseline", str(runs["base"]), "--margin", "lots"]
    result = runner.invoke(app, [*args, f"--junit={xml}", "--markdown", str(md)])
    assert result.exit_code == 2, result.output
    _valid(xml)
    from lxml import etree

    (error,) = etree.parse(str(xml)).iter("error")
    assert "--margin" in (error.get("message") or "")
    assert "NOT DECIDED" in md.read_text() and "--margin" in md.read_text()
    # a file named by a refused command line is still never written over an input
    metrics = runs["cand"] / "metrics.json"
    before = metrics.read_bytes()
    result = runner.invoke(app, [*args, "--junit", str(metrics)])
    assert result.exit_code == 2 and metrics.read_bytes() == before


def test_a_single_valued_option_given_twice_is_refused_and_the_ci_files_say_so(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    # click keeps the last value without a word: --margin 1 --margin 30 would gate with 30
    xml, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    args = ["gate", str(runs["cand"]), "--baseline", str(runs["base"]), "--margin", "1", "--margin=30"]
    result = runner.invoke(app, [*args, "--junit", str(xml), "--markdown", str(md)])
    assert result.exit_code == 2 and "'--margin': given 2 times" in result.output, result.output
    assert "NOT DECIDED" in md.read_text() and "--margin" in md.read_text()
    _valid(xml)
    # a repeatable option is still repeatable, and a nested group's command is checked too
    pairs = runner.invoke(app, [*args[:4], "--pair", "a=b", "--pair", "c=d", "--json"])
    assert "given 2 times" not in pairs.output
    nested = runner.invoke(app, ["validate", "status", str(tmp_path), "--rule", "drop", "--rule", "majority"])
    assert nested.exit_code == 2 and "'--rule': given 2 times" in nested.output, nested.output


@pytest.mark.parametrize(
    ("text", "baseline", "line", "said"),
    [
        ("measures:\n  bbnli_bias_score: {margin: 250}\n", True, 2, "give a margin below 100"),
        ("measures:\n  bbnli_bias_score: {max_abs: 100}\n", False, 2, "give a max_abs below 100"),
        ("worse: towards_stereotype\nmargin: 200\n", True, 2, "give a margin below 200"),
        ("measures:\n  tp_tie_split_score: {margin: 1}\n", True, 2, "which these runs do not report"),
        ("margin: 2\nmeasures:\n  bbnli_bias_score: {max_abs: 50}\n", False, 1, "leave margin out"),
        (
            "measures:\n  bbnli_bias_score: {max_abs: 50, worse: towards_stereotype}\n",
            False,
            2,
            "leave worse out",
        ),
    ],
)
def test_a_rule_no_check_can_use_is_refused_with_its_line(
    runs: dict[str, Path], text: str, baseline: bool, line: int, said: str
) -> None:
    # each was accepted and the gate passed: a margin or limit beyond any score, a measure these
    # runs lack, a paired setting without a baseline (docs/gates.md)
    rules = runs["root"] / "unusable.yaml"
    rules.write_text(text)
    with pytest.raises(SourceError) as caught:
        nlibias.gate(runs["cand"], runs["base"] if baseline else None, rules=rules)
    assert f"{rules}:{line}" in str(caught.value) and said in str(caught.value)


def test_a_margin_beyond_any_score_on_the_command_line_names_the_flag(runs: dict[str, Path]) -> None:
    result = runner.invoke(
        app, ["gate", str(runs["cand"]), "--baseline", str(runs["base"]), "--margin", "100"]
    )
    assert result.exit_code == 2 and "--margin 100 decides nothing" in result.output, result.output
    assert "give a margin below 100" in result.output
