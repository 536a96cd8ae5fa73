"""The audit's two inputs beside its samples: the models it asks for (ModelSet) and how it runs
(RunOptions), each read and checked once, before any file is read or model loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

import nlibias
from nlibias.errors import ConfigError
from nlibias.jobs.audit import audit_settings, run_audit
from nlibias.jobs.expand import expand_to_dir
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions, RunOptions
from nlibias.schema.applies import InapplicableOption
from nlibias.schema.model_ref import ModelRef


@pytest.mark.parametrize(
    ("settings", "parameter", "message"),
    [
        ({"seed": -1}, "seed", "seed is -1; pass an integer from 0 to 2**63 - 1"),
        ({"seed": True}, "seed", "seed is True; pass an integer"),
        ({"bootstrap": 2.5}, "bootstrap", "bootstrap is 2.5; pass 0 (no intervals)"),
        ({"bootstrap": 38}, "bootstrap", "bootstrap is 38; pass 0 (no intervals) or 39 or more resamples"),
        (
            {"bootstrap": 10**12},
            "bootstrap",
            "bootstrap is 1000000000000; pass 0 (no intervals) or 39 or more",
        ),
        ({"bootstrap": 1_000_001}, "bootstrap", "resamples, at most 1,000,000"),
        ({"limit": 0}, "limit", "limit is 0; pass a number of samples of at least 1"),
        ({"cache": 3}, "cache", "cache is 3; pass True, False, a file path (not blank) or a PredictionCache"),
        ({"cache": " "}, "cache", "cache is ' '; pass True, False, a file path (not blank)"),
        ({"progress": "yes"}, "progress", "progress is 'yes'; pass True or False"),
        ({"sed": 1}, "sed", "RunOptions takes no argument 'sed' (did you mean 'seed'?)"),
    ],
)
def test_run_options_refuse_bad_values_naming_the_setting(
    settings: dict[str, object], parameter: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        RunOptions.of(**settings)
    assert caught.value.parameter == parameter and message in str(caught.value)


def test_a_seed_with_nothing_drawn_is_refused_by_run_options_whoever_builds_them() -> None:
    with pytest.raises(InapplicableOption, match=r"^seed 3 applies to random draws") as caught:
        RunOptions(bootstrap=0, seed=3)
    assert caught.value.parameter == "seed"
    with pytest.raises(InapplicableOption):
        audit_settings({"bootstrap": 0, "seed": 3})
    assert RunOptions(bootstrap=0, limit=10, seed=3).seed == 3  # the subset is drawn with it
    assert RunOptions(bootstrap=0, seed=0).seed == 0  # the default is no seed given


def test_a_bad_limit_is_refused_before_the_samples_are_read(tmp_path: Path) -> None:
    # before, limit was checked only when the subset was drawn, after every sample had been read:
    # a missing samples file would have been named first
    with pytest.raises(ConfigError) as caught:
        nlibias.audit(tmp_path / "no-such-samples.jsonl", "fake:a", limit=0)
    assert caught.value.parameter == "limit"


@pytest.mark.parametrize(
    ("setting", "said"),
    [({"threads": 0}, "threads is 0; give"), ({"quantize": "int4"}, "quantize is 'int4'; give int8"),
     ({"compile": "yes"}, "compile is 'yes'; pass True or False")],
)  # fmt: skip
def test_a_bad_speed_setting_is_refused_before_the_samples_are_read(
    tmp_path: Path, setting: dict[str, object], said: str
) -> None:
    """Checked when the options are made, as max_tokens is (before, when the predictors were
    built, after every sample had been read and checked)."""
    with pytest.raises(ConfigError, match=said) as caught:
        nlibias.audit(tmp_path / "no-such-samples.jsonl", "fake:a", **setting)
    assert caught.value.parameter == next(iter(setting))


def test_run_audit_takes_the_objects_whole_and_refuses_anything_else(tmp_path: Path) -> None:
    expand_to_dir("occupations", tmp_path / "occ")
    with pytest.raises(ConfigError, match=r"^run is a dict; pass RunOptions\(\.\.\.\)"):
        run_audit(tmp_path / "occ", ["fake:a"], run={"cache": False})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"^options is a dict; pass ModelOptions\(\.\.\.\)"):
        run_audit(tmp_path / "occ", ["fake:a"], options={"device": "cpu"})  # type: ignore[arg-type]
    quiet = RunOptions(cache=False, bootstrap=0, progress=False)
    by_list = run_audit(tmp_path / "occ", ["fake:a"], run=quiet)
    by_set = run_audit(tmp_path / "occ", ModelSet.of("fake:a"), run=quiet)
    by_api = nlibias.audit(tmp_path / "occ", "fake:a", cache=False, bootstrap=0, progress=False)
    # S for the fake on the shipped premises, as the module docstring of jobs/audit.py shows
    assert by_list.metrics["models"] == by_set.metrics["models"] == by_api.metrics["models"]
    assert round(by_list.metrics["models"]["a"]["overall"]["S"], 2) == 49.91


def test_audit_settings_split_run_model_and_own_keywords() -> None:
    # limit: the seed draws the subset (with bootstrap 0 and no limit, it would apply to nothing)
    own, run, options = audit_settings({"device": "cpu", "seed": 3, "note": "n"}, bootstrap=0, limit=10)
    assert own == {"note": "n"}
    assert (run.seed, run.bootstrap, run.cache) == (3, 0, True)
    assert options == ModelOptions(device="cpu")
    # a keyword the caller gives beats the caller's default (debias passes its bootstrap beneath)
    assert audit_settings({"bootstrap": 50}, bootstrap=0)[1].bootstrap == 50


def test_model_set_reads_each_field_once_and_names_its_kinds() -> None:
    models = ModelSet.of(
        ["fake:a", "roberta-large-mnli"], "openai:http://h/v1#m", "true", mlm="bert-base-uncased",
        causal=["gpt2", "openai:http://h/v1#c"], tp_variants="whole",
    )  # fmt: skip
    assert [style.name for style in models.prompts] == ["true"] and models.tp_variants == ("whole",)
    assert models.kinds() == [
        ("models", "classifier"), ("generative", "generative"), ("mlm", "sentence-logprob"),
        ("causal", "sentence-logprob"),
    ]  # fmt: skip
    assert [str(ref) for ref in models.servers()] == ["openai:http://h/v1#m", "openai:http://h/v1#c"]
    # what a dtype applies to: no fake, no server
    assert [str(ref) for ref in models.loading_weights_here()] == [
        "roberta-large-mnli",
        "gpt2",
        "bert-base-uncased",
    ]
    assert ModelSet.of(models) == models and not ModelSet() and bool(ModelSet.of(mlm="m"))
    # each name is read once, into the reference every builder takes; a reference given is kept
    assert models.causal == (ModelRef("", "gpt2"), ModelRef("openai", "http://h/v1#c"))
    assert ModelSet.of(ModelRef.parse("fake:a"), generative=ModelRef("", "smollm2")) == ModelSet.of(
        "fake:a", "smollm2"
    )
    with pytest.raises(ConfigError, match=r"^generative: 'fake:' names no model") as caught:
        ModelSet.of(generative="fake:")
    assert caught.value.parameter == "generative"
    # a reference names a model: in prompts or tp_variants it is refused as an int is (it was read
    # as its text, so ModelRef("", "true") asked for the prompt style 'true')
    for field, value in (("prompts", ModelRef("", "true")), ("tp_variants", [ModelRef("", "whole")])):
        with pytest.raises(ConfigError, match=rf"^{field} must be names \(strings\)") as caught:
            ModelSet.of(generative="fake:g", causal="fake:c", **{field: value})
        assert caught.value.parameter == field


@pytest.mark.parametrize(
    ("asked", "options", "parameter"),
    [
        ({"generative": "fake:g", "prompts": "/no/such/prompts.yaml"}, {}, "prompts"),
        ({"causal": "fake:c", "tp_variants": "wholes"}, {}, "tp_variants"),
        ({"generative": "fake:g"}, {"concurrency": 2}, "concurrency"),
        ({"generative": "fake:g"}, {"mode": "greedy"}, "mode"),
    ],
)
def test_every_model_input_is_refused_before_the_first_classifier_loads(
    asked: dict[str, str], options: dict[str, object], parameter: str
) -> None:
    from nlibias.runtime.build import build_predictors

    # the classifier is named first and is no model (a hub id neither cached nor reachable): had it
    # been built first, its loading would be the error (before, a bad prompt file or concurrency
    # was refused only after every classifier had loaded, minutes into a real audit)
    with pytest.raises(ConfigError) as caught:
        build_predictors(
            ModelSet.of(["nlibias-tests/no-such-classifier"], **asked), options=ModelOptions.of(**options)
        )
    assert caught.value.parameter == parameter


def test_audit_takes_prompt_styles_already_read(tmp_path: Path) -> None:
    """``nlibias.audit`` passes PromptStyle objects (a notebook's own prompt) as ModelSet.of does;
    its argument check once refused anything but names."""
    from nlibias.models.generative.prompts import PromptStyle

    expand_to_dir("bbnli", tmp_path / "bb")
    short = PromptStyle("short", "{premise}\nIs it true that {hypothesis}? Answer yes or no.")
    result = nlibias.audit(
        tmp_path / "bb", generative="fake:g", prompts=[short, "true"], cache=False, bootstrap=0,
        limit=40, progress=False,
    )  # fmt: skip
    assert sorted(result.metrics["models"]) == ["g|prompt=short|scored", "g|prompt=true|scored"]
    with pytest.raises(ConfigError, match="prompts must be str, PromptStyle or a sequence"):
        nlibias.audit(tmp_path / "bb", generative="fake:g", prompts=[3], cache=False)  # type: ignore[list-item]


def test_a_model_set_made_directly_is_read_when_it_is_used() -> None:
    """``ModelSet(generative=...)`` (not ``of``) holds no styles read: the builder checks it again
    and asks the paper's two styles, instead of building no generative predictor at all."""
    from nlibias.runtime.build import build_predictors

    direct = ModelSet(generative=("fake:g",))
    names = [p.name for p in build_predictors(direct)]
    assert names == ["g|prompt=true|scored", "g|prompt=entailed|scored"]
    made = ModelSet.of(["fake:a"], "fake:g", "true")
    assert ModelSet.of(made) == made  # a set made by of passes as it was


def test_model_set_reads_its_prompt_styles_when_it_is_made(tmp_path: Path) -> None:
    from nlibias.models.generative.prompts import PROMPT_STYLES, PromptStyle

    mine = tmp_path / "mine.txt"
    mine.write_text("{premise}\nIs it true that {hypothesis}? Answer yes or no.", encoding="utf-8")
    models = ModelSet.of(generative="fake:g", prompts=["entailed", str(mine)])
    assert [(s.name, s.origin) for s in models.prompts] == [("entailed", "builtin"), ("mine", str(mine))]
    assert ModelSet.of(generative="fake:g").prompts == tuple(PROMPT_STYLES.values())  # none: the paper's two
    assert not ModelSet.of(["fake:a"]).prompts
    # styles already read pass as they are, beside names; each style once
    short = PromptStyle("short", "{premise} / {hypothesis}?")
    assert ModelSet.of(generative="fake:g", prompts=[short, "true"]).prompts == (short, PROMPT_STYLES["true"])
    assert ModelSet.of(generative="fake:g", prompts=short).prompts == (short,)
    with pytest.raises(ConfigError, match="prompt style 'true' given twice") as twice:
        ModelSet.of(generative="fake:g", prompts=[PROMPT_STYLES["true"], "true"])
    assert twice.value.parameter == "prompts"
    # prompts with no generative LM: refused before any file is read
    with pytest.raises(
        ConfigError, match=r"^a prompt style applies to generative models; name one in"
    ) as none:
        ModelSet.of(["fake:a"], prompts=["/no/such/prompts.yaml"])
    assert none.value.parameter == "prompts"
    assert hash(models) == hash(ModelSet.of(generative="fake:g", prompts=["entailed", str(mine)]))


def test_a_model_that_fails_to_load_stops_the_ones_built_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first classifier started worker processes; the second fails to load: the first is
    closed before the error goes on (before, its workers ran on until the process ended). The
    caller's own predictor object is left for the caller to close."""
    import nlibias.runtime.build as build

    closed: list[str] = []

    class Closable:  # a predictor (its protocol's members) with something to stop
        kind = "classifier"

        def __init__(self, name: str) -> None:
            self.name = name

        def describe(self) -> dict[str, str]:
            return {}

        def predict(self, *_: object, **__: object) -> None:
            raise AssertionError("nothing is predicted here")

        def close(self) -> None:
            closed.append(self.name)

    def fake_classifier(ref: ModelRef, *_: object) -> object:
        if ref.name == "broken":
            raise ConfigError("cannot load the NLI model 'broken'", parameter="models")
        return Closable(ref.name)

    monkeypatch.setattr(build, "_classifier", fake_classifier)
    monkeypatch.setattr(build, "_check_options", lambda *_: None)
    own = Closable("own")
    with pytest.raises(ConfigError, match="broken"):
        build.build_predictors(ModelSet(models=(own, ModelRef("hf", "first"), ModelRef("hf", "broken"))))
    assert closed == ["first"]


def test_a_label_map_with_classifiers_given_only_as_objects_says_so() -> None:
    """The refusal said "no NLI classifier is named in models: generative and sentence-scoring
    models have no label ids" for an audit whose classifiers are objects, and for explain's judges
    (which are no models at all)."""
    from nlibias.jobs.explain import _judges
    from nlibias.models.fake import FakeNLIClassifier
    from nlibias.runtime.build import build_predictors
    from nlibias.runtime.classifier import ClassifierPredictor

    said = "every classifier given is an object, used as it is (a label map is read when a classifier is loaded by name)"
    options = ModelOptions.of(label_map="0=entailment,1=neutral,2=contradiction")
    with pytest.raises(ConfigError) as caught:
        build_predictors(ModelSet.of([ClassifierPredictor(FakeNLIClassifier("j"))]), options=options)
    assert said in str(caught.value) and caught.value.names == ("models",)
    with pytest.raises(ConfigError) as caught:
        _judges([FakeNLIClassifier("j")], options)
    assert said in str(caught.value) and caught.value.names == ("judges",)
