"""Rules declared once (issue #48): the constrained types of schema/declared.py held by pydantic's
validate_call on the public functions, one adapter naming the parameter; what an option applies
to declared on its type (schema/applies.py) and refused by one function for the command line and
Python alike; a model's role read from its reference (schema/model_ref.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, ValidationError
from typer.testing import CliRunner

import nlibias
from nlibias.cli.main import app
from nlibias.errors import ConfigError
from nlibias.schema.applies import InapplicableOption
from nlibias.schema.declared import OpenUnit, PositiveInt, Seed, Share, declared, describe
from nlibias.schema.model_ref import ModelRef
from nlibias.schema.problems import problems, source_error

runner = CliRunner()


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("s")
    nlibias.expand("occupations", out_dir=out)
    return out / "samples.jsonl"


@pytest.fixture(scope="module")
def predictions(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("run")
    nlibias.audit(samples, ["fake:a"], cache=False, bootstrap=0, progress=False, out_dir=run)
    return run / "predictions.jsonl"


# -- values: each refused naming its parameter ------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "parameter", "said"),
    [
        ({"threshold": "0.5"}, "threshold", "got str '0.5'"),
        ({"threshold": math.inf}, "threshold", "between 0 and 1"),
        ({"threshold": 0.0}, "threshold", "not 0 (no share falls below 0)"),  # it would flag nothing
        ({"bootstrap": True}, "bootstrap", "got bool True"),
        ({"lm_judge": 5}, "lm_judge", "got int 5"),  # was an AttributeError
        ({"samples": 123}, "samples", "got int 123"),  # was a bare TypeError
        ({"seed": -1}, "seed", "from 0 to 2**63 - 1"),
        ({"lm_judge_max_new_tokens": 0}, "lm_judge_max_new_tokens", "at least 1"),
        ({"treshold": 0.5}, "treshold", "did you mean 'threshold'?"),
    ],
)
def test_explain_refuses_a_bad_value_naming_the_parameter(
    tmp_path: Path, options: dict[str, Any], parameter: str, said: str
) -> None:
    # the run does not exist: each value is refused before any file is read
    with pytest.raises(ConfigError) as caught:
        nlibias.explain(tmp_path / "no-run", ["fake:j"], **options)
    assert caught.value.parameter == parameter and said in str(caught.value), str(caught.value)


@pytest.mark.parametrize("margin", [math.inf, -1.0, True, "1"])
def test_gate_refuses_a_margin_that_is_no_finite_number_of_points(tmp_path: Path, margin: object) -> None:
    with pytest.raises(ConfigError) as caught:
        nlibias.gate(tmp_path / "c", tmp_path / "b", margin=margin)  # type: ignore[arg-type]
    assert caught.value.parameter == "margin"


def test_gate_takes_the_rules_object_its_job_takes(tmp_path: Path) -> None:
    from nlibias.errors import NlibiasError
    from nlibias.jobs.gate_rules import GateRules

    # the declared parameters take a GateRules (the argument checker refused it): what fails now is
    # the missing run, not the rules
    with pytest.raises(NlibiasError) as caught:
        nlibias.gate(tmp_path / "c", tmp_path / "b", rules=GateRules())
    assert getattr(caught.value, "parameter", None) != "rules", str(caught.value)


def test_a_finite_float_refuses_infinity_and_nan_from_the_command_line(tmp_path: Path) -> None:
    for value in ("inf", "nan", "1e309"):
        result = runner.invoke(app, ["explain", str(tmp_path), "--judge", "fake:j", "--threshold", value])
        assert result.exit_code == 2 and "--threshold" in result.output, result.output


@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers() | st.booleans() | st.text(max_size=3))
def test_a_declared_open_interval_takes_exactly_the_numbers_inside_it(value: object) -> None:
    @declared
    def confidence(level: OpenUnit) -> float:
        return level

    inside = isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1
    if inside:
        assert confidence(value) == value  # type: ignore[arg-type]
    else:
        with pytest.raises(ConfigError) as caught:
            confidence(value)  # type: ignore[arg-type]
        assert caught.value.parameter == "level"


def test_constraints_are_said_in_words() -> None:
    assert describe(PositiveInt) == "an int of at least 1"
    assert describe(Seed | None) == "an integer from 0 to 2**63 - 1 or None"
    assert describe(Share) == "a share between 0 and 1"


# -- options that apply to nothing -------------------------------------------------------------------


def test_a_seed_with_nothing_drawn_is_refused_by_audit_score_and_explain(
    samples: Path, predictions: Path, tmp_path: Path
) -> None:
    attempts = [
        lambda: nlibias.audit(samples, ["fake:a"], cache=False, bootstrap=0, seed=3, progress=False),
        lambda: nlibias.score(samples, predictions, bootstrap=0, seed=3),
        lambda: nlibias.explain(tmp_path / "no-run", ["fake:j"], bootstrap=0, seed=3),
    ]
    for attempt in attempts:
        with pytest.raises(InapplicableOption) as caught:
            attempt()
        assert caught.value.parameter == "seed"
    # a seed with a limit seeds the subset; the default seed with no bootstrap is no option given
    limited = nlibias.audit(samples, ["fake:a"], cache=False, bootstrap=0, seed=3, limit=60, progress=False)
    assert limited.metrics["subset"]["seed"] == 3
    assert nlibias.score(samples, predictions, bootstrap=0, seed=0).metrics["run"]["samples_scored"] == 6840


@pytest.mark.parametrize(
    ("command", "args", "flag"),
    [
        ("audit", ["--model", "fake:a", "--no-cache", "--bootstrap", "0", "--seed", "3"], "--seed"),
        (
            "audit",
            ["--model", "fake:a", "--no-cache", "--bootstrap", "0", "--by", "subtopic", "--json"],
            "--by",
        ),
        ("audit", ["--model", "fake:a", "--no-cache", "--bootstrap", "0", "--limit", "6840"], "--limit"),
        ("score", ["--bootstrap", "0", "--seed", "1"], "--seed"),
        ("score", ["--bootstrap", "0", "--by", "subtopic", "--json"], "--by"),
    ],
)
def test_the_command_line_refuses_an_option_that_applies_to_nothing(
    samples: Path, predictions: Path, tmp_path: Path, command: str, args: list[str], flag: str
) -> None:
    extra = ["--predictions", str(predictions)] if command == "score" else ["--out", str(tmp_path / "o")]
    result = runner.invoke(app, [command, "--samples", str(samples), *extra, *args])
    assert result.exit_code == 2, result.output
    assert f"error: {flag} " in result.output and "applies to" in result.output, result.output
    assert not (tmp_path / "o").exists()


def test_a_limit_of_every_sample_is_not_announced_as_a_subset(samples: Path) -> None:
    # 6,840 occupations samples: a "subset" of 6,840 would be reported as not the full set's
    with pytest.raises(InapplicableOption, match="there are 6840 samples") as caught:
        nlibias.audit(samples, ["fake:a"], cache=False, bootstrap=0, limit=6840, progress=False)
    assert caught.value.parameter == "limit"


# -- roles -------------------------------------------------------------------------------------------


def _model_dir(tmp_path: Path, architecture: str) -> Path:
    folder = tmp_path / architecture
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"architectures": [architecture]}), encoding="utf-8")
    return folder


def test_a_judge_must_be_a_classifier_and_an_lm_judge_a_generative_lm(tmp_path: Path) -> None:
    classifier = _model_dir(tmp_path, "RobertaForSequenceClassification")
    generative = _model_dir(tmp_path, "LlamaForCausalLM")
    assert ModelRef.unread(str(classifier)).role == "classifier"
    assert ModelRef.unread(str(generative)).role == "generative"
    attempts = [
        ("judges", {"judges": ["smollm2"]}),  # was reported as a failed hub download
        ("judges", {"judges": [str(generative)]}),
        ("lm_judge", {"judges": ["fake:j"], "lm_judge": str(classifier)}),  # was loaded with an LM head
        ("lm_judge", {"judges": ["fake:j"], "lm_judge": "prompt:smollm2"}),
    ]
    for parameter, arguments in attempts:
        with pytest.raises(ConfigError) as caught:
            nlibias.explain(tmp_path / "no-run", **arguments)
        assert caught.value.parameter == parameter, str(caught.value)
        assert "generative LM" in str(caught.value) and "NLI classifier" in str(caught.value)
    result = runner.invoke(
        app, ["explain", str(tmp_path), "--judge", "fake:j", "--lm-judge", str(classifier)]
    )
    assert result.exit_code == 2 and "--lm-judge takes a generative LM" in result.output, result.output
    result = runner.invoke(app, ["explain", str(tmp_path), "--judge", "smollm2"])
    assert result.exit_code == 2 and "--judge takes an NLI classifier" in result.output, result.output


def test_an_audit_asks_each_model_in_its_role(samples: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        nlibias.audit(samples, ["smollm2"], cache=False, progress=False)
    assert caught.value.parameter == "models" and "name it in generative" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        nlibias.audit(samples, generative=["prompt:smollm2"], cache=False, progress=False)
    assert caught.value.parameter == "generative"


def test_a_masked_lm_is_asked_in_no_other_role(samples: Path, tmp_path: Path) -> None:
    masked = tmp_path / "masked-lm"
    masked.mkdir()
    (masked / "config.json").write_text(json.dumps({"architectures": ["BertForMaskedLM"]}))
    for field in ("models", "generative"):
        with pytest.raises(ConfigError) as caught:
            nlibias.audit(samples, cache=False, progress=False, **{field: [str(masked)]})  # type: ignore[arg-type]
        assert caught.value.parameter == field and "is a masked LM (name it in mlm)" in str(caught.value)


def test_a_sentence_scorer_is_asked_in_its_role(tmp_path: Path) -> None:
    from nlibias.runtime.model_set import ModelSet

    folders = {}
    for architecture in ("RobertaForSequenceClassification", "BertForMaskedLM", "GPT2LMHeadModel"):
        folders[architecture] = tmp_path / architecture
        folders[architecture].mkdir()
        (folders[architecture] / "config.json").write_text(json.dumps({"architectures": [architecture]}))
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + bytes(60))
    wrong = [
        ("mlm", "openai-completions:http://127.0.0.1:9/v1#m", "is a generative LM (name it in causal)"),
        ("mlm", f"gguf:{gguf}", "is a generative LM (name it in causal)"),
        ("mlm", str(folders["GPT2LMHeadModel"]), "is a generative LM (name it in causal)"),
        (
            "causal",
            str(folders["RobertaForSequenceClassification"]),
            "is an NLI classifier (name it in models)",
        ),
        ("causal", str(folders["BertForMaskedLM"]), "is a masked LM (name it in mlm)"),
        ("causal", "mlm:org/m", "is a masked LM by its mlm: prefix (name it in mlm)"),
    ]
    for field, reference, said in wrong:
        with pytest.raises(ConfigError) as caught:
            ModelSet.of(**{field: reference})  # type: ignore[arg-type]
        assert caught.value.parameter == field and said in str(caught.value), str(caught.value)
    right = ModelSet.of(
        mlm=[str(folders["BertForMaskedLM"]), "mlm:org/m"],
        causal=[str(folders["GPT2LMHeadModel"]), f"gguf:{gguf}", "openai-completions:http://h/v1#m"],
    )
    assert len(right.mlm) == 2 and len(right.causal) == 3


# -- declared where the checks were written by hand ------------------------------------------------


def test_debias_refuses_an_infinite_min_effect_and_a_count_that_is_no_count(tmp_path: Path) -> None:
    from nlibias.jobs.debias_compare import compare_debiasing

    # inf >= 0 passed the hand-written check: no difference could ever be marked as a change
    with pytest.raises(ConfigError) as caught:
        compare_debiasing(tmp_path, min_effect=math.inf)
    assert caught.value.parameter == "min_effect"
    for setting in ({"seeds": 0}, {"seeds": True}, {"bootstrap": -1}, {"min_effect": math.nan}):
        with pytest.raises(ConfigError) as caught:
            nlibias.debias_models("m", tmp_path / "t.jsonl", tmp_path / "o", **setting)  # type: ignore[arg-type]
        assert caught.value.parameter == next(iter(setting))
        assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("setting", "allowed"),
    [
        ({"learning_rate": math.inf}, "a finite float more than 0"),
        ({"epochs": 0.0}, "a finite float more than 0"),
        ({"max_steps": 0}, "-1 (run all epochs) or a whole number of at least 1"),
        ({"seed": 2**32}, "from 0 to 2**32 - 1"),
        ({"warmup_ratio": 1.0}, "less than 1"),
        ({"lr_scheduler": "cyclic"}, "one of 'linear'"),
        ({"batch_size": True}, "got bool True"),
    ],
)
def test_training_options_are_held_to_their_declared_types(setting: dict[str, object], allowed: str) -> None:
    from nlibias.debias.finetune_checks import check_options

    valid: dict[str, Any] = {
        "learning_rate": 2e-5, "epochs": 3, "batch_size": 32, "max_length": 128, "max_steps": -1,
        "save_steps": 500, "seed": 42, "warmup_steps": 0, "warmup_ratio": 0, "lr_scheduler": "linear",
    }  # fmt: skip
    check_options(**valid)  # an int where a float is declared is a number all the same
    with pytest.raises(ConfigError) as caught:
        check_options(**{**valid, **setting})
    assert caught.value.parameter == next(iter(setting)) and allowed in str(caught.value), str(caught.value)


def test_prescreen_asks_each_judge_in_its_role(tmp_path: Path) -> None:
    from nlibias.validation.prescreen import run_prescreen

    classifier = _model_dir(tmp_path, "BertForSequenceClassification")
    for arguments, parameter in (
        ({"judge": "smollm2"}, "judge"),
        ({"lm_judge": str(classifier)}, "lm_judge"),
    ):
        with pytest.raises(ConfigError) as caught:
            run_prescreen(tmp_path / "no-run", **arguments)  # refused before the queue is read
        assert caught.value.parameter == parameter, str(caught.value)


def test_what_a_model_option_applies_to_is_declared_on_its_field() -> None:
    from nlibias.runtime.options import ModelOptions
    from nlibias.schema.applies import RAY_APPLIES, applies_rules
    from nlibias.schema.declared import field_hints

    assert applies_rules(field_hints(ModelOptions)["ray_workers"]) == [RAY_APPLIES]
    with pytest.raises(InapplicableOption) as caught:
        ModelOptions.of(ray_gpus_per_worker=1.0)
    assert caught.value.parameter == "ray_gpus_per_worker" and caught.value.names == ("ray_address",)
    assert ModelOptions.of(ray_address="local", ray_gpus_per_worker=1.0).ray_gpus_per_worker == 1.0
    with pytest.raises(ConfigError, match=r"^ray_gpus_per_worker is inf; pass a finite float of at least 0"):
        ModelOptions.of(ray_address="local", ray_gpus_per_worker=math.inf)


def test_a_hub_model_in_the_local_cache_is_asked_in_its_role(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a hub name is read from the hub cache's config.json (never fetched): an NLI classifier
    # downloaded before is refused as the LM judge, a name not in the cache is left to the loader
    snapshot = tmp_path / "hub" / "models--org--nli" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(
        json.dumps({"architectures": ["DebertaV2ForSequenceClassification"]})
    )
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert ModelRef.unread("org/nli").role == "classifier"
    assert ModelRef.unread("org/nli@v1").role == "classifier"
    assert ModelRef.unread("org/elsewhere").role is None
    with pytest.raises(ConfigError) as caught:
        nlibias.explain(tmp_path / "no-run", ["fake:j"], lm_judge="org/nli")
    assert caught.value.parameter == "lm_judge"


def test_one_adapter_names_the_file_line_field_and_fix_of_every_route() -> None:
    """A JSONL row's error and a YAML file's error go through one adapter (schema/declared.py):
    the row keeps the line it was read from, the YAML names each problem's own line, every
    problem is said (not only the first), and an unknown key is named with the closest known."""

    class Row(BaseModel):
        model_config = ConfigDict(extra="forbid")
        top_k: PositiveInt
        name: str

    with pytest.raises(ValidationError) as row:
        Row.model_validate({"top_k": 0, "name": 3})
    error = source_error(row.value, "rows.jsonl", line=7, fix="see the docs")
    assert (error.line, error.field, error.fix) == (7, "top_k", "see the docs")
    assert "\nrows.jsonl:7: field name: Input should be a valid string" in error.reason

    yaml_text = "name: x\ntop_kk: 3\n"
    with pytest.raises(ValidationError) as file:
        Row.model_validate({"name": "x", "top_kk": 3})
    found = problems(file.value, text=yaml_text, known_keys=lambda loc: list(Row.model_fields))
    assert [(p.line, p.field) for p in found] == [(None, "top_k"), (2, None)]
    assert found[1].reason == "unknown key 'top_kk'; did you mean 'top_k'? (known here: top_k, name)"
