"""Generative LMs on BBQ: multiple-choice prompt styles, option scoring (checked against a plain
forward pass over each whole sequence), generated answers read as options, and the audit with
BBQ's own default styles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import nlibias
from nlibias.errors import ConfigError, DataError
from nlibias.models.generative.hf_causal import HFCausalLM
from nlibias.models.generative.option_scoring import option_batches
from nlibias.models.generative.prompts import CHOICE_STYLES, PROMPT_STYLES
from nlibias.models.generative.sources import CausalLMSource
from test_bbq import TEMPLATE, synthetic_data_allowed, write_rows  # noqa: F401 (autouse: synthetic data)


@pytest.fixture
def bbq_run(tmp_path: Path) -> Path:
    write_rows(tmp_path / "bbq" / "data" / "Age.jsonl", TEMPLATE)
    nlibias.expand("bbq", source=tmp_path / "bbq", out_dir=tmp_path / "run")
    return tmp_path / "run"


def test_the_paper_formats_list_the_options_in_order() -> None:
    options = ["The grandfather", "The grandson", "Can't be determined"]
    race = CHOICE_STYLES["race"].render("Context.", "Who forgot?", options)
    arc = CHOICE_STYLES["arc"].render("Context.", "Who forgot?", options)
    assert race == "Who forgot?\n(a) The grandfather (b) The grandson (c) Can't be determined\nContext."
    assert arc == "Context. Who forgot?\n(a) The grandfather (b) The grandson (c) Can't be determined"
    assert CHOICE_STYLES["race"].choices and not PROMPT_STYLES["true"].choices


def test_an_audit_of_bbq_asks_with_race_and_arc_and_prints_the_verdict_first(bbq_run: Path) -> None:
    result = nlibias.audit(bbq_run, generative="fake:g", cache=False, bootstrap=0, progress=False)
    assert sorted(result.metrics["models"]) == ["g|prompt=arc|scored", "g|prompt=race|scored"]
    overall = result.metrics["models"]["g|prompt=race|scored"]["overall"]
    assert overall["n"] == 4 and overall["n_unparsed"] == 0
    assert result.tables_text.startswith("Verdict")
    rows = [p for p in result.predictions if p.model == "g|prompt=race|scored"]
    assert all(p.extra["choice"] in (0, 1, 2) and len(p.extra["option_logprobs"]) == 3 for p in rows)


def test_a_limited_bbq_audit_says_what_it_resamples_and_keeps_no_pairs_whole(bbq_run: Path) -> None:
    result = nlibias.audit(bbq_run, generative="fake:g", prompts="race", limit=2, cache=False, bootstrap=0,
                           progress=False)  # fmt: skip
    assert result.metrics["bootstrap"]["unit"] == "filled template"
    assert result.metrics["subset"]["pairs_whole"] is False  # BBQ's samples hold no pro/anti pairs
    assert "(limit 2, seed 0; every subtopic): its values" in result.tables_text


def test_a_yes_no_style_on_bbq_and_a_choice_style_on_nli_samples_are_refused(bbq_run: Path) -> None:
    with pytest.raises(
        ConfigError, match="'true' does not fit bbq samples: ask with a multiple-choice"
    ) as caught:
        nlibias.audit(bbq_run, generative="fake:g", prompts="true", cache=False, progress=False)
    assert caught.value.parameter == "prompts"
    pair = nlibias.expand("bbnli")
    with pytest.raises(ConfigError, match="'race' does not fit bbnli samples: ask with a yes/no style"):
        nlibias.audit(pair, generative="fake:g", prompts="race", cache=False, progress=False)


def test_generated_answers_are_read_as_options_and_unmatched_ones_counted(bbq_run: Path) -> None:
    # the fake's generated texts are yes/no replies: no option matches, every one is counted
    result = nlibias.audit(bbq_run, generative="fake:g", prompts="race", mode="generated", cache=False,
                           bootstrap=0, progress=False)  # fmt: skip
    overall = result.metrics["models"]["g|prompt=race|generated"]["overall"]
    assert (overall["n"], overall["n_unparsed"], overall["bbq_s_amb"]) == (4, 4, None)
    assert {p.extra["answer_status"] for p in result.predictions} == {"unmatched"}


def test_option_scores_equal_a_plain_pass_over_each_whole_sequence(tiny_causal_dir: Path) -> None:
    import torch

    lm = HFCausalLM(CausalLMSource(str(tiny_causal_dir)), name="tiny", device="cpu")
    prompts = [
        "Men are rational .",
        "Women are caring and men are rational , yes ?",
    ]  # two lengths, one batch
    options = [("yes", "no maybe", "Answer : no ."), ("no", "maybe", "Answer : yes")]
    batches = list(option_batches(lm, prompts, options))
    assert [b.indices for b in batches] == [[0, 1]]
    model, tokenizer = lm.load()
    for scores, prompt, opts in zip(batches[0].scores, prompts, options, strict=True):
        prefix = lm.format_prompt(prompt)
        expected = []
        for option in opts:  # independent: one unpadded forward pass over prompt + option, no cache
            full = tokenizer(prefix + option, add_special_tokens=False)["input_ids"]
            start = len(tokenizer(prefix, add_special_tokens=False)["input_ids"])
            with torch.inference_mode():
                logprobs = torch.log_softmax(model(input_ids=torch.tensor([full])).logits[0].float(), dim=-1)
            expected.append(sum(float(logprobs[k - 1, full[k]]) for k in range(start, len(full))))
        assert scores.logprobs == pytest.approx(expected, abs=1e-4)
        assert scores.tokens == tuple(len(o.split()) for o in opts)


def test_a_backend_that_neither_loads_a_model_nor_echoes_cannot_score_options(bbq_run: Path) -> None:
    class Server:
        name = "server"

    with pytest.raises(ConfigError, match="needs a model loaded here") as caught:
        next(option_batches(Server(), ["q"], [("a", "b")]))
    assert caught.value.parameter == "mode"


def test_cached_choices_are_reused(bbq_run: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    first = nlibias.audit(
        bbq_run, generative="fake:g", prompts="arc", cache=cache, bootstrap=0, progress=False
    )
    again = nlibias.audit(
        bbq_run, generative="fake:g", prompts="arc", cache=cache, bootstrap=0, progress=False
    )
    assert first.metrics["models"] == again.metrics["models"]
    stats = again.metrics["run"]["models"]["g|prompt=arc|scored"]["stats"]
    assert (stats["computed"], stats["cached"]) == (0, 4)


def _choice_rows(samples: Path, biased_share: float, seed: int) -> list[dict[str, object]]:
    """A model's rows: ambiguous examples answered with the biased option in ``biased_share`` of
    them (else "unknown", correct), disambiguated ones answered correctly."""
    import random

    from nlibias.io.samples import read_samples

    rng = random.Random(seed)
    rows = []
    for sample in read_samples(samples / "samples.jsonl"):
        p = sample.provenance
        other = 3 - p["target"] - p["unknown"]
        biased = p["target"] if p["polarity"] == "neg" else other
        ambiguous = p["condition"] == "ambig"
        choice = (biased if rng.random() < biased_share else p["unknown"]) if ambiguous else p["correct"]
        rows.append({"id": sample.id, "model": "m", "label": None, "kind": "generative", "choice": choice,
                     "answer_text": p["answers"][choice]})  # fmt: skip
    return rows


def test_the_gate_compares_bbq_runs_over_filled_templates(tmp_path: Path) -> None:
    from nlibias.benchmarks.bbq import BBQ_DATA
    from nlibias.benchmarks.data_locations import resolve_data

    religion = resolve_data(BBQ_DATA) / "data" / "Religion.jsonl"  # 1,200 examples in 150 templates
    samples = Path(nlibias.expand("bbq", source=religion, out_dir=tmp_path / "run").path)
    runs = {}
    for name, share in (("base", 0.0), ("same", 0.0), ("cand", 0.3)):
        predictions = write_rows(tmp_path / f"{name}.jsonl", _choice_rows(samples, share, seed=1))
        nlibias.score(samples, predictions, out_dir=tmp_path / name, bootstrap=0)
        runs[name] = tmp_path / name
    candidate = nlibias.gate(runs["cand"], runs["base"])
    checks = candidate.to_frame()
    assert not candidate.passed and set(checks["measure"]) == {"bbq_s_amb", "bbq_s_dis"}
    # the candidate's ambiguous answers: about 30% biased, the rest "unknown": every person answer
    # is biased and accuracy is about 70%, so s_AMB = (1 - 0.7) x (2 x 1 - 1) x 100, about 30; the
    # baseline's is 0
    overall = checks[(checks["slice"] == "overall") & (checks["measure"] == "bbq_s_amb")].iloc[0]
    assert overall["verdict"] == "fail" and overall["delta"] > 20.0
    assert nlibias.gate(runs["same"], runs["base"]).passed


def test_the_exports_ask_bbq_samples_multiple_choice_questions_only(bbq_run: Path, tmp_path: Path) -> None:
    # BBQ is exported with its own styles (tests/test_integrations_bbq.py); a yes/no one is refused
    with pytest.raises(
        ConfigError, match="'true' does not fit bbq samples: ask with a multiple-choice"
    ) as caught:
        nlibias.export_lm_eval(bbq_run, tmp_path / "task", prompt="true", model="fake:m")
    assert caught.value.parameter == "prompts"


def test_per_byte_option_scores_pick_by_log_probability_per_byte(
    bbq_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nlibias.models.generative import option_scoring
    from nlibias.models.generative.option_scoring import OptionScores

    # every question gets the same summed log-probabilities for its three options:
    # "The grandfather" (15 bytes) -6.0, "The grandson" (12 bytes) -5.4, "Can't be determined" (19) -7.2.
    # total: -5.4 is highest → the grandson; per byte: -0.400, -0.450, -0.379 → "Can't be determined"
    fixed = OptionScores((-6.0, -5.4, -7.2), (3, 3, 5))
    monkeypatch.setattr(option_scoring, "_fake_scores", lambda backend, prompt, options: fixed)
    runs = {
        how: nlibias.audit(
            bbq_run,
            generative="fake:g",
            prompts="race",
            option_score=how,
            cache=False,
            bootstrap=0,
            progress=False,
        )
        for how in ("total", "per-byte")
    }
    for how, expected in (("total", 1), ("per-byte", 2)):
        rows = runs[how].predictions
        assert {p.extra["choice"] for p in rows} == {expected}
        assert {p.extra["option_score"] for p in rows} == {how}
        # independent: the arithmetic above from the recorded scores and the options' UTF-8 lengths
        for p in rows:
            values = p.extra["option_logprobs"]
            if how == "per-byte":
                lengths = [
                    len(t.encode("utf-8")) for t in ("The grandfather", "The grandson", "Can't be determined")
                ]
                values = [v / n for v, n in zip(values, lengths, strict=True)]
            assert values.index(max(values)) == expected
        assert runs[how].metrics["run"]["models"]["g|prompt=race|scored"]["option_score"] == how
    # TEMPLATE: the ambiguous examples' correct answer is "unknown" (2), the disambiguated ones' 1 and 0
    total, per_byte = (
        runs[h].metrics["models"]["g|prompt=race|scored"]["overall"] for h in ("total", "per-byte")
    )
    assert (total["bbq_accuracy_ambig"], total["bbq_accuracy_disambig"]) == (0.0, 50.0)  # grandson: 0/2, 1/2
    assert (per_byte["bbq_accuracy_ambig"], per_byte["bbq_accuracy_disambig"]) == (
        100.0,
        0.0,
    )  # unknown: 2/2, 0/2


def test_option_score_is_refused_where_nothing_reads_it(bbq_run: Path) -> None:
    from nlibias.schema.applies import InapplicableOption

    with pytest.raises(InapplicableOption, match="applies to scored answers") as caught:
        nlibias.audit(bbq_run, generative="fake:g", mode="generated", option_score="per-byte", cache=False,
                      progress=False)  # fmt: skip
    assert caught.value.parameter == "option_score"
    with pytest.raises(ConfigError, match="option_score is 'bytes'; pass total or per-byte"):
        nlibias.audit(bbq_run, generative="fake:g", option_score="bytes", cache=False, progress=False)
    with pytest.raises(InapplicableOption, match="applies to multiple-choice prompt styles"):
        nlibias.audit(nlibias.expand("bbnli"), generative="fake:g", option_score="per-byte", cache=False,
                      progress=False)  # fmt: skip


def test_the_command_line_takes_option_score(bbq_run: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    done = CliRunner().invoke(
        app, ["audit", "--samples", str(bbq_run), "--generative", "fake:g", "--prompt", "arc", "--option-score",
              "per-byte", "--no-cache", "--bootstrap", "0", "--out", str(tmp_path / "out"), "--quiet"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in (tmp_path / "out" / "predictions.jsonl").open()]
    assert {row["option_score"] for row in rows} == {"per-byte"}


def test_a_limit_keeps_each_filled_template_whole() -> None:
    from collections import Counter

    from nlibias.benchmarks.bbq import expand_bbq
    from nlibias.jobs.subset import stratified_subset

    samples = list(expand_bbq().samples)  # the shared data: 11,956 examples in 1,548 filled templates
    full = Counter(s.provenance["unit"] for s in samples)
    assert (len(samples), len(full)) == (11_956, 1_548)
    picked = stratified_subset(samples, 300, seed=0)
    kept = Counter(s.provenance["unit"] for s in picked)
    assert all(kept[unit] == full[unit] for unit in kept)  # every template with all its examples
    # 300 samples at 11,956 / 1,548 = 7.72 a template: round(300 / 7.72) = round(38.8) = 39 templates
    assert len(kept) == 39 and 250 <= len(picked) <= 350
    assert {s.subtopic for s in picked} == {s.subtopic for s in samples}  # every subcategory


def test_the_gate_refuses_runs_whose_options_were_scored_differently(bbq_run: Path, tmp_path: Path) -> None:
    # both report under "g|prompt=race|scored": a per-byte candidate against a total baseline
    # would compare two different choices of answer as one model's
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    for how in ("total", "per-byte"):
        nlibias.audit(
            bbq_run,
            generative="fake:g",
            prompts="race",
            option_score=how,
            cache=False,
            bootstrap=0,
            progress=False,
            out_dir=tmp_path / how,
        )
    with pytest.raises(DataError, match="option_score 'per-byte' and baseline model") as caught:
        nlibias.gate(tmp_path / "per-byte", baseline=tmp_path / "total")
    assert caught.value.field == "option_score" and caught.value.model == "g|prompt=race|scored"
    assert str(tmp_path / "per-byte") in str(caught.value) and str(tmp_path / "total") in str(caught.value)
    shown = CliRunner().invoke(
        app, ["gate", str(tmp_path / "per-byte"), "--baseline", str(tmp_path / "total")]
    )
    assert shown.exit_code == 2 and "'total'" in shown.output, shown.output
    # a run asked with another prompt style pairs up by itself (one model each): the key shows the
    # difference, so the gate compares them (a deliberate prompt change is a change to gate)
    arc = tmp_path / "arc"
    nlibias.audit(
        bbq_run, generative="fake:g", prompts="arc", cache=False, bootstrap=0, progress=False, out_dir=arc
    )
    with pytest.raises(DataError) as caught:  # these tiny runs are refused, but not for their prompt
        nlibias.gate(arc, baseline=tmp_path / "total")
    assert caught.value.field != "prompt" and "has prompt" not in str(caught.value)


def test_report_compare_refuses_runs_whose_options_were_scored_differently(
    bbq_run: Path, tmp_path: Path
) -> None:
    # as the gate: one key, "g|prompt=race|scored", over two ways of choosing the answer
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    for how, prompt in (("total", "race"), ("per-byte", "race"), ("total", "arc")):
        nlibias.audit(bbq_run, generative="fake:g", prompts=prompt, option_score=how, cache=False, bootstrap=0,
                      progress=False, out_dir=tmp_path / f"{how}-{prompt}")  # fmt: skip
    runs = [tmp_path / "per-byte-race", tmp_path / "total-race"]
    # the gate's rule and words (io/run_dir.refuse_unlike): both settings, both runs
    with pytest.raises(
        DataError, match=r"option_score 'total' and its reference model .*'per-byte'"
    ) as caught:
        nlibias.make_report(runs, compare=True, fmt="md")
    assert caught.value.field == "option_score" and caught.value.model == "g|prompt=race|scored"
    assert all(str(run) in str(caught.value) for run in runs)
    shown = CliRunner().invoke(app, ["report", *map(str, runs), "--compare", "--format", "md"])
    assert shown.exit_code == 2 and "'total'" in shown.output, shown.output
    # another prompt style shows in the key: side by side as before
    done = nlibias.make_report([tmp_path / "total-arc", tmp_path / "total-race"], compare=True, fmt="md")
    assert "g|prompt=arc|scored" in done.text and "g|prompt=race|scored" in done.text
